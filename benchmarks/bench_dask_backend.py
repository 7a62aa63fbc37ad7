"""dlbkit's balancers driving a Dask cluster (backend="dask") against Dask's own scheduling, in one run.

Usage: python benchmarks/bench_dask_backend.py [--pairs 5] [--items 2000] [--dag 500] [--trivial 10000]
                                               [--parts loop,dag,overhead]

A LocalCluster of 2 worker processes, one thread each; the second worker is slow, speed 0.25: for
dlbkit's runs by its emulation (``emulate=[1, 0.25]``: a chunk's measured time stretched to 4 ×), for
Dask's runs by the same stretch done inside the task on the worker Dask picked (the worker carries its
speed as an attribute set by ``Client.run``), so Dask sees an ordinary slow worker.

* loop: 2000 items of uneven cost (a busy loop of 1 to 10 units): ``dlbkit.map(..., backend="dask")``
  with awf-c, fac2 and auto against ``client.map`` + ``gather`` and a ``dask.bag`` of default partitions;
* dag: a 500-task layered DAG of uneven costs (50 layers of 10, each task reading 2 of the layer above):
  pd and heft through ``dlbkit.graph(..., backend="dask")`` (heft on the tasks' loads) and pd through
  ``dlbkit.dask.scheduler(backend="dask")`` against ``client.get`` (Dask's distributed scheduler);
* overhead: 10 000 trivial tasks in chains of 10: ``dlbkit.graph(..., backend="dask")`` against
  ``client.get`` and ``dask.threaded.get``.

Each pair alternates dlbkit and the peer (A B A B, rotating which goes first); printed: each way's median
wall time and, per peer, the ratio peer / dlbkit's best rule with its min–max over the pairs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import dlbkit

SLOW = 0.25


def spin(cost: int) -> int:
    s = 0
    for i in range(8000 * cost):
        s += i
    return s


def cost_of(x: int) -> int:
    return 1 + (x * 7919) % 10


def item(x: int) -> int:
    return spin(cost_of(x))


def _as_on_its_worker(fn, *args):
    """fn(*args), stretched as dlbkit's emulation stretches a chunk on a worker of the speed set below."""
    from distributed import get_worker

    speed = getattr(get_worker(), "bench_speed", 1.0)
    t0 = time.perf_counter()
    out = fn(*args)
    if speed < 1:
        time.sleep((time.perf_counter() - t0) * (1 / speed - 1))
    return out


def slowed_item(x: int) -> int:
    return _as_on_its_worker(item, x)


def node(cost: int, *inputs: int) -> int:
    return spin(cost) % 7 + sum(inputs) % 5


def slowed_node(cost: int, *inputs: int) -> int:
    return _as_on_its_worker(node, cost, *inputs)


def inc(x: int) -> int:
    return x + 1


def dag(n: int, fn) -> dict:
    """Layers of 10; task (l, j) reads (l-1, j) and (l-1, (j+3) % 10); cost 1..10 by a multiplicative hash."""
    width = 10
    out = {}
    for k in range(n):
        layer, j = divmod(k, width)
        deps = () if layer == 0 else (f"n{(layer - 1) * width + j}", f"n{(layer - 1) * width + (j + 3) % width}")
        out[f"n{k}"] = (fn, cost_of(k), *deps)
    return out


