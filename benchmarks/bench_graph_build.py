"""Time to build the complete m-ary in-tree (`dlbkit.families.graph.model.generate.in_tree`, a TaskGraph checked
when built) and the process's peak RSS.

Usage: python benchmarks/bench_graph_build.py [--m 2] [--k 21] [--repeat 3] [--digest]
Prints the tasks, the best wall time and the CPU time of that call (the machine is shared: CPU time
varies less), and the peak RSS of the process (ru_maxrss: the graph and the build's temporaries).
--digest: also a sha256 prefix of the repr of each field of the graph (ids, loads, edges, preds,
succs, topo, index), to compare two versions' graphs.
"""

import argparse
import hashlib
import resource
import time

from dlbkit.families.graph.model.generate import in_tree
from timing import best_of


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--k", type=int, default=21)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--digest", action="store_true")
    a = ap.parse_args()
    cpu, graph = [], []

    def build():
        c0 = time.process_time()
        g = in_tree(a.m, a.k)
        cpu.append(time.process_time() - c0)
        graph[:] = [g]
        return g.n_tasks

    wall, n = best_of(build, a.repeat, collect=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"in_tree({a.m}, {a.k}): {n:,} tasks, best wall {wall:.2f} s, best CPU {min(cpu):.2f} s, "
          f"peak RSS {rss:.0f} MB")
    if a.digest:
        g = graph[0]
        print({f: digest(getattr(g, f)) for f in ("ids", "loads", "edges", "preds", "succs", "topo")}
              | {"index": digest(list(g.index.items()))})


def digest(seq) -> str:
    h = hashlib.sha256()
    for s in range(0, len(seq), 100_000):  # in slices: one repr of 10⁷ tuples would take gigabytes
        h.update(repr(seq[s:s + 100_000]).encode())
    return h.hexdigest()[:16]


if __name__ == "__main__":
    main()
