"""Highest Level First with Estimated Times (HLFET): a classic list scheduler."""

from __future__ import annotations

from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import list_schedule

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

    def map(self, view) -> Plan:
        costs = view.costs
        g = costs.graph
        n, m = g.n_tasks, view.n_nodes
        w = costs.mean_exec()
        level = [0.0] * n
        for i in reversed(g.topo):
            level[i] = w[i] + max((level[j] for j, _ in g.succs[i]), default=0.0)
        proc, _, finish, pos = list_schedule(costs, m, level, insertion=False, by_start=True)
        seq = sorted(range(n), key=pos.__getitem__)  # the placement order
        return Plan(tuple(proc), tuple(seq), {"estimate": max(finish)})
