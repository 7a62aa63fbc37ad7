"""Overhead per task of dlbkit.graph against Dask's local schedulers, on trivial tasks.

Usage: python benchmarks/bench_graph_overhead.py [--tasks 10000] [--workers 2] [--repeat 3]
The graph: *tasks* tasks in chains of 10 (task i of a chain adds 1 to task i-1's value), so every
task but a chain's first has one input passed along an edge. Prints the best wall time of each way
to compute every task's value, and the time per task: dlbkit.graph with pd (the default) and heft,
and dask.get with the synchronous, threaded and process schedulers, and with dlbkit.dask.scheduler as
Dask's scheduler (pd, heft), when dask is installed.
"""

import argparse

import dlbkit
from timing import best_of


def inc(x):
    return x + 1


def tasks_of(n):
    return {f"t{i}": (inc, f"t{i - 1}") if i % 10 else (inc, 0) for i in range(n)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    tasks = tasks_of(a.tasks)
    keys = list(tasks)
    expect = {f"t{i}": i % 10 + 1 for i in range(a.tasks)}
    rows = []
    for b in ("pd", "heft"):
        t, out = best_of(lambda: dlbkit.graph(tasks, balancer=b, workers=a.workers), a.repeat)
        assert out == expect
        rows.append((f"dlbkit.graph balancer={b}, {a.workers} workers", t))
    try:
        import dask
        import dask.multiprocessing
        import dask.threaded
    except ImportError:
        print("dask is not installed: dlbkit's figures alone")
    else:
        from dlbkit import dask as dlbkit_dask
        for name, get, kw in (("dask.get (synchronous)", dask.get, {}),
                              (f"dask.threaded.get, {a.workers} threads", dask.threaded.get, {"num_workers": a.workers}),
                              (f"dask.multiprocessing.get, {a.workers} processes", dask.multiprocessing.get,
                               {"num_workers": a.workers}),
                              (f"dlbkit.dask.scheduler pd, {a.workers} workers",
                               dlbkit_dask.scheduler(workers=a.workers), {}),
                              (f"dlbkit.dask.scheduler heft, {a.workers} workers",
                               dlbkit_dask.scheduler(workers=a.workers, balancer="heft"), {})):
            t, out = best_of(lambda: get(tasks, keys, **kw), a.repeat)
            assert dict(zip(keys, out)) == expect
            rows.append((name, t))
    for name, t in rows:
        print(f"{name:48s} {t:8.3f} s  {t / a.tasks * 1e6:8.1f} us/task")


if __name__ == "__main__":
    main()