def dag_graph(n: int):
    """The same DAG as a networkx DiGraph whose nodes carry fn and load (the cost), for heft's plan."""
    import networkx as nx

    from dask.core import get_dependencies

    tasks = dag(n, node)
    g = nx.DiGraph()
    for key, (fn, cost, *deps) in tasks.items():
        g.add_node(key, fn=lambda *xs, c=cost: node(c, *xs), load=float(cost))
    for key in tasks:
        for d in sorted(get_dependencies(tasks, key)):
            g.add_edge(d, key)
    return g


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def compare(title: str, ours: dict, peers: dict, pairs: int, check) -> None:
    """Alternate every way *pairs* times (the order rotating each pair); print medians and ratios."""
    ways = {**ours, **peers}
    times: dict[str, list[float]] = {k: [] for k in ways}
    names = list(ways)
    for p in range(pairs):
        order = names[p % len(names):] + names[:p % len(names)]
        for name in order:
            t, out = timed(ways[name])
            check(name, out)
            times[name].append(t)
    print(f"\n{title}")
    print(f"{'way':52s} {'median s':>9s} {'min s':>7s} {'max s':>7s}")
    for name in names:
        ts = times[name]
        print(f"{name:52s} {statistics.median(ts):9.3f} {min(ts):7.3f} {max(ts):7.3f}")
    best = min(ours, key=lambda k: statistics.median(times[k]))
    for peer in peers:
        r = [a / b for a, b in zip(times[peer], times[best])]
        print(f"ratio {peer} / {best}: median {statistics.median(r):.2f} (min {min(r):.2f}, max {max(r):.2f}, "
              f"{pairs} pairs)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--dag", type=int, default=500)
    ap.add_argument("--trivial", type=int, default=10_000)
    ap.add_argument("--parts", default="loop,dag,overhead")
    a = ap.parse_args()
    parts = a.parts.split(",")

    import dask
    import dask.bag as db
    import dask.threaded
    from distributed import Client, LocalCluster

    from dlbkit import dask as dlbkit_dask

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2)
        addrs = list(client.nthreads())
        # the second worker in the scheduler's order is dlbkit's worker 1, emulated at SLOW; Dask's runs
        # stretch their tasks on that same worker
        client.run(lambda dask_worker: setattr(dask_worker, "bench_speed", SLOW), workers=[addrs[1]])
        emulate = [1.0, SLOW]
        print(f"dask {dask.__version__}, LocalCluster of 2 processes x 1 thread, worker speeds {emulate}")

        if "loop" in parts:
            items = list(range(a.items))
            serial, expect = timed(lambda: [item(x) for x in items])

            def check(name, out):
                assert list(out) == expect, name

            ours = {f"dlbkit.map backend=dask balancer={b}":
                    (lambda b=b: dlbkit.map(item, items, balancer=b, backend="dask", client=client, emulate=emulate))
                    for b in ("awf-c", "fac2", "auto")}
            peers = {"client.map + gather (one task per item)":
                     lambda: client.gather(client.map(slowed_item, items, pure=False)),
                     "dask.bag, default partitions":
                     lambda: db.from_sequence(items).map(slowed_item).compute(scheduler=client)}
            compare(f"loop of {a.items} uneven items ({serial:.2f} s serially here; the two workers' lower bound "
                    f"{serial / (1 + SLOW):.2f} s)", ours, peers, a.pairs, check)

        if "dag" in parts:
            tasks = dag(a.dag, node)
            keys = list(tasks)
            expect = dask.get(tasks, keys)
            g = dag_graph(a.dag)
            slowed = dag(a.dag, slowed_node)

            def check(name, out):
                got = [out[k] for k in keys] if isinstance(out, dict) else list(out)
                assert got == list(expect), name

            via_dask = dlbkit_dask.scheduler(backend="dask", client=client, emulate=emulate)
            ours = {"dlbkit.graph backend=dask balancer=pd":
                    lambda: dlbkit.graph(tasks, balancer="pd", backend="dask", client=client, emulate=emulate),
                    "dlbkit.graph backend=dask balancer=heft (loads)":
                    lambda: dlbkit.graph(g, balancer="heft", backend="dask", client=client, emulate=emulate),
                    "dlbkit.dask.scheduler pd, backend=dask":
                    lambda: via_dask(tasks, keys)}
            peers = {"client.get (Dask's distributed scheduler)": lambda: client.get(slowed, keys)}
            compare(f"DAG of {a.dag} uneven tasks", ours, peers, a.pairs, check)

        if "overhead" in parts:
            tasks = {f"t{i}": (inc, f"t{i - 1}") if i % 10 else (inc, 0) for i in range(a.trivial)}
            keys = list(tasks)
            expect = [i % 10 + 1 for i in range(a.trivial)]

            def check(name, out):
                got = [out[k] for k in keys] if isinstance(out, dict) else list(out)
                assert got == expect, name

            ours = {"dlbkit.graph backend=dask balancer=pd":
                    lambda: dlbkit.graph(tasks, backend="dask", client=client)}
            peers = {"client.get (Dask's distributed scheduler)": lambda: client.get(tasks, keys),
                     "dask.threaded.get, 2 threads": lambda: dask.threaded.get(tasks, keys, num_workers=2)}
            compare(f"overhead: {a.trivial} trivial tasks in chains of 10", ours, peers, a.pairs, check)


if __name__ == "__main__":
    main()
