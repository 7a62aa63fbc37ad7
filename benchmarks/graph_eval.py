"""Speed of the task-graph evaluator (dlbkit.families.graph.sim.static) and of HEFT (issue 13's performance targets).

Usage: PYTHONPATH=src python benchmarks/graph_eval.py [--tasks N] [--nodes M] [--repeat R] [--width W] [--density D]
       [--milp SECONDS]
Prints, for a random layered DAG (dlbkit.families.graph.model.generate.layered: width W = 20, density D = 0.1, seed 1), the
evaluator's tasks per second under both cost models, with the list rule (no order) and with a given
order (the plan's), best of R runs; then HEFT's wall time on 1000 tasks onto 16 heterogeneous
nodes (a cost table, β = 1). Target: the evaluator at >= 1e5 tasks/s; HEFT on 1000 × 16 under 1 s.
"""

import argparse
import time

from dlbkit.balancers.registry import make
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.generate import layered
from dlbkit.families.graph.model.view import GraphView
from dlbkit.families.graph.sim.static import Evaluator
from timing import best_of


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100_000)
    ap.add_argument("--nodes", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--width", type=int, default=20)
    ap.add_argument("--density", type=float, default=0.1)
    ap.add_argument("--milp", type=float, default=0.0, metavar="SECONDS",
                    help="also solve the 18-task atmospheric graph with the milp mapper (both models, 2 and 4 "
                         "nodes) within this time limit, printing the gap")
    args = ap.parse_args()
    g = layered(args.tasks, width=args.width, density=args.density, seed=1)
    print(f"graph: {g.n_tasks:,} tasks, {g.n_edges:,} edges ({g.n_edges / g.n_tasks:.2f} per task), "
          f"{args.nodes} nodes")
    a = [i % args.nodes for i in range(g.n_tasks)]
    for model in ("standard", "thesis"):
        ev = Evaluator(costs_for(g, args.nodes, model))
        for label, order in (("list rule", None), ("given order", g.topo)):
            dt, _ = best_of(lambda: ev.times(a, order), args.repeat, collect=True)
            print(f"evaluator {model:8s} {label:11s}: {dt:7.3f} s  {g.n_tasks / dt:12,.0f} tasks/s")
    h = layered(1000, width=20, density=0.1, nodes=16, beta=1.0, seed=2)
    view = GraphView(16, costs_for(h, 16))
    dt, _ = best_of(lambda: make("heft").map(view), args.repeat, collect=True)
    print(f"HEFT, {h.n_tasks} tasks ({h.n_edges} edges) on 16 heterogeneous nodes: {dt:.3f} s")
    if args.milp > 0:
        from dlbkit.families.graph.model.generate import atmospheric
        from dlbkit.families.graph.sim.static import simulate_graph
        for model, cost in (("exact", "standard"), ("relaxed", "thesis")):
            for m in (2, 4):
                t = time.perf_counter()
                tr = simulate_graph(m, atmospheric(), make("milp", {"model": model, "time_limit": args.milp}),
                                    cost_model=cost)
                info = tr.meta["plan_info"]
                print(f"milp {model:7s} ({cost} model), atmospheric graph on {m} nodes: {time.perf_counter() - t:6.1f} s, "
                      f"makespan {tr.makespan:g}, objective {info['objective']:.4g}, dual bound "
                      f"{info['dual_bound']:.4g}, gap {info['gap']:.1%}, optimal {info['optimal']}")


if __name__ == "__main__":
    main()
