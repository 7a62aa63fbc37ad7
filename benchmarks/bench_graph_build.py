"""Time to build the complete m-ary in-tree (`dlbkit.model.graph_gen.in_tree`, a TaskGraph checked
when built) and the process's peak RSS.

Usage: python benchmarks/bench_graph_build.py [--m 2] [--k 21] [--repeat 3]
Prints the tasks, the best wall time and the CPU time of that call (the machine is shared: CPU time
varies less), and the peak RSS of the process (ru_maxrss: the graph and the build's temporaries).
"""

import argparse
import resource
import time

from dlbkit.model.graph_gen import in_tree
from timing import best_of


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=2)
    ap.add_argument("--k", type=int, default=21)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    cpu = []

    def build():
        c0 = time.process_time()
        g = in_tree(a.m, a.k)
        cpu.append(time.process_time() - c0)
        return g.n_tasks

    wall, n = best_of(build, a.repeat, collect=True)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"in_tree({a.m}, {a.k}): {n:,} tasks, best wall {wall:.2f} s, best CPU {min(cpu):.2f} s, "
          f"peak RSS {rss:.0f} MB")


if __name__ == "__main__":
    main()
