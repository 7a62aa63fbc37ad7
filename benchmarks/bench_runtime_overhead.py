"""Overhead of dlbkit.map against the standard executors on trivial items.

Usage: python benchmarks/bench_runtime_overhead.py [--items 100000] [--workers 2] [--repeat 5]
Prints the best wall time of each way to compute [f(x) for x in range(items)] with f trivial:
dlbkit.map with its default balancer (no tuning) and with a few others, and
concurrent.futures.ProcessPoolExecutor.map over a sweep of chunksizes (the best is the target).
mpi4py.futures is measured by benchmarks/bench_runtime_mpi.sh (it needs mpiexec).
"""

import argparse
from concurrent.futures import ProcessPoolExecutor

import dlbkit
from dlbkit.families.divisible.face.run import DEFAULT_BALANCER
from timing import best_of


def trivial(x):
    return x + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    items = list(range(a.items))
    expect = [trivial(x) for x in items]
    rows = []
    for name in (DEFAULT_BALANCER + " (default)", "fac2", "gss", "static"):
        bal = name.split()[0]
        assert dlbkit.map(trivial, items, workers=a.workers, balancer=bal) == expect
        rows.append((f"dlbkit.map balancer={name}",
                     best_of(lambda: dlbkit.map(trivial, items, workers=a.workers, balancer=bal), a.repeat)[0]))
    executor = []
    for cs in (1000, 2500, 5000, 12500, 25000, 50000):
        def run(cs=cs):
            with ProcessPoolExecutor(a.workers) as ex:
                return list(ex.map(trivial, items, chunksize=cs))
        assert run() == expect
        t, _ = best_of(run, a.repeat)
        executor.append(t)
        rows.append((f"ProcessPoolExecutor.map chunksize={cs}", t))
    target = min(executor)
    print(f"{a.items} trivial items, {a.workers} workers, best of {a.repeat}")
    for label, t in rows:
        print(f"{label:45s} {t:8.4f} s   {t / target:5.2f} x best executor")


if __name__ == "__main__":
    main()
