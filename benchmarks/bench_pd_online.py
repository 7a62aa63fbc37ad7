"""PD online on a 10⁴-task random layered graph (issue 13: "in seconds"): wall time of one dynamic-engine run.

Run: PYTHONPATH=src python benchmarks/bench_pd_online.py
"""

import time

from dlbkit.balancers.registry import make
from dlbkit.model.graph_gen import layered
from dlbkit.model.platform import Node, Platform
from dlbkit.sim.graph_dynamic import simulate_graph_dynamic

if __name__ == "__main__":
    g = layered(10_000, width=100, density=0.05, seed=0)
    p = Platform([Node(f"n{k}", speed=1.0 + k % 4) for k in range(16)])
    for name in ("pd", "heft"):
        t0 = time.perf_counter()
        tr = simulate_graph_dynamic(p, g, make(name), seed=0)
        dt = time.perf_counter() - t0
        print(f"{name}: {g.n_tasks} tasks, {g.n_edges} edges, 16 nodes: {dt:.2f} s wall, makespan {tr.makespan:.1f}, "
              f"{tr.meta['preemptions']} preemptions")
