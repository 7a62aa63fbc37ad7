"""``dlbkit bench MODEL``: a reference model through the general engine (M1, M2 of BENCHMARKS.md, or the
supermarket model): its makespan or response, events, wall time and events per second."""

from __future__ import annotations

import argparse
import inspect
import json

from dlbkit.errors import ConfigError
from dlbkit.face.cli.options import add_json, add_seed, add_workers, check_seed
from dlbkit.face.cli.output import jsonable

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit bench --help``
HELP = "run a reference model: M1, M2 (BENCHMARKS.md) or the supermarket model"
DESCRIPTION = ("Run a reference model through the general engine: makespan, events, "
               "wall time and events per second.")


def arguments(bn: argparse.ArgumentParser) -> None:
    """``bench``'s arguments (the models' names: :data:`dlbkit.face.bench.MODELS`)."""
    from dlbkit.face.bench import MODELS

    bn.add_argument("model", choices=sorted(MODELS), help="reference model")
    add_workers(bn, "number of workers (m1, m2)")
    bn.add_argument("--tasks", "-N", type=int, metavar="N", help="number of tasks (m1, m2)")
    bn.add_argument("--servers", type=int, metavar="N", help="servers (supermarket)")
    bn.add_argument("--load", type=float, metavar="RHO", help="arrival rate per server, below 1 (supermarket)")
    bn.add_argument("--choices", type=int, default=None, metavar="D", help="d, servers sampled per job (supermarket; 2)")
    bn.add_argument("--jobs", type=int, default=None, metavar="J", help="jobs (supermarket; 10^6)")
    bn.add_argument("--replace", action="store_true",
                    help="sample the d servers with replacement (supermarket; default: without)")
    add_seed(bn, "random seed (M2: default 1, the reference table's; M1 is deterministic and ignores it)", default=None)
    add_json(bn, "a JSON object")
    bn.set_defaults(func=command)


def command(args) -> int:
    """``dlbkit bench``: the flags of the other models refused, then the model run and printed."""
    from dlbkit.face.bench import MODELS

    fn = MODELS[args.model]
    check_seed(args.seed)
    # an option of the other models is an error, not ignored (as --ranks without --backend mpi is);
    # 0 is given (`0 in (None, False)` is true, so test identity)
    theirs = ("workers", "tasks") if args.model == "supermarket" else ("servers", "load", "choices", "jobs", "replace")
    for flag in theirs:
        if getattr(args, flag) is not None and getattr(args, flag) is not False:
            raise ConfigError(f"--{flag}", getattr(args, flag), "used with " + (
                "models m1 and m2 (the supermarket model takes --servers, --load, --choices, --jobs, --replace)"
                if args.model == "supermarket" else "the supermarket model (m1 and m2 take --workers, --tasks)"))
    return (_supermarket if args.model == "supermarket" else _reference)(args, fn)


def _supermarket(args, fn) -> int:
    """The supermarket model *fn* (each job joins the shortest of --choices sampled queues): its mean queue and response."""
    from dlbkit.face.bench import check_supermarket

    # every value given is checked before any flag missing is named: the error names the flag at fault
    check_supermarket(servers=args.servers, load=args.load, choices=args.choices, jobs=args.jobs,
                      replace=args.replace)
    for flag in ("servers", "load"):
        if getattr(args, flag) is None:
            raise ConfigError(f"--{flag}", None, "given for the supermarket model")
    res = fn(args.servers, args.load, 2 if args.choices is None else args.choices,
             1_000_000 if args.jobs is None else args.jobs, 1 if args.seed is None else args.seed,
             replace=args.replace)
    if args.json:
        print(json.dumps(jsonable(res)))
        return 0
    print(f"supermarket: {res['servers']} servers, load {res['load']:g}, d = {res['choices']} "
          f"({'with' if res['replace'] else 'without'} replacement), {res['jobs']:,} jobs, seed {res['seed']}")
    print(f"  mean jobs per server {res['mean_jobs_per_server']:.6f}")
    print(f"  mean response        {res['mean_response']:.6f} s (simulated)")
    print(f"  events               {res['events']}")
    print(f"  wall time            {res['wall_s']:.4f} s")
    print(f"  events/s             {res['events_per_s']:,.0f}")
    return 0


def _reference(args, fn) -> int:
    """The reference model *fn* (m1, m2) on --workers and --tasks: its makespan."""
    from dlbkit.face.bench import check_tasks, check_workers

    # every value given is checked before any flag missing is named: the error names the flag at fault
    if args.workers is not None:
        check_workers(args.workers, args.model)
    if args.tasks is not None:
        check_tasks(args.tasks)
    for flag in ("workers", "tasks"):
        if getattr(args, flag) is None:
            raise ConfigError(f"--{flag}", None, f"given for model {args.model}")
    kwargs = {"seed": args.seed} if args.seed is not None and "seed" in inspect.signature(fn).parameters else {}
    res = fn(args.workers, args.tasks, **kwargs)
    res = {"model": args.model, "workers": args.workers, "tasks": args.tasks, **res}
    if args.json:
        print(json.dumps(jsonable(res)))
        return 0
    print(f"model {res['model']}: {res['workers']} workers, {res['tasks']} tasks")
    print(f"  makespan     {res['makespan']:.6f} s (simulated)")
    print(f"  events       {res['events']}")
    print(f"  wall time    {res['wall_s']:.4f} s")
    print(f"  events/s     {res['events_per_s']:,.0f}")
    if "successful_steals" in res:
        print(f"  steals       {res['successful_steals']} successful")
    return 0
