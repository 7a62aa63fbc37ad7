"""``dlbkit replay TRACE.json``: a recorded run in the simulator with its own balancer and others, by
the recording's family (a loop, a task graph, a job stream: :mod:`dlbkit.face.replay`)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Sequence

from dlbkit.errors import ConfigError
from dlbkit.face.cli.options import (add_candidates, add_import, add_json, add_seed, check_balancer_arg, check_seed,
                                     parse_params)
from dlbkit.face.cli.output import balancer_label, jsonable, wrapped_table

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit replay --help``
HELP = "replay a recorded run in the simulator, with its balancer and others"
DESCRIPTION = ("Simulate the loads of a run recorded with 'dlbkit run --record' (or run_map(record=...)): "
               "the measured item costs on the measured worker speeds. Print, for the recorded balancer "
               "and each --balancer, the simulated makespan and efficiency; for the recorded one also the "
               "real makespan and the replay/real ratio. Efficiencies are against the replayed platform's "
               "lower bound, the same for every row. A task graph's recording (dlbkit.graph(record=)) "
               "replays in the graph simulator, a job stream's (dlbkit cluster --record) in the stream "
               "simulator, which prints response times.")


def arguments(rp: argparse.ArgumentParser) -> None:
    """``replay``'s arguments (``--model``'s choices: :data:`dlbkit.face.replay.MODELS`)."""
    from dlbkit.face.replay import MODELS

    rp.add_argument("trace", metavar="TRACE.json", help="a recorded trace")
    add_candidates(rp, "another balancer to try (repeatable, or comma-separated), of the recording's kind: "
                       "chunking for a loop, mapping for a task graph (dlbkit.graph), placement for a job "
                       "stream (dlbkit cluster)")
    rp.add_argument("--param", "-p", metavar="KEY=VALUE", action="append", default=[],
                    help="a parameter of the --balancer balancers (repeatable); the recorded one keeps its own")
    add_seed(rp, "seed of random balancers (default: the recorded one, or 0)", default=None)
    rp.add_argument("--model", choices=MODELS, default=None,
                    help="worker speeds of a loop: measured from the run (default) or the emulated factors as set "
                         "(only for loops: a task graph replays its measured task costs on its recorded speeds, a "
                         "job stream on its emulated speeds)")
    rp.add_argument("--info", metavar="MODEL", action="append", default=[],
                    help="a job-stream recording (dlbkit cluster --record): also replay the recorded balancer under "
                         "this information model (repeatable: exact, neighbour, gossip, scatter-old, scatter-4.1, "
                         "scatter-4.2, scatter-4.3, monitored); the recorded model is always replayed, and each "
                         "--balancer runs under it")
    add_json(rp, "a JSON object")
    add_import(rp)
    rp.set_defaults(func=command)


def _named_balancers(names: Sequence[str], params: dict, kinds: tuple[str, ...]) -> list[tuple[str, dict]]:
    """Each ``--balancer`` name (of *kinds*) with the *params* it accepts; a name of another kind, or a
    parameter none of them accepts, is an error."""
    from dlbkit.balancers.registry import get

    for n in names:
        check_balancer_arg(n, kinds)
    classes = [get(n) for n in names]
    for k in params:
        if not any(k in c.param_names() for c in classes):
            raise ConfigError("--param", k, "a parameter of a --balancer balancer: " + "; ".join(
                f"{c.name}: {', '.join(c.param_names()) or '(none)'}" for c in classes))
    return [(c.name, {k: v for k, v in params.items() if k in c.param_names()}) for c in classes]


def command(args) -> int:
    """``dlbkit replay``: the recording's balancer and each --balancer replayed, as a table or JSON."""
    from dlbkit.balancers.registry import make
    from dlbkit.face.replay import check_replayable, compare, dispatch_latency, estimate, replay_kinds
    from dlbkit.runtime.record import load_trace

    trace = load_trace(args.trace)
    check_seed(args.seed)
    check_replayable(trace)
    names = [n.strip() for b in args.balancer for n in b.split(",") if n.strip()]
    params = parse_params(args.param)
    if params and not names:
        raise ConfigError("--param", args.param, "used with --balancer (the recorded balancer is replayed as recorded)")
    named = _named_balancers(names, params, replay_kinds(trace))
    if args.model is not None and trace.family != "divisible":
        raise ConfigError("--model", args.model, "used with a loop recording (a task graph replays on its recorded "
                          "speeds, a job stream on its emulated speeds)")
    if trace.family == "stream":
        return _replay_stream_cmd(args, trace, named)
    if args.info:
        raise ConfigError("--info", args.info, "used with a job-stream recording (dlbkit cluster --record)")
    if trace.family == "graph":  # measured task costs on the recorded speeds; the --model of loops does not apply
        model = {"model": "recorded", "speeds": [float(s) for s in trace.speeds], "latency": dispatch_latency(trace)}
    else:
        model = estimate(trace, args.model or "measured").as_dict()
    rows = compare(trace, [make(n, p) for n, p in named], seed=args.seed, model=args.model)
    real = rows[0]["real_makespan"]
    bound = rows[0]["makespan"] * rows[0]["efficiency"]
    real_eff = bound / real if real > 0 else math.nan
    info = {"trace": str(args.trace), "balancer": trace.balancer,
            "params": dict(trace.meta.get("balancer_params") or {}), "workers": trace.n_nodes,
            "items": int(model.get("items", len(trace.meta.get("item_cost") or ()))),
            "backend": trace.meta.get("backend", trace.source),
            "real_makespan": real, "real_efficiency": real_eff, "model": model, "rows": rows}
    if args.json:
        print(json.dumps(jsonable(info), indent=2))
        return 0
    print(f"replay of {args.trace}: {trace.balancer} on {trace.n_nodes} workers ({info['backend']}), "
          f"{info['items']} {'tasks' if trace.family == 'graph' else 'items'}; real makespan {real:.4g} s")
    speeds = " ".join(f"{s:.3g}" for s in model["speeds"])
    if trace.family == "graph":  # no master, no startup: a transfer's latency is the coordinator's dispatch
        print(f"model: recorded speeds {speeds}; dispatch latency {model['latency'] * 1e3:.3g} ms")
    else:
        print(f"model: {model['model']} speeds {speeds}; latency {model['latency'] * 1e3:.3g} ms; master overhead "
              f"{model['overhead'] * 1e3:.3g} ms; startup {model['startup'] * 1e3:.3g} ms")
    print()

    def label(row) -> str:
        return balancer_label(row["balancer"], row["params"]) + (" [recorded]" if row["recorded"] else "")

    header = ["balancer", "makespan (s)", "efficiency", "replay/real"]
    table = [[label(r), f"{r['makespan']:.4g}", f"{r['efficiency']:.3f}",
              f"{r['ratio']:.3f}" if r["ratio"] is not None else ""] for r in rows]
    table.append([f"real run ({trace.balancer})", f"{real:.4g}", f"{real_eff:.3f}", ""])
    print(wrapped_table(header, table, [60, 14, 10, 11]))
    return 0


