"""Randomised work stealing: an idle node steals the oldest waiting tasks of a random victim."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["WorkStealing"]


@register
class WorkStealing(MigrationBalancer):
    """Work stealing: a node that runs dry asks a victim chosen uniformly at random among the others;
    the victim gives ⌊*fraction* · |D|⌋ of its |D| waiting tasks, the oldest first, at most *max_tasks*.

    Source: Blumofe & Leiserson 1999, "Scheduling multithreaded computations by work stealing",
    J. ACM 46(5) (§3: the thief picks the victim uniformly at random and steals from the top of its
    deque, i.e. the oldest work); the amount is the steal-half rule of docs/reference-models.md M2, the
    default (*fraction* 0.5: a victim with |D| ≥ 2 gives ⌊|D|/2⌋, one with 0 or 1 gives nothing).
    Cilk's steal-one is ``fraction=1.0, max_tasks=1``. 001 §6.2 asks for it as the modern baseline
    that phase-based rules must beat.

    The victim is drawn from ``view.neighbours[node]`` (the others, on the default complete graph)
    as ``neighbours[rng.integers(len(neighbours))]``, which on the complete graph is M2's
    ``r + 1 if r >= i else r``. A node without neighbours asks nobody. Draws come only from the
    Generator the engine passes to ``start``.

    Helps: no load information at all, each steal moves the largest subtrees (oldest tasks), and
    busy nodes pay nothing. Backfires: near the end, idle nodes keep asking empty victims (messages
    with no work); with few tasks per node a random victim is often empty.
    """

    name = "steal"
    source = "Blumofe & Leiserson 1999, J. ACM 46(5); docs/reference-models.md M2"
    taxonomy = Taxonomy("receiver (a node that runs dry steals)", "distributed", "none (the victim: its own queue)",
                        "floor(fraction * waiting), at most max_tasks", "oldest waiting tasks; victim uniform at random")
    receiver_initiated = True
    reads_loads = False
    _parameter_constraints = {"fraction": [Interval(Real, 0, 1, closed="right")],
                              "max_tasks": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, fraction: float = 0.5, max_tasks: int | None = None):
        self.fraction = fraction
        self.max_tasks = max_tasks

    def on_idle(self, view: TreeView, node: int) -> int | None:
        others = view.neighbours[node]
        if not others:
            return None
        return int(others[int(self.rng_.integers(len(others)))])

    def on_request(self, view: TreeView, victim: int, thief: int, queue_length: int, wanted: int = 0) -> int:
        # comparisons, not min/max: this runs at every steal request (M2: millions of them)
        n = math.floor(self.fraction * queue_length + 1e-9)  # 0.29 * 100 is 28.999…: count it as 29
        if self.max_tasks is not None and n > self.max_tasks:
            n = self.max_tasks
        if 0 < wanted < n:
            n = wanted
        return n if 0 <= n <= queue_length else (0 if n < 0 else queue_length)
