"""The supermarket model (issue 14, 003 §3.2) through the general stream engine with the power-of-d
balancer object: ``dlbkit.face.bench.run_supermarket``, as ``dlbkit bench supermarket`` runs it.

Usage: python benchmarks/bench_supermarket.py [--repeat K] [--jobs J] [--servers N] [--load RHO]
                                             [--choices D] [--seed S] [--kernel]
Prints, for sampling with and without replacement, the mean jobs per server against Mitzenmacher's
limit Σ_i ρ^((d^i − 1)/(d − 1)), the mean response, the events (one arrival and one departure per
job), the minimum and median wall time of K runs and the events per second at each, the same from
the process's CPU time (less disturbed by other processes on a shared machine), and the engine's
path (the trace's ``meta["path"]``: "fast" is :mod:`dlbkit.families.stream.sim._fast`). ``--kernel`` also times
the kernel path (the fast loop declined), whose figures must be the same.
"""

import argparse
import statistics
import time

from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.families.stream.sim import engine as stream_engine
from dlbkit.face.bench import run_supermarket


def theory(rho: float, d: int) -> float:
    if d == 1:
        return rho / (1 - rho)
    return sum(rho ** ((d ** i - 1) / (d - 1)) for i in range(1, 64) if (d ** i - 1) / (d - 1) < 5000)


def path_of(servers, load, choices, jobs, seed, replace) -> str:
    seen = []
    engine = stream_engine.simulate_stream

    def spy(*a, **k):
        tr = engine(*a, **k)
        seen.append(tr.meta["path"])
        return tr

    import dlbkit.face.bench as bench
    bench.simulate_stream = spy
    try:
        run_supermarket(servers, load, choices, min(jobs, 10_000), seed, replace=replace)
    finally:
        bench.simulate_stream = engine
    return seen[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--load", type=float, default=0.9)
    ap.add_argument("--choices", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kernel", action="store_true", help="also time the kernel path")
    args = ap.parse_args()
    print(f"{'path':>7} {'sampling':>8} {'mean/srv':>9} {'theory':>7} {'resp':>7} {'events':>9} "
          f"{'wall min':>8} {'median':>7} {'ev/s max':>10} {'ev/s med':>10} {'cpu min':>7} {'median':>7} "
          f"{'ev/cpu-s max':>12} {'med':>10}")
    paths = [("fast", None)] + ([("kernel", "kernel")] if args.kernel else [])
    for name, force in paths:
        orig = _stream_fast.eligible
        if force:
            _stream_fast.eligible = lambda *a, **k: "forced by bench_supermarket --kernel"
        try:
            for replace in (True, False):
                runs, cpus = [], []
                for _ in range(args.repeat):
                    c0 = time.process_time()
                    runs.append(run_supermarket(args.servers, args.load, args.choices, args.jobs, args.seed,
                                                replace=replace))
                    cpus.append(time.process_time() - c0)
                walls = sorted(r["wall_s"] for r in runs)
                cpus.sort()
                r = runs[0]
                assert all({k: v for k, v in x.items() if k not in ("wall_s", "events_per_s")}
                           == {k: v for k, v in r.items() if k not in ("wall_s", "events_per_s")} for x in runs)
                p = path_of(args.servers, args.load, args.choices, args.jobs, args.seed, replace)
                med = statistics.median(walls)
                print(f"{p.split()[0]:>7} {'with' if replace else 'without':>8} {r['mean_jobs_per_server']:>9.5f} "
                      f"{theory(args.load, args.choices):>7.5f} {r['mean_response']:>7.5f} {r['events']:>9} "
                      f"{walls[0]:>8.3f} {med:>7.3f} {r['events'] / walls[0]:>10,.0f} {r['events'] / med:>10,.0f} "
                      f"{cpus[0]:>7.3f} {statistics.median(cpus):>7.3f} {r['events'] / cpus[0]:>12,.0f} "
                      f"{r['events'] / statistics.median(cpus):>10,.0f}", flush=True)
        finally:
            _stream_fast.eligible = orig


if __name__ == "__main__":
    main()
