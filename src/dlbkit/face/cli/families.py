"""``dlbkit families [--json] [--import MODULE]``: every registered workload family, its workload class,
balancer kinds, engines (their options; the first is the default), real-run entry point, metrics, plots and the
kinds of file it reads (``dlbkit describe``);
``--import`` first imports a module that registers a family of the user's own, as ``dlbkit balancers`` and
``dlbkit simulate`` do."""

from __future__ import annotations

import argparse
import json

from dlbkit.face.cli.options import add_import, add_json

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit families --help``
HELP = "list the workload families: workload, balancer kind, engines, metrics"
DESCRIPTION = ("Every registered workload family: its workload class, the balancer kind "
               "that decides for it, its simulation engines (the balancer kinds each "
               "runs, its options; the first is the default), its "
               "real-run entry point, metrics and plots.")


def arguments(f: argparse.ArgumentParser) -> None:
    """``families``' arguments."""
    add_json(f, "a JSON list of objects")
    add_import(f)  # a family declared outside dlbkit registers when its module is imported
    f.set_defaults(func=command)


def command(args) -> int:
    """``dlbkit families``: the list, as text or JSON."""
    from dlbkit import families

    infos = [f.as_dict() for f in families.FAMILIES.values()]
    if args.json:
        print(json.dumps(infos, indent=2, ensure_ascii=False))
        return 0
    width = max(len(i["name"]) for i in infos)
    for k, i in enumerate(infos):
        if k:
            print()
        pad = " " * width
        print(f"{i['name']:<{width}}  {i['summary']} ({i['source']})")
        print(f"{pad}  workload:  {', '.join(w.rsplit('.', 1)[1] for w in i['workload'])}")
        none = " (or 'none': no balancing)" if i["no_balancing_reference"] else ""
        kinds = i["balancer_kinds"]
        print(f"{pad}  balancers: {', '.join(kinds)}{none}  (dlbkit balancers --kind {' | '.join(kinds)})")
        for e in i["engines"]:
            tag = "default engine" if e["default"] else "engine"
            opts = ", ".join(e["options"]) or "(no experiment options)"
            where = "" if e["on_platform"] else "; not from experiment files"
            kinds = ", ".join(e["balancer_kinds"])
            print(f"{pad}  {tag}: {e['name']}: {e['entry']}; balancers: {kinds}; options: {opts}{where}")
        print(f"{pad}  real runs: {i['runtime'] or 'none yet'}")
        print(f"{pad}  metrics:   {', '.join(i['metrics'])}")
        print(f"{pad}  plots:     {', '.join(i['plots'])}")
        if i["files"]:  # the files `dlbkit describe` reads for the family
            print(f"{pad}  files:     {'; '.join(i['files'])}")
    return 0
