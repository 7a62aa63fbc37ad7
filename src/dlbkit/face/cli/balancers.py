"""``dlbkit balancers [--kind KIND] [--json]``: every registered balancer with its kind, parameters
(defaults), taxonomy and source, its docstring's summary as plain text."""

from __future__ import annotations

import argparse
import inspect
import json
import re

from dlbkit.errors import ConfigError, closest
from dlbkit.face.cli.options import add_import, add_json
from dlbkit.face.cli.output import jsonable, one_line

__all__ = ["HELP", "DESCRIPTION", "arguments", "command", "KINDS", "balancer_kinds", "plain_text",
           "balancer_info"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit balancers --help``
HELP = "list the registered balancers"
DESCRIPTION = ("Every registered balancer with its kind, parameters (defaults), "
               "taxonomy and source.")

#: the order in which ``--kind`` and ``dlbkit balancers`` list the kinds of balancer (docs/design.md)
KINDS = ("chunking", "placement", "migration", "repartition", "mapping", "graph-online")


def balancer_kinds() -> list[str]:
    """The kinds of KINDS that have at least one registered balancer (what ``--kind`` offers)."""
    from dlbkit.balancers import registry

    have = {c.kind for c in registry.REGISTRY.values()}
    return [k for k in KINDS if k in have] + sorted(have - set(KINDS))


def arguments(b: argparse.ArgumentParser) -> None:
    """``balancers``' arguments (``--kind`` lists the kinds registered: the registry is read)."""
    add_json(b, "a JSON list of objects")
    b.add_argument("--kind", metavar="KIND", help="only balancers of this kind: " + ", ".join(balancer_kinds()))
    add_import(b)
    b.set_defaults(func=command)


def _summary_line(doc: str | None) -> str:
    """The docstring's summary: its first paragraph, on one line."""
    text = inspect.cleandoc(doc or "")
    return one_line(text.split("\n\n", 1)[0]) if text else ""


_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")  # :class:`~a.b.C` (or `text <target>`)
_UNSHIPPED = re.compile(r"\b(?:notes|benchmarks|docs)/[\w./-]+\.md\b|\b(?:MODELS|DESIGN|BENCHMARKS)\.md\b")


def plain_text(text: str) -> str:
    """A docstring's reST as plain text for a terminal: roles (``:class:`~a.b.C``` → ``C``), literals
    (````x```` → ``x``) and emphasis (``*x*`` → ``x``) unmarked; references to files that are not
    installed with dlbkit (the repository's notes and benchmark pages) dropped."""
    def role(m: re.Match) -> str:
        target = m.group(1).strip()
        whole = m.group(0)
        return target.rsplit(".", 1)[-1] if ":`~" in whole else target

    text = _ROLE.sub(role, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"\1", text)
    # "...; notes/x.md §3" and "(see MODELS.md M1)": drop the reference with what qualifies it
    text = re.sub(r"\s*\((?:see |as in |cf\. )?[^()]*?(?:" + _UNSHIPPED.pattern + r")[^()]*\)", "", text)
    parts = [p for p in re.split(r";\s*", text) if not _UNSHIPPED.search(p)]
    text = "; ".join(parts) if len(parts) > 1 or parts else ""
    return _UNSHIPPED.sub("", text).strip()


def balancer_info(cls) -> dict:
    """What ``dlbkit balancers --json`` prints for one balancer class (its summary and source as
    plain text, without references to files dlbkit does not install)."""
    tax = getattr(cls, "taxonomy", None)
    return {"name": cls.name, "kind": cls.kind, "class": f"{cls.__module__}.{cls.__qualname__}",
            "parameters": {k: jsonable(v) for k, v in cls.param_defaults().items()},
            "taxonomy": tax.as_dict() if tax is not None else {}, "source": plain_text(cls.source),
            "doc": plain_text(_summary_line(cls.__doc__))}


def command(args) -> int:
    """``dlbkit balancers``: the list, as text or JSON."""
    from dlbkit.balancers import registry

    kinds = balancer_kinds()
    if args.kind is not None and args.kind not in kinds:
        raise ConfigError("--kind", args.kind, "one of " + ", ".join(kinds) + " (the kinds with registered balancers)",
                          suggest=closest(args.kind, kinds))
    infos = [balancer_info(registry.REGISTRY[n]) for n in registry.names(args.kind)]
    if args.json:
        print(json.dumps(infos, indent=2, ensure_ascii=False))
        return 0
    if not infos:
        print(f"no {args.kind} balancers registered" if args.kind else "no balancers registered")
        return 0
    width = max(len(i["name"]) for i in infos)
    for k, i in enumerate(infos):
        if k:
            print()
        print(f"{i['name']:<{width}}  [{i['kind']}]  {i['doc']}")
        params = ", ".join(f"{p}={v!r}" if isinstance(v, str) else f"{p}={json.dumps(v)}"
                           for p, v in i["parameters"].items()) or "(none)"
        print(f"{'':<{width}}  parameters: {params}")
        print(f"{'':<{width}}  taxonomy:   " + "; ".join(f"{a}={v}" for a, v in i["taxonomy"].items()))
        print(f"{'':<{width}}  source:     {i['source']}")
    return 0
