"""heft-replan's two local orders (issue 13): "plan" (each node follows the plan's order, as a replayed
static plan) against "priority" (the engine's priority rule), on bench_pd_online's 10⁴-task graph,
dedicated and with one node dropping to 20% at t = 1000.

Run: PYTHONPATH=src python benchmarks/bench_replan_order.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_pd_online import Node, Platform, Step, layered, run  # noqa: E402

if __name__ == "__main__":
    g = layered(10_000, width=100, density=0.05, seed=0)
    p = Platform([Node(f"n{k}", speed=1.0 + k % 4) for k in range(16)])
    for lo in ("plan", "priority"):
        run(p, g, "heft-replan", {"local_order": lo})
    q = Platform([Node(f"n{k}", speed=1.0 + k % 4, availability=Step(at=1000.0, level=0.2) if k == 15 else 1.0)
                  for k in range(16)])
    print("node n15 at 20% from t = 1000:")
    for lo in ("plan", "priority"):
        run(q, g, "heft-replan", {"local_order": lo})
        run(q, g, "heft-replan", {"local_order": lo, "every": 1000})
