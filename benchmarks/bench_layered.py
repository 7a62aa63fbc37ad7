"""CPU time of one `dlbkit.families.graph.model.generate.layered` call (edges drawn, TaskGraph built and checked),
the process's peak RSS, and a digest of the graph to compare two versions' graphs.

Usage: python benchmarks/bench_layered.py N [NODES]   (NODES: a cost table of that many columns)
CPU time (time.process_time), not wall time: the machine is shared.
"""

import hashlib
import resource
import sys
import time

from dlbkit.families.graph.model.generate import layered

n, nodes = int(sys.argv[1]), (int(sys.argv[2]) if len(sys.argv) > 2 else None)
t = time.process_time()
g = layered(n, nodes=nodes)
cpu = time.process_time() - t
fields = (g.ids, g.loads, g.costs, g.edges, g.preds, g.succs, g.topo, g.name)
digest = hashlib.sha256(repr(fields).encode()).hexdigest()[:16]
print(f"layered({n}, nodes={nodes}): cpu {cpu:.3f} s, peak RSS "
      f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, {g.n_edges} edges, digest {digest}")