def _replay_stream_cmd(args, trace, named: list[tuple[str, dict]]) -> int:
    """``dlbkit replay`` of a job stream recorded by ``dlbkit cluster --record``: the recorded jobs in the
    stream simulator under the recorded balancer and information model, each --balancer and each --info."""
    from dlbkit.face.replay import replay_stream
    from dlbkit.families.result import Result

    real = Result(trace, trace.balancer).metrics
    recorded_info = dict(trace.meta.get("info_params") or {"model": trace.meta.get("info") or "exact"})
    runs = [(None, None, None)] + [(b, p, None) for b, p in named] + [(None, None, {"model": m}) for m in args.info]
    rows = []
    for b, params, info in runs:
        r = replay_stream(trace, b, params, args.seed, info=info)
        rows.append({"balancer": r.balancer.name, "info": (info or recorded_info)["model"],
                     "response_mean": r.metrics["response_mean"], "response_p95": r.metrics["response_p95"]})
    out = {"trace": str(args.trace), "balancer": trace.balancer, "info": recorded_info, "jobs": len(trace.series["job_time"]),
           "real_response_mean": real["response_mean"], "real_response_p95": real["response_p95"], "rows": rows}
    if args.json:
        print(json.dumps(jsonable(out), indent=2))
        return 0
    print(f"replay of {args.trace}: a job stream of {out['jobs']} jobs on {trace.n_nodes} nodes "
          f"({trace.balancer}, {recorded_info['model']}); real response (submit to the job's end on its node) mean "
          f"{real['response_mean'] * 1e3:.4g} ms, p95 {real['response_p95'] * 1e3:.4g} ms")
    table = [[r["balancer"], r["info"], f"{r['response_mean'] * 1e3:.4g}", f"{r['response_p95'] * 1e3:.4g}"]
             for r in rows]
    print(wrapped_table(["balancer", "info", "mean response (ms)", "p95 (ms)"], table, [24, 10, 18, 10]))
    return 0
