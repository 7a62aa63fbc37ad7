"""HEFT: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri & Wu 2002)."""

from __future__ import annotations

from dlbkit.families.graph.model.costs import upward_rank
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import list_schedule, plan_order

__all__ = ["HEFT", "heft_schedule"]


def heft_schedule(costs, n_nodes: int, insertion: bool = True, fixed: dict | None = None, release: float = 0.0):
    """HEFT's schedule (Topcuoglu 2002 §4.1): rank_u under the standard model's averages, then
    :func:`~dlbkit.families.graph.balancers._common.list_schedule` in decreasing rank, earliest finish time.
    *fixed*/*release*: tasks already decided and the earliest start of the others (the replanning
    online mapper's use). Returns (processor, start, finish, position) per task."""
    rank = upward_rank(costs) if costs.kind == "standard" else upward_rank(_standard(costs))
    return list_schedule(costs, n_nodes, rank, ready_queue=False, insertion=insertion, fixed=fixed, release=release)


@register
class HEFT(MappingBalancer):
    """HEFT: tasks in decreasing upward rank, each on the processor that finishes it earliest.

    Source: Topcuoglu, Hariri & Wu 2002, "Performance-effective and low-complexity task scheduling
    for heterogeneous computing", IEEE TPDS 13(3), §4.1 (Fig. 3): rank_u (eq. 3) with mean execution
    and mean communication costs; tasks sorted by decreasing rank_u (a topological order); each task
    goes to the processor minimising EFT (eqs 5–6) with the **insertion-based** policy (a task may
    fill an idle gap between two already-scheduled tasks). Ties between processors: the lowest index.
    On the paper's 10-task example (Fig. 2) it gives makespan 80 (Fig. 4a).

    Estimates use the standard model's transfer formula (:mod:`dlbkit.families.graph.model.costs`); the plan
    (assignment + the order of planned start times) is then timed by the engine's evaluator under the
    chosen cost model, so under ``thesis`` costs the makespan is the evaluator's, not HEFT's estimate.

    Helps: heterogeneous processors and communication-heavy DAGs; O(e·m) decisions.
    Backfires: greedy per task (no look-ahead: PEFT's motivation); the mean costs mislead when
    processors differ wildly; it ignores contention and the thesis model's busy ends.
    """

    name = "heft"
    source = "Topcuoglu, Hariri & Wu 2002 §4.1"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its cost estimates",
                        "every task placed once", "decreasing upward rank; earliest finish time with insertion")
    _parameter_constraints = {"insertion": [bool]}

    def __init__(self, *, insertion: bool = True):
        self.insertion = insertion

    def map(self, view) -> Plan:
        proc, start, finish, pos = heft_schedule(view.costs, view.n_nodes, self.insertion)
        return Plan(tuple(proc), plan_order(start, finish, pos), {"estimate": max(finish)})


def _standard(costs):
    """The same costs read under the standard model (HEFT's rank is always the published one)."""
    import dataclasses
    return dataclasses.replace(costs, kind="standard")
