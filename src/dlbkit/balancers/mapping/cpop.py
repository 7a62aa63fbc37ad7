"""CPOP: Critical Path On a Processor (Topcuoglu, Hariri & Wu 2002)."""

from __future__ import annotations

import heapq

from ...model.graph_costs import downward_rank, upward_rank
from ..base import MappingBalancer, Plan, Taxonomy
from ..registry import register
from ._common import Timeline, data_ready, plan_order
from .heft import _standard

__all__ = ["CPOP"]

_TIE = 1e-9  # relative tolerance for "priority equals |CP|" (sums of floats)


@register
class CPOP(MappingBalancer):
    """CPOP: the critical path's tasks all on the one processor that runs them fastest; the other
    tasks, by priority, on the processor of earliest finish time.

    Source: Topcuoglu, Hariri & Wu 2002 §4.2 (Fig. 5): priority = rank_u + rank_d (eqs 3–4); |CP| =
    the entry task's priority; the critical path follows, from the entry, the successor whose
    priority equals |CP|; the critical-path processor minimises the path's total execution time; a
    ready queue ordered by priority; insertion-based EFT for tasks off the path. Ties: lowest index.
    On the paper's 10-task example it gives makespan 86 (Fig. 4b).

    Helps: graphs dominated by one long chain, which then pays no communication.
    Backfires: one processor carries the whole path even when it is loaded; a poor choice when the
    path is short relative to the rest of the graph.
    """

    name = "cpop"
    source = "Topcuoglu, Hariri & Wu 2002 §4.2"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its cost estimates",
                        "every task placed once", "priority rank_u + rank_d; critical path on one processor")
    _parameter_constraints: dict = {}

    def __init__(self):
        pass

    def map(self, view) -> Plan:
        costs = view.costs if view.costs.kind == "standard" else _standard(view.costs)
        g = costs.graph
        n, m = g.n_tasks, view.n_nodes
        up, down = upward_rank(costs), downward_rank(costs)
        prio = [u + d for u, d in zip(up, down)]
        entry = max(g.entries, key=lambda i: (prio[i], -i))
        cp_len = prio[entry]
        tol = _TIE * max(1.0, abs(cp_len))
        cp = {entry}
        k = entry
        while g.succs[k]:
            nxt = [j for j, _ in g.succs[k] if abs(prio[j] - cp_len) <= tol]
            if not nxt:
                break
            k = min(nxt)
            cp.add(k)
        p_cp = min(range(m), key=lambda p: (sum(costs.exec[i][p] for i in cp), p))
        lines = [Timeline() for _ in range(m)]
        proc, start, finish, pos = [0] * n, [0.0] * n, [0.0] * n, [0] * n
        npred = [len(p) for p in g.preds]
        heap = [(-prio[i], i) for i in g.entries]
        heapq.heapify(heap)
        seq = 0
        while heap:
            i = heapq.heappop(heap)[1]
            row = costs.exec[i]
            cands = [p_cp] if i in cp else range(m)
            best = None
            for p in cands:
                st = lines[p].earliest(data_ready(costs, i, p, proc, finish), row[p])
                if best is None or st + row[p] < best[0]:
                    best = (st + row[p], st, p)
            eft, st, p = best
            proc[i], start[i], finish[i], pos[i] = p, st, eft, seq
            seq += 1
            lines[p].add(st, eft)
            for j, _ in g.succs[i]:
                npred[j] -= 1
                if npred[j] == 0:
                    heapq.heappush(heap, (-prio[j], j))
        return Plan(tuple(proc), plan_order(start, finish, pos),
                    {"estimate": max(finish), "critical_path": sorted(g.ids[i] for i in cp), "cp_processor": p_cp})
