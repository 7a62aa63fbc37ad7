"""METIS mapping: a balanced minimum-cut partition of the task graph, one part per processor."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["Metis", "RESOLUTION"]

#: METIS takes integer weights: the largest task weight and the largest edge's data become this many
#: units and the rest are scaled alike and rounded (to the nearest unit; a task of weight 0 stays 0,
#: an edge carrying data keeps at least 1). Rounding moves a weight by at most half a unit, 1/2000 of
#: the largest, which is far below METIS's own balance tolerance (ufactor: 1.001 recursive, 1.03 k-way)
#: while sums of weights stay far from METIS's 32-bit limit up to millions of tasks.
RESOLUTION = 1000


@register
class Metis(MappingBalancer):
    """METIS: partition the task graph by weight (pymetis), part k on processor k, then list order.

    Source: Karypis & Kumar 1998, "A fast and high quality multilevel scheme for partitioning
    irregular graphs", SIAM J. Sci. Comput. 20(1) (METIS: coarsen, partition, refine); issue 13's
    description "pymetis partition of the graph by weight, then list order". The DAG is read as an
    undirected graph: a task weighs its mean execution time over the processors (the load on identical
    nodes, HEFT's w̄ for a cost table), an edge its data; an edge carrying no data is left out (cutting
    it costs nothing). Both are scaled to integers (:data:`RESOLUTION`). METIS minimises the data cut
    between m parts (m processors) while each part's weight stays near its target: ``tpwgts`` =
    the processors' relative capacity c_p = Σ_i w̄_i / Σ_i exec(i, p), which is the processor's speed on
    a load graph (so a node twice as fast gets twice the work) and its throughput on a cost table. Part
    k runs on processor k (the target weights are indexed by processor). METIS's randomness is seeded
    from the engine's Generator (one draw: the ``seed`` option), so a seed gives one plan. The order
    is the evaluator's list rule (highest precedence level first, 002 App. A.2): the plan has no order.
    pymetis chooses recursive bisection for m ≤ 8, k-way above; both minimise the edge cut.

    A processor is a part even when two share a machine (cores): their transfers are free, so a cut
    between them costs nothing that METIS is told about.

    Helps: communication-heavy graphs of independent or weakly coupled components (each kept on one
    node); large graphs (near-linear time); heterogeneous speeds through the target weights.
    Backfires: it balances total work, not the work available at each moment: a part may hold a whole
    level of the DAG and idle while the others wait (precedence and the critical path are invisible to
    a partitioner), and transfers are counted by volume, not by when they delay a task.
    """

    name = "metis"
    source = "Karypis & Kumar 1998 (METIS, via pymetis); issue 13"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its cost estimates",
                        "every task placed once", "balanced minimum-cut partition, then highest level first")

    def map(self, view) -> Plan:
        import pymetis

        costs = view.costs
        g = costs.graph
        n, m = g.n_tasks, view.n_nodes
        w = costs.mean_exec()
        targets = capacities(costs, w)
        seed = int(self.rng_.integers(0, 2**31 - 1))
        if m == 1 or n == 0:
            return Plan((0,) * n, None, {"cut_data": 0.0, "targets": targets, "metis_seed": seed})
        top = max(w)
        vw = [round(x * RESOLUTION / top) for x in w] if top > 0 else [1] * n
        nbrs: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for i in range(n):
            for j, d in g.succs[i]:
                if d > 0:
                    nbrs[i].append((j, d))
                    nbrs[j].append((i, d))
        dmax = max((d for row in nbrs for _, d in row), default=0.0)
        xadj, adjncy, ew = [0], [], []
        for row in nbrs:
            for j, d in row:
                adjncy.append(j)
                ew.append(max(1, round(d * RESOLUTION / dmax)))
            xadj.append(len(adjncy))
        with _c_stdout_silenced():
            part = pymetis.part_graph(m, pymetis.CSRAdjacency(xadj, adjncy), vweights=vw, eweights=ew or None,
                                      tpwgts=targets, options=pymetis.Options(seed=seed)).vertex_part
        a = tuple(int(x) for x in part)
        cut = sum(d for i in range(n) for j, d in g.succs[i] if a[i] != a[j])
        return Plan(a, None, {"cut_data": float(cut), "targets": targets, "metis_seed": seed})


#: held while descriptor 1 is redirected (:func:`_c_stdout_silenced`)
_REDIRECTING = threading.Lock()


@contextmanager
def _c_stdout_silenced() -> Iterator[None]:
    """METIS's C code printf()s notes such as "***You are trying to partition a graph into too many
    parts!" (more nodes than tasks, or as few as 4 parts of 5 tasks with one task's weight or one
    target dominating: valid calls whose partition it still returns) on the process's
    standard output, where ``dlbkit schedule --json`` prints its JSON: they made that output
    unparsable. Here file descriptor 1 points to the null device during the call (C's buffer flushed
    before it is restored); Python's own output is flushed first and not touched. Another thread's
    output to descriptor 1 during the call is lost too: the price of a C library with no quiet flag.

    One call at a time (a lock): two threads partitioning at once (``dlbkit.schedule`` from a thread
    pool) would otherwise each save descriptor 1, the second saving the null device, and restore in
    the other order, leaving standard output on the null device for good. C's buffer is flushed
    before the redirection too: what other C code printed and had not yet written went to the null
    device with METIS's notes."""
    with _REDIRECTING:
        if sys.stdout is not None:  # None when the process started without descriptor 1 (a daemon)
            sys.stdout.flush()
        try:
            libc = ctypes.CDLL(None)  # the C library's fflush: METIS's printf is buffered there
            saved = os.dup(1)
        except OSError:  # no descriptor 1 (a daemon), or no C library to flush: leave stdout alone
            libc = saved = None
        if saved is None:
            yield
            return
        try:
            libc.fflush(None)
            with open(os.devnull, "wb") as null:
                os.dup2(null.fileno(), 1)
                try:
                    yield
                finally:
                    libc.fflush(None)
                    os.dup2(saved, 1)
        finally:
            os.close(saved)


def capacities(costs, w) -> list[float]:
    """Each processor's share of the work, summing to 1: c_p = Σ_i w_i / Σ_i exec(i, p), normalised.
    Equal shares when no task has work; when some processors run every task in no time, they share
    it all equally."""
    tot = sum(w)
    time = [sum(r[p] for r in costs.exec) for p in range(costs.n_nodes)]
    if tot <= 0:
        cap = [1.0] * len(time)
    elif min(time) <= 0:
        cap = [1.0 if t <= 0 else 0.0 for t in time]
    else:
        cap = [tot / t for t in time]
    s = sum(cap)
    return [c / s for c in cap]
