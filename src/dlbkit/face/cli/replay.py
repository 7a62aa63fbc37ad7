"""``dlbkit replay TRACE.json``: a recorded run in the simulator with its own balancer and others, reported by the
recording's family (its ``Replay.report``, found through the registry: :mod:`dlbkit.face.replay`)."""

from __future__ import annotations

import argparse
import json
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
               "lower bound, the same for every row. A task tree's recording (run_tree(...).save) replays in "
               "the tree simulator, an SPMD run's (dlbkit.spmd(record=)) in the SPMD simulator, a task graph's "
               "(dlbkit.graph(record=)) in the graph simulator, a job stream's (dlbkit cluster --record) in the "
               "stream simulator, which prints response times.")


def arguments(rp: argparse.ArgumentParser) -> None:
    """``replay``'s arguments (``--model``'s choices: :data:`dlbkit.face.replay.MODELS`)."""
    from dlbkit.face.replay import MODELS

    rp.add_argument("trace", metavar="TRACE.json", help="a recorded trace")
    add_candidates(rp, "another balancer to try (repeatable, or comma-separated), of the recording's kind: "
                       "chunking for a loop, migration for a task tree, repartition for an SPMD run, mapping for a "
                       "task graph (dlbkit.graph), placement for a job stream (dlbkit cluster)")
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


def _check_flags(args, family) -> None:
    """A family-specific flag (``--model``, ``--info``) given for a recording whose family does not take it is a
    ConfigError naming the recordings it applies to (the families that declare it in ``Replay.cli_flags``)."""
    from dlbkit.face.replay import replaying

    takers: dict[str, list[str]] = {}
    for f in replaying():
        for flag in f.replay.cli_flags:
            takers.setdefault(flag, []).append(f.replay.noun)
    for flag, nouns in takers.items():
        value = getattr(args, flag, None)  # a flag this command lacks is never given
        if value not in (None, [], ()) and flag not in family.replay.cli_flags:
            raise ConfigError(f"--{flag}", value, "used with a " + " or ".join(f"{n} recording" for n in nouns)
                              + f" (a {family.replay.noun} recording does not take it)")


def command(args) -> int:
    """``dlbkit replay``: the recording's balancer and each --balancer replayed, as the recording's family
    reports them (``Replay.report``): a table, or JSON."""
    from dlbkit.face.replay import replayable_family
    from dlbkit.runtime.record import load_trace

    trace = load_trace(args.trace)
    check_seed(args.seed)
    family = replayable_family(trace)
    names = [n.strip() for b in args.balancer for n in b.split(",") if n.strip()]
    params = parse_params(args.param)
    if params and not names:
        raise ConfigError("--param", args.param, "used with --balancer (the recorded balancer is replayed as recorded)")
    named = _named_balancers(names, params, family.kinds)
    _check_flags(args, family)
    report = family.replay.report(trace, named, seed=args.seed, source=str(args.trace), label=balancer_label,
                                  **{flag: getattr(args, flag, None) for flag in family.replay.cli_flags})
    if args.json:
        print(json.dumps(jsonable(report.data), indent=2))
        return 0
    for line in report.lines:
        print(line)
    print(wrapped_table(report.header, report.rows, report.widths))
    return 0
