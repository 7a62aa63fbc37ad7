"""Per-step overhead of a persistent dlbkit.Loop against ProcessPoolExecutor.map on a pool kept open.

Usage: python benchmarks/bench_loop_overhead.py [--items 10000] [--workers 2] [--steps 20]
Both pools are started once, outside the timing; each then computes [f(x) for x in range(items)]
--steps times with f trivial, and the per-step wall time is reported (best and median): dlbkit.Loop
with its default balancer and a few others, and ProcessPoolExecutor.map at chunksize 1 (its default)
and a sweep of chunksizes (the best is the fair comparison). For reference, one dlbkit.map call
(which starts and stops its workers every call).
"""

import argparse
import statistics
import time
from concurrent.futures import ProcessPoolExecutor

import dlbkit


def trivial(x):
    return x + 1


def per_step(fn, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    items = list(range(a.items))
    expect = [x + 1 for x in items]
    rows = []
    for name in ("awf-c", "fac2", "gss", "static"):
        with dlbkit.Loop(trivial, workers=a.workers, balancer=name) as loop:
            assert loop.map(items) == expect  # warm-up step
            rows.append((f"dlbkit.Loop, {name}" + (" (default)" if name == "awf-c" else ""),
                         *per_step(lambda: loop.map(items), a.steps)))
    with ProcessPoolExecutor(a.workers) as ex:
        assert list(ex.map(trivial, items, chunksize=100)) == expect
        for cs in (1, 100, 500, 1250, 2500, 5000):
            rows.append((f"ProcessPoolExecutor.map, chunksize {cs}",
                         *per_step(lambda: list(ex.map(trivial, items, chunksize=cs)), a.steps if cs > 1 else 3)))
    rows.append(("dlbkit.map (starts its workers every call), awf-c",
                 *per_step(lambda: dlbkit.map(trivial, items, workers=a.workers), max(3, a.steps // 4))))
    print(f"{a.items} trivial items, {a.workers} workers, {a.steps} steps (best and median per step)")
    for name, best, med in rows:
        print(f"| {name} | {best * 1e3:.2f} | {med * 1e3:.2f} |")


if __name__ == "__main__":
    main()
