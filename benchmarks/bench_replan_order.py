"""heft-replan's two local orders (issue 13): "plan" (each node follows the plan's order, as a replayed
static plan) against "priority" (the engine's priority rule), on bench_pd_online's 10⁴-task graph,
dedicated and with one node dropping to 20% at t = 1000.

Run: PYTHONPATH=src python benchmarks/bench_replan_order.py [--plans EVERY,...]
With ``--plans``, instead: the dropping-node run replanning every EVERY finished tasks, its CPU time and
the part of it spent planning (``heft_schedule``, the list scheduler HEFT shares).
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_pd_online import Node, Platform, Step, layered, run  # noqa: E402


def plans(g, q, everies):
    from dlbkit import make
    from dlbkit.families.graph.balancers import replanning_heft
    from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
    spent = []
    schedule = replanning_heft.heft_schedule

    def timed(*args, **kw):
        c0 = time.process_time()
        out = schedule(*args, **kw)
        spent.append(time.process_time() - c0)
        return out
    replanning_heft.heft_schedule = timed
    for every in everies:
        spent.clear()
        c0 = time.process_time()
        tr = simulate_graph_dynamic(q, g, make("heft-replan", {"every": every}), seed=0)
        print(f"heft-replan every {every}: {time.process_time() - c0:.2f} s CPU, of which {sum(spent):.2f} s in "
              f"{len(spent)} plans (heft_schedule), makespan {tr.makespan:.1f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--plans", default="", help="replan every EVERY finished tasks (comma-separated): time the plans")
    args = ap.parse_args()
    g = layered(10_000, width=100, density=0.05, seed=0)
    q = Platform([Node(f"n{k}", speed=1.0 + k % 4, availability=Step(at=1000.0, level=0.2) if k == 15 else 1.0)
                  for k in range(16)])
    if args.plans:
        plans(g, q, [int(x) for x in args.plans.split(",")])
        raise SystemExit
    p = Platform([Node(f"n{k}", speed=1.0 + k % 4) for k in range(16)])
    for lo in ("plan", "priority"):
        run(p, g, "heft-replan", {"local_order": lo})
    print("node n15 at 20% from t = 1000:")
    for lo in ("plan", "priority"):
        run(q, g, "heft-replan", {"local_order": lo})
        run(q, g, "heft-replan", {"local_order": lo, "every": 1000})
