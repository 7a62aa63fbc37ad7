"""``dlbkit cluster MODULE:FUNCTION --jobs N``: a stream of real jobs on a decentralised
:class:`dlbkit.Cluster`, at Poisson arrival times; the response times and where the jobs ran
(docs/cluster.md)."""

from __future__ import annotations

import argparse
import json
import math
import time

from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.face.cli.loading import load_function
from dlbkit.face.cli.options import (add_balancer, add_emulate, add_json, add_launch, add_progress, add_record,
                                     add_seed, add_target, add_workers, check_balancer_arg, check_count,
                                     check_launch_flags, check_seed, emulate_arg, parse_params, start_job,
                                     writable_file)
from dlbkit.face.cli.output import jsonable, recorded_line, warnings_in_one_line

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit cluster --help``
HELP = "run a stream of real jobs on a decentralised cluster (dlbkit.Cluster)"
DESCRIPTION = ("Submit FUNCTION(i) for i in 0..N-1 to a dlbkit.Cluster of --workers nodes (worker processes "
               "of this machine), at Poisson arrival times of --rate jobs/s (all at once without --rate), "
               "round-robin over the nodes as origins; each origin places its jobs with the placement "
               "--balancer on its view of the others' loads, built by the --info model's messages. Print the "
               "response times (submit to result) and where the jobs ran. docs/cluster.md.")


def arguments(cl: argparse.ArgumentParser) -> None:
    """``cluster``'s arguments."""
    add_target(cl, "a module importable from the current directory or sys.path, or a .py file, and the function "
                   "each job calls with its index")
    cl.add_argument("--jobs", "-N", type=int, required=True, metavar="N", help="jobs: FUNCTION(0) .. FUNCTION(N-1)")
    cl.add_argument("--rate", type=float, metavar="R", help="Poisson arrivals at R jobs/s (default: all at once)")
    add_workers(cl, "nodes (default: the usable CPUs, or one per --emulate speed)")
    cl.add_argument("--backend", choices=("local", "mpi"), default="local",
                    help="local processes (default), or MPI ranks: rank 0 submits the jobs, every other rank is "
                         "a node (start it with --ranks N, or under your own mpiexec)")
    add_launch(cl, "with --backend mpi: rank 0 submits the jobs, N-1 ranks are the nodes")
    add_balancer(cl, "placement", "nezha")
    cl.add_argument("--info", metavar="MODEL", default="gossip",
                    help="information model, one that sends messages: gossip (default), neighbour, scatter-old, "
                         "scatter-4.1, scatter-4.2, scatter-4.3")
    cl.add_argument("--info-param", metavar="KEY=VALUE", action="append", default=[],
                    help="an information model parameter (repeatable), e.g. period=0.02")
    add_emulate(cl, "slow the nodes down: a platform TOML file (one node per platform node, its cores its slots) or "
                    "speed factors 1,1,0.5")
    add_seed(cl, "seed of the arrivals, the balancers and the gossip (default 0)")
    add_record(cl)
    add_progress(cl, "a progress bar of the jobs done on stderr")
    add_json(cl, "print the summary as a JSON object")
    cl.set_defaults(func=command)


def _info_flags(e: ConfigError) -> ConfigError:
    """A ConfigError of ``Cluster(info=...)`` said in ``dlbkit cluster``'s words: ``info`` or
    ``info.model`` is ``--info``, ``info.KEY`` and ``info (KEY …)`` are ``--info-param``."""
    if e.field in ("info", "info.model"):
        return ConfigError("--info", e.value, e.allowed)
    if e.field.startswith("info.") or e.field.startswith("info ("):
        return ConfigError("--info-param " + e.field[5:].lstrip("."), e.value, e.allowed)
    return e


#: the longest span of arrivals ``dlbkit cluster`` starts (--jobs / --rate seconds, expected): a day
MAX_ARRIVALS_S = 86_400


POLL_S = 0.2  # how often the progress is told while the command waits


def command(args) -> int:
    """``dlbkit cluster``: the jobs submitted at their arrival times, waited for, and the summary printed."""
    from dlbkit.face.cli.ranks import env_rank

    rank = env_rank() if args.backend == "mpi" else 0
    try:
        return _cluster(args)
    except DlbkitError:
        if rank != 0:  # every rank finds the same bad input: rank 0 alone says so
            return 2
        raise


