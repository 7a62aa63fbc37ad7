"""Decision time (CPU seconds of ``balancer.map``) of every mapping balancer at the sizes users bring.

Usage: PYTHONPATH=src python benchmarks/bench_mapping_scale.py [--tasks 500,2000,10000] [--nodes 8,64,256]
       [--graph layered|in-tree] [--balancers a,b,...] [--limit SECONDS]
Graphs: ``layered(n, width=20, density=0.1, seed=1)`` or the binary in-tree of ⌈log₂(n+1)⌉ levels
(``in_tree(2, k)``: 511, 2 047, 8 191 tasks for 500, 2 000, 10 000). Each cell runs in its own process
under a CPU-time limit (RLIMIT_CPU) and prints "> LIMIT s" when it is hit. CPU time, not wall: the
machine is shared. milp runs its relaxed model only, and only up to 500 tasks (its exact model has
O(n²·m) rows; the time limit, not the graph, decides beyond a few dozen tasks).
"""

import argparse
import math
import resource
import subprocess
import sys
import time


def cell(balancer: str, graph: str, n: int, m: int) -> None:
    from dlbkit.balancers.registry import make
    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.model.generate import in_tree, layered
    from dlbkit.families.graph.model.view import GraphView
    import numpy as np
    g = layered(n, width=20, density=0.1, seed=1) if graph == "layered" else in_tree(2, math.ceil(math.log2(n + 1)))
    params = {"model": "relaxed", "time_limit": 30.0} if balancer == "milp" else {}
    b = make(balancer, params)
    view = GraphView(m, costs_for(g, m))
    b.start(view, np.random.default_rng(1))
    t0 = time.process_time()
    b.map(view)
    print(f"{time.process_time() - t0:.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", default="500,2000,10000")
    ap.add_argument("--nodes", default="8,64,256")
    ap.add_argument("--graph", default="layered", choices=("layered", "in-tree"))
    ap.add_argument("--balancers", default="")
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--cell", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cell:
        b, graph, n, m = args.cell
        cell(b, graph, int(n), int(m))
        return
    from dlbkit.balancers.registry import names as registered
    names = args.balancers.split(",") if args.balancers else registered("mapping")
    tasks = [int(x) for x in args.tasks.split(",")]
    nodes = [int(x) for x in args.nodes.split(",")]
    print(f"{args.graph} graphs; CPU seconds of map(); load average {' '.join(f'{x:.2f}' for x in __import__('os').getloadavg())}")
    print(f"{'balancer':18s}" + "".join(f"{f'{n}×{m}':>12s}" for n in tasks for m in nodes))
    for name in names:
        row, over = [], set()
        for n in tasks:
            for m in nodes:
                if name == "milp" and n > 500:
                    row.append("skip")
                    continue
                if m in over:  # more tasks on as many processors: not faster (saves the machine)
                    row.append(f"> {args.limit:g} s")
                    continue
                limit = args.limit

                def cap():
                    used = resource.getrusage(resource.RUSAGE_SELF).ru_utime
                    resource.setrlimit(resource.RLIMIT_CPU, (int(used + limit + 15), int(used + limit + 20)))
                p = subprocess.run([sys.executable, __file__, "--cell", name, args.graph, str(n), str(m)],
                                   capture_output=True, text=True, preexec_fn=cap)
                out = p.stdout.strip()
                if p.returncode == 0 and out and float(out) <= limit:
                    row.append(f"{float(out):.2f}")
                elif p.returncode in (0, -24, -9) or (out and float(out) > limit):
                    row.append(f"> {limit:g} s")
                    over.add(m)
                else:
                    row.append("error")
                    print(p.stderr.strip().splitlines()[-1], file=sys.stderr)
        print(f"{name:18s}" + "".join(f"{c:>12s}" for c in row), flush=True)


if __name__ == "__main__":
    main()
