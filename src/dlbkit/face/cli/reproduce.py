"""``dlbkit reproduce NAME``: each claim of a source document, its value and ours, the tolerance and
PASS/FAIL (exit status 1 when an asserted claim fails)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from dlbkit.face.cli.options import add_json
from dlbkit.face.cli.output import jsonable, one_line, wrapped_table

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit reproduce --help``
HELP = "check a source document's published claims"
DESCRIPTION = ("Print each claim of a reproduction: the document's value, ours, the "
               "tolerance and PASS/FAIL for an asserted claim, '—' for a claim reported "
               "for the reader only. Exit status 0 if every asserted claim passes, 1 "
               "otherwise. --json: a list of objects with the keys claim, paper, ours, "
               "tolerance, asserted (true/false) and ok (true/false; null when not "
               "asserted).")


def arguments(r: argparse.ArgumentParser) -> None:
    """``reproduce``'s arguments (the names: :data:`dlbkit.face.reproduce.REPRODUCTIONS`)."""
    from dlbkit.face.reproduce import REPRODUCTIONS

    r.add_argument("name", metavar="NAME", help="reproduction name: " + ", ".join(sorted(REPRODUCTIONS)))
    add_json(r, "a JSON list of objects: claim, paper, ours, tolerance, asserted, ok (null if not asserted)")
    r.set_defaults(func=command)


def _fmt(v: Any) -> str:
    """A claim's value in a table cell: a float to 6 significant digits, numpy scalars as Python's."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict)):
        return _fmt(v.item())
    return str(v)


def command(args) -> int:
    """``dlbkit reproduce``: the claims as a table or JSON; 0 when every asserted one passes, else 1."""
    from dlbkit.face.reproduce import JSON_SCHEMA, run

    claims = [c.as_dict() for c in run(args.name)]
    checked = [c for c in claims if c["asserted"]]
    all_ok = all(c["ok"] for c in checked)
    if args.json:
        print(json.dumps([{k: jsonable(c[k]) for k in JSON_SCHEMA} for c in claims], indent=2,
                         ensure_ascii=False))
        return 0 if all_ok else 1
    header = ["claim", "paper", "ours", "tolerance", "result"]
    rows = [[one_line(str(c["claim"])), _fmt(c["paper"]), _fmt(c["ours"]), str(c["tolerance"]),
             "PASS" if c["ok"] else "FAIL" if c["asserted"] else "—"] for c in claims]
    print(wrapped_table(header, rows, [52, 26, 26, 26, 6]))
    n_ok = sum(bool(c["ok"]) for c in checked)
    print(f"\n{args.name}: {n_ok} of {len(checked)} asserted claims reproduced within tolerance"
          + (f" ({len(claims) - len(checked)} more reported, not asserted)" if len(claims) > len(checked) else ""))
    return 0 if all_ok else 1
