"""PD online on a 10⁴-task random layered graph (issue 13: "in seconds"): wall time of one dynamic-engine run;
and replanning HEFT's cost (a full HEFT pass per replan) on the same graph when one node drops.

Run: PYTHONPATH=src python benchmarks/bench_pd_online.py
     PYTHONPATH=src python benchmarks/bench_pd_online.py --in-tree 10,12,14,16: pd alone on the binary
     in-trees in_tree(2, k) (2^k − 1 tasks, 2^(k−1) leaves placeable at once) on 16 identical nodes
"""

import argparse
import time

from dlbkit.balancers.registry import make
from dlbkit.model.availability import Step
from dlbkit.families.graph.model.generate import layered
from dlbkit.model.platform import Node, Platform
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic


def run(p, g, name, params=None):
    b = make(name, params or {})
    t0, c0 = time.perf_counter(), time.process_time()
    tr = simulate_graph_dynamic(p, g, b, seed=0)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    extra = f", {len(b.replans_)} replans" if hasattr(b, "replans_") else ""
    print(f"{name} {params or ''}: {g.n_tasks} tasks, {g.n_edges} edges, 16 nodes: {dt:.2f} s wall ({cpu:.2f} s CPU), "
          f"makespan {tr.makespan:.1f}, {tr.meta['preemptions']} preemptions{extra}")


def in_trees(levels):
    from dlbkit.families.graph.model.generate import in_tree
    for k in levels:
        g = in_tree(2, k)
        c0 = time.process_time()
        tr = simulate_graph_dynamic(16, g, make("pd"), seed=0)
        print(f"pd on in_tree(2, {k}): {g.n_tasks} tasks, 16 nodes: {time.process_time() - c0:.2f} s CPU, "
              f"makespan {tr.makespan:.1f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--in-tree", default="", help="levels k of the in-trees to time pd on (comma-separated)")
    args = ap.parse_args()
    if args.in_tree:
        in_trees([int(k) for k in args.in_tree.split(",")])
        raise SystemExit
    g = layered(10_000, width=100, density=0.05, seed=0)
    p = Platform([Node(f"n{k}", speed=1.0 + k % 4) for k in range(16)])
    for name in ("pd", "heft", "heft-replan"):
        run(p, g, name)
    # the fastest node keeps 20% of its CPU from t = 1000 (about a third of HEFT's makespan)
    q = Platform([Node(f"n{k}", speed=1.0 + k % 4, **({"availability": Step(at=1000.0, level=0.2)} if k == 15 else {}))
                  for k in range(16)])
    print("node n15 at 20% from t = 1000:")
    for name, params in (("heft", None), ("heft-replan", None), ("heft-replan", {"every": 1000}), ("pd", None)):
        run(q, g, name, params)
