"""Least-loaded dispatch: the next task goes to the node that would finish it first."""

from __future__ import annotations

from sixth.balancers.base import BaggingBalancer
from sixth.model.view import BagView

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["BagLeastLoaded"]


@register
class BagLeastLoaded(BaggingBalancer):
    """Greedy list scheduling: the task goes to the node of least estimated finish, its load plus the
    task over its nominal speed (the lowest index on a tie); *by_speed* False compares the loads alone.

    Source: Graham 1969 (list scheduling; bounds on multiprocessing timing anomalies). Helps: unequal
    speeds and sizes known in advance. Backfires: sizes that are poor estimates (``jitter``), since it
    trusts them.
    """

    name = "bag-least-loaded"
    source = "Graham 1969, list scheduling"
    taxonomy = Taxonomy("master (the dispatcher)", "central (dispatcher)", "global (exact loads)", "one task",
                        "next task")
    _parameter_constraints = {"by_speed": [bool]}

    def __init__(self, *, by_speed: bool = True):
        self.by_speed = by_speed

    def pick(self, view: BagView) -> int:
        if self.by_speed:
            return min(range(view.n_nodes), key=view.finish_estimate)
        return min(range(view.n_nodes), key=lambda i: view.loads[i])
