"""``dlbkit describe FILE``: what dlbkit reads from a workload or platform file (:mod:`dlbkit.face.describe`),
as aligned ``field  value`` lines with units, or ``--json`` one object of the same facts."""

from __future__ import annotations

import argparse
import json

from dlbkit.face.cli.options import add_import, add_json
from dlbkit.face.cli.output import jsonable, warnings_in_one_line

__all__ = ["DESCRIPTION", "HELP", "arguments", "command", "shown"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit describe --help``
HELP = "say what dlbkit reads from a workload or platform file"
DESCRIPTION = ("Read FILE as dlbkit would (a task graph: .json, WfFormat .json, .stg, .adg, a Pegasus .dax or .xml; a job stream: .swf, "
               "arrivals .csv; a platform: .toml, SimGrid .xml, the thesis's .ntp) and print what it holds: "
               "counts, totals, critical path and width of a graph, span and offered load of a stream, hosts, "
               "speeds and network of a platform. --json prints the same facts as one JSON object.")

#: the decimal prefixes of the units printed with one (bytes, bytes/s, flop/s), by power of 1000
_PREFIXES = ("", "k", "M", "G", "T", "P", "E")
_SCALED = ("B", "B/s", "flop/s")


def arguments(d: argparse.ArgumentParser) -> None:
    """``describe``'s arguments."""
    d.add_argument("file", metavar="FILE", help="a workload or platform file")
    add_json(d, "one JSON object: file, kind, reader, each fact by its key, units")
    add_import(d)  # a family declared outside dlbkit adds its kinds of file when its module is imported
    d.set_defaults(func=command)


def shown(value, unit: str = "", none: str = "none") -> str:
    """*value* as the text prints it: a number with its unit (bytes, bytes/s and flop/s with a decimal prefix,
    ``1.5 kB``), a list of them comma-separated, None as *none*.

    >>> shown(475, "B"), shown(1500, "B"), shown(2e9, "flop/s"), shown(0.5, "s"), shown(None, "s", "none recorded")
    ('475 B', '1.5 kB', '2 Gflop/s', '0.5 s', 'none recorded')
    """
    if value is None:
        return none
    if isinstance(value, (list, tuple)):
        if not value:
            return none
        if unit in _SCALED:
            return ", ".join(shown(v, unit) for v in value)
        return ", ".join(shown(v) for v in value) + (f" {unit}" if unit else "")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value}{f' {unit}' if unit else ''}"
    if unit in _SCALED:
        k = 0
        while abs(value) >= 1000 and k < len(_PREFIXES) - 1:
            value /= 1000
            k += 1
        return f"{value:.4g} {_PREFIXES[k]}{unit}"
    text = f"{value:,}" if isinstance(value, int) else f"{value:.6g}"
    return f"{text} {unit}" if unit else text


def command(args) -> int:
    """``dlbkit describe``: the file's kind and facts, as text or JSON."""
    from dlbkit.face.describe import describe

    with warnings_in_one_line(0):  # a SimGrid file's averaged routes, what it does not map: one line each
        d = describe(args.file)
    if args.json:
        print(json.dumps(jsonable(d.as_dict()), ensure_ascii=False))
        return 0
    print(f"{d.path}: {d.kind}, read by {d.reader}")
    width = max(len(f.label) for f in d.facts)
    for f in d.facts:
        print(f"  {f.label:<{width}}  {shown(f.value, f.unit, f.none)}")
    return 0
