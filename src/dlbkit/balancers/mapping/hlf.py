"""Highest Level First with Estimated Times (HLFET): a classic list scheduler."""

from __future__ import annotations

import heapq

from ..base import MappingBalancer, Plan, Taxonomy
from ..registry import register
from ._common import Timeline, data_ready

__all__ = ["HighestLevelFirst"]


@register
class HighestLevelFirst(MappingBalancer):
    """HLF: among the ready tasks, the one of highest static level goes next, on the processor where
    it can start earliest (no insertion).

    Source: Adam, Chandy & Dickson 1974, "A comparison of list schedules for parallel processing
    systems", CACM 17(12) (HLFET, as surveyed by Kwok & Ahmad 1999 §5.1). Static level = the longest
    path of mean execution times to an exit, communication ignored. Communication is counted when
    choosing the processor (earliest start with the data arrived). Ties: higher level, then lowest
    index; processors: lowest index. The plan's order is the scheduling sequence. 002 §2.2 relates
    its precedence level to this level (with communication).

    Helps: cheap (O(e·m)), good when communication is light.
    Backfires: its priority ignores communication, so communication-heavy graphs get spread out.
    """

    name = "hlf"
    source = "Adam, Chandy & Dickson 1974; Kwok & Ahmad 1999 §5.1"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its cost estimates",
                        "every task placed once", "highest static level first; earliest start time")
    _parameter_constraints: dict = {}

    def __init__(self):
        pass

    def map(self, view) -> Plan:
        costs = view.costs
        g = costs.graph
        n, m = g.n_tasks, view.n_nodes
        w = [sum(r) / m for r in costs.exec]
        level = [0.0] * n
        for i in reversed(g.topo):
            level[i] = w[i] + max((level[j] for j, _ in g.succs[i]), default=0.0)
        lines = [Timeline() for _ in range(m)]
        proc, finish = [0] * n, [0.0] * n
        npred = [len(p) for p in g.preds]
        heap = [(-level[i], i) for i in g.entries]
        heapq.heapify(heap)
        seq = []
        while heap:
            i = heapq.heappop(heap)[1]
            row = costs.exec[i]
            best = None
            for p in range(m):
                st = lines[p].earliest(data_ready(costs, i, p, proc, finish), row[p], insertion=False)
                if best is None or st < best[0]:
                    best = (st, p)
            st, p = best
            proc[i], finish[i] = p, st + row[p]
            lines[p].add(st, finish[i])
            seq.append(i)
            for j, _ in g.succs[i]:
                npred[j] -= 1
                if npred[j] == 0:
                    heapq.heappush(heap, (-level[j], j))
        return Plan(tuple(proc), tuple(seq), {"estimate": max(finish)})