def _cluster(args) -> int:
    """The checks, then the job started (``--ranks``) or the cluster run here (on this rank)."""
    import numpy as np
    from concurrent.futures import wait
    from dlbkit.families.stream.face.cluster import Cluster
    from dlbkit.runtime.progress import Progress, line_mode

    check_launch_flags(args)
    if args.ranks is not None and args.backend != "mpi":
        raise ConfigError("--ranks", args.ranks, "used with --backend mpi (the local backend's count is --workers)")
    if args.backend == "mpi" and args.workers is not None:
        raise ConfigError("--workers", args.workers, "omitted with --backend mpi (the nodes are the ranks but rank 0)")
    check_count(args.jobs, "--jobs")
    if args.rate is not None and not (math.isfinite(args.rate) and args.rate > 0):
        raise ConfigError("--rate", args.rate, "a finite number of jobs per second > 0")
    if args.rate is not None and args.jobs / args.rate > MAX_ARRIVALS_S:  # else it sleeps, silently, for ever
        raise ConfigError("--rate", args.rate, f"at least --jobs / {MAX_ARRIVALS_S:,} s = "
                          f"{args.jobs / MAX_ARRIVALS_S:.3g} jobs/s: {args.jobs} arrivals at this rate would span "
                          f"about {args.jobs / args.rate:.3g} s, and dlbkit cluster spans at most a day")
    check_seed(args.seed)
    check_count(args.workers, "--workers")
    params = parse_params(args.param, example="d=2")
    fn = load_function(args.target)  # first, as `dlbkit run` does: its module may register the balancer
    check_balancer_arg(args.balancer, "placement", params)
    emulate = emulate_arg(args.emulate)
    record = writable_file(args.record, "--record")
    if args.ranks is not None:  # checked here once, then the same command on the ranks
        return start_job(args)
    workers = args.workers  # None: one node per speed factor, per platform node, or per usable CPU (Cluster's rule)
    info = {"model": args.info, **parse_params(args.info_param, "--info-param")}
    rng = np.random.default_rng(args.seed)
    times = np.cumsum(rng.exponential(1 / args.rate, args.jobs)) if args.rate else np.zeros(args.jobs)
    sent: list[float] = []
    done: dict[int, float] = {}
    with warnings_in_one_line(0):
        try:
            cluster = Cluster(workers, balancer=args.balancer, params=params, info=info, emulate=emulate,
                              seed=args.seed, record=record, backend=args.backend)
        except ConfigError as e:  # the information model is the flags' --info and --info-param
            raise _info_flags(e) from None
        with cluster as c:
            workers = len(c.alive())
            bar = Progress(args.jobs, line_mode(args.progress), unit="jobs", what="cluster")
            t0 = time.perf_counter()
            fs = []
            try:
                for i, t in enumerate(times):
                    delay = t0 + t - time.perf_counter()
                    while delay > 0:  # the arrivals' pace, the progress told on the way
                        time.sleep(min(delay, POLL_S))
                        bar.update(len(done))
                        delay = t0 + t - time.perf_counter()
                    sent.append(time.perf_counter())
                    f = c.submit(fn, i)
                    f.add_done_callback(lambda f, i=i: done.__setitem__(i, time.perf_counter()))
                    fs.append(f)
                    bar.update(len(done))
                while wait(fs, timeout=POLL_S).not_done:
                    bar.update(len(done))
                bar.update(len(done))
            finally:
                bar.close()
    failed = [i for i, f in enumerate(fs) if f.exception() is not None]
    r = np.asarray([done[i] - sent[i] for i in range(len(fs)) if i in done])
    per_node = np.bincount([j.node for j in c.ps() if j.node >= 0], minlength=workers).tolist()
    res = c.result()
    tr = res.trace
    # two clocks of one response (docs/cluster.md, "Two response times"): here, submit to this client's
    # callback (the result's trip back included); in the recording (what replay calls real), submit to
    # the job's end on its node
    out = {"jobs": args.jobs, "workers": workers, "balancer": args.balancer, "info": info, "failed": len(failed),
           "response_mean": float(r.mean()), "response_p50": float(np.percentile(r, 50)),
           "response_p95": float(np.percentile(r, 95)), "response_p99": float(np.percentile(r, 99)),
           "recorded_response_mean": float(res.metrics["response_mean"]),
           "jobs_per_node": per_node, "forwarded": int(tr.meta["tasks_moved"]),
           "info_messages": float(tr.info_messages), "info_age_mean": float(tr.info_age_mean)}
    if args.json:
        print(json.dumps(jsonable(out)))
    else:
        print(f"{args.jobs} jobs on {workers} nodes ({args.balancer}, {args.info}): response (submit to result "
              f"in this client) mean {out['response_mean'] * 1e3:.1f} ms, p50 {out['response_p50'] * 1e3:.1f}, p95 "
              f"{out['response_p95'] * 1e3:.1f}, p99 {out['response_p99'] * 1e3:.1f} ms (to the job's end on its "
              f"node, as recorded: mean {out['recorded_response_mean'] * 1e3:.1f} ms); jobs per node {per_node}; "
              f"{out['forwarded']} forwarded; {out['info_messages']:.0f} load messages, mean view age "
              f"{out['info_age_mean'] * 1e3:.1f} ms" + (f"; {len(failed)} failed (first: job {failed[0]}: "
                                                         f"{fs[failed[0]].exception()!r})" if failed else ""))
        if record is not None:
            print(recorded_line(record))
    return 1 if failed else 0
