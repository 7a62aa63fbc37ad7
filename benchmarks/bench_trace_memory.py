"""Bytes a divisible run's trace keeps per chunk, and the process's peak RSS (BENCHMARKS.md, "Scalability
audit below the size limits").

Usage: python benchmarks/bench_trace_memory.py [--items 1000000] [--balancer ss] [--workers 4]
       [--mechanism self-scheduling|rounds] [--tracemalloc]

A loop of *items* unit items on a master and *workers* unit workers, seed 1, through ``dlbkit.simulate``
(engine, trace, metrics). Prints chunks, seconds and peak RSS of the process; with --tracemalloc (slower)
the bytes per chunk still held after the run and at the peak, and the largest allocation sites.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

from dlbkit import Divisible, Node, Platform, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=1_000_000)
    ap.add_argument("--balancer", default="ss")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--mechanism", default="self-scheduling")
    ap.add_argument("--tracemalloc", action="store_true")
    a = ap.parse_args()
    platform = Platform([Node("m")] + [Node(f"w{i}") for i in range(a.workers)])
    if a.tracemalloc:
        tracemalloc.start()
    t0 = time.perf_counter()
    r = simulate(platform, Divisible(a.items), a.balancer, seed=1, mechanism=a.mechanism)
    wall = time.perf_counter() - t0
    n = r.trace.n_intervals
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{n} chunks, {wall:.2f} s, peak RSS {rss:.0f} MB, makespan {r.metrics['makespan']!r}")
    if a.tracemalloc:
        kept, peak = tracemalloc.get_traced_memory()
        print(f"traced: {kept / n:.0f} B per chunk kept, {peak / n:.0f} B per chunk at the peak")
        for st in tracemalloc.take_snapshot().statistics("lineno")[:8]:
            print(f"  {st.size / n:6.1f} B per chunk  {st.traceback}")


if __name__ == "__main__":
    main()
