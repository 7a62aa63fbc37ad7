"""CPOP: Critical Path On a Processor (Topcuoglu, Hariri & Wu 2002)."""

from __future__ import annotations


from dlbkit.families.graph.model.costs import downward_rank, upward_rank
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import list_schedule, plan_order
from dlbkit.families.graph.balancers.heft import _standard

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

    def map(self, view) -> Plan:
        costs = view.costs if view.costs.kind == "standard" else _standard(view.costs)
        g = costs.graph
        m = view.n_nodes
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
        every = range(m)
        proc, start, finish, pos = list_schedule(costs, m, prio, allowed=lambda i: (p_cp,) if i in cp else every)
        return Plan(tuple(proc), plan_order(start, finish, pos),
                    {"estimate": max(finish), "critical_path": sorted(g.ids[i] for i in cp), "cp_processor": p_cp})
