"""``dlbkit schedule GRAPH``: a task graph mapped onto identical nodes or a platform by a mapping
balancer, and the plan timed by the graph family's evaluator."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dlbkit.errors import ConfigError
from dlbkit.face.cli.options import (add_balancer, add_import, add_json, add_seed, check_balancer_arg, check_count,
                                     check_seed, image_file, parse_params, platform_file)
from dlbkit.face.cli.output import jsonable, save_figure, warnings_in_one_line, wrapped_table

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit schedule --help``
HELP = "map a task graph onto nodes with a mapping balancer and time the plan"
DESCRIPTION = ("Read a task graph (.json, Kasahara .stg, the thesis's .adg or a Pegasus DAX .dax/.xml), map it onto --nodes M "
               "identical nodes (speed 1, a transfer takes its data) or a --platform, with a mapping "
               "balancer (dlbkit balancers --kind mapping), and time the plan with the graph "
               "family's evaluator. --json prints {makespan, assignment, start, finish}.")


def arguments(sc: argparse.ArgumentParser) -> None:
    """``schedule``'s arguments."""
    sc.add_argument("graph", metavar="GRAPH", help="a task graph file: .json (dlbkit's, or a WfCommons WfFormat "
                    "workflow), .stg, .adg, or a Pegasus DAX (.dax, .xml)")
    where = sc.add_mutually_exclusive_group(required=True)
    where.add_argument("--nodes", metavar="M", type=int, help="M identical nodes of speed 1")
    where.add_argument("--platform", metavar="P.toml", help="a platform TOML file (or a thesis .ntp network file)")
    add_balancer(sc, "mapping", "heft")
    sc.add_argument("--cost-model", default="standard", choices=["standard", "thesis"],
                    help="standard (default) or thesis (002: both ends busy for a message)")
    sc.add_argument("--contention", nargs="?", const="port", choices=["port", "link"], default=None,
                    help="standard model with contention: 'port' (the default when the flag is bare: one message "
                         "at a time per node's send and receive port) or 'link' (one message at a time per directed "
                         "link of the --platform's routed topology)")
    add_seed(sc, "seed of a randomised balancer (default 0)")
    sc.add_argument("--gantt", metavar="FILE.png", help="also draw the Gantt chart to this file")
    sc.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="while the plan is computed, a line on stderr every 5 s once it has run that long (the "
                         "default; milp may solve up to its time_limit); --no-progress: nothing")
    add_json(sc, "a JSON object: makespan, assignment, start, finish")
    add_import(sc)
    sc.set_defaults(func=command)


#: what ``schedule --json`` adds under "solver" for a mapper that reports an optimality gap (milp)
_SOLVER_KEYS = ("model", "status", "message", "objective", "dual_bound", "gap", "optimal", "estimate", "stopped_by",
                "incumbent", "milp_makespan", "heft_makespan")


def command(args) -> int:
    """``dlbkit schedule``: the plan's makespan and each task's node, start and finish (a table or JSON)."""
    from dlbkit.families.graph.face.schedule import schedule
    from dlbkit.runtime.progress import LINES, Progress

    check_count(args.nodes, "--nodes")
    if args.platform is not None:
        if not Path(args.platform).is_file():
            raise ConfigError("--platform", args.platform, "an existing platform file (TOML, or SimGrid .xml) or a thesis .ntp network file")
        platform_file(args.platform, "--platform")
    check_seed(args.seed)
    params = parse_params(args.param, example="insertion=false")
    check_balancer_arg(args.balancer, "mapping", params)
    gantt = image_file(args.gantt, "--gantt")
    where = args.nodes if args.nodes is not None else args.platform
    if args.contention == "link" and args.nodes is not None:
        raise ConfigError("--contention", "link", "'port' (or the bare flag) with --nodes: 'link' needs the links of a "
                          "--platform's topology")
    contention = {None: False, "port": True, "link": "link"}[args.contention]
    from dlbkit.model.check import renamed
    # the API names its arguments ("nodes", the graph's "costs"); the command line names the flag and the file
    with renamed("nodes", "--nodes" if args.nodes is not None else "nodes"), \
            renamed("costs", f"costs of {args.graph}"), renamed("contention", "--contention"), \
            warnings_in_one_line(0), \
            Progress(0, False if args.progress is False else LINES, unit="", what=f"schedule: {args.balancer}").beating() as bar:
        # a solver reports nothing while it runs (milp: up to its time_limit): a line every few seconds says it does
        r = schedule(args.graph, where, args.balancer, params=params, cost_model=args.cost_model,
                     contention=contention, seed=args.seed)
    bar.close()
    info = r.trace.meta.get("plan_info") or {}
    if gantt is not None:
        save_figure(r.plot_gantt(), gantt)
    if args.json:
        d = r.as_dict()
        if "gap" in info:  # a solver's report (the milp's): status, objective, dual bound, optimality gap
            d["solver"] = jsonable({k: info[k] for k in _SOLVER_KEYS if k in info})
        print(json.dumps(d))
        return 0
    d = r.as_dict()
    print(f"{r.trace.meta['graph']}: {len(d['assignment'])} tasks on {r.trace.n_nodes} nodes, balancer "
          f"{args.balancer}, cost model {args.cost_model}: makespan {r.makespan:g}")
    if "gap" in info:
        print(f"{args.balancer}: {info.get('message', '')} objective {info['objective']:g}, dual bound "
              f"{info['dual_bound']:g}, gap {info['gap']:.4g}"
              + (" (HEFT's plan, returned: better than HiGHS's best, "
                 + (f"{info['milp_makespan']:g})" if info.get("milp_makespan") is not None else "none found)")
                 if info.get("incumbent") == "heft" else ""))
    # a --platform's nodes by the names its file gives ("/k" for a node's k-th core); --nodes M's by number
    names = r.trace.node_labels() or [str(p) for p in range(r.trace.n_nodes)]
    rows = [[str(t), names[p], f"{d['start'][t]:g}", f"{d['finish'][t]:g}"] for t, p in d["assignment"].items()]
    print(wrapped_table(["task", "node", "start", "finish"], rows, [24, 12, 12, 12]))
    return 0
