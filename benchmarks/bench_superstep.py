"""Wall time of the synchronous T3D superstep simulator on 001 Tables 4.7 and 4.8.

Balanced binary tree d = 16 (65 535 nodes), i = 1, local BF, 2-D torus, p = 2 … 512: nine GDEM runs
(Table 4.7) and nine LDSV runs (Table 4.8). Prints per p: iterations, simulated total, wall seconds
(best of --repeat) and executed nodes per wall second; then the sum of the best walls.

    python benchmarks/bench_superstep.py [--repeat 3] [--which gdem ldsv]
"""

from __future__ import annotations

import argparse

from dlbkit.families.tree.balancers import GDEM, Loadserver
from dlbkit.families.tree.model.workload import TaskTree
from dlbkit.families.tree.sim.superstep import simulate_superstep
from timing import best_of

P_ALL = (2, 4, 8, 16, 32, 64, 128, 256, 512)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--which", nargs="+", default=["gdem", "ldsv"], choices=["gdem", "ldsv"])
    args = ap.parse_args()
    tree = TaskTree("balanced", depth=16, grain=100, order="bf")
    for which in args.which:
        print(f"{which}: |    p | iterations | total (s) | wall (s) | nodes/s |")
        total_wall = 0.0
        for p in P_ALL:
            # a fresh balancer each run: it keeps state across a run
            best, r = best_of(lambda: simulate_superstep(
                tree, GDEM(interval=1) if which == "gdem" else Loadserver(interval=1), p=p), args.repeat)
            total_wall += best
            print(f"| {p:4d} | {r.iterations:10d} | {r.total:9.4f} | {best:8.3f} | {r.nodes / best:9.0f} |")
        print(f"{which}: sum of best walls over the nine runs: {total_wall:.2f} s")


if __name__ == "__main__":
    main()
