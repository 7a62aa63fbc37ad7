"""The bags family's view: what the dispatcher knows when it places the next task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dlbkit.model.view import View

__all__ = ["BagView"]


@dataclass
class BagView(View):
    """The dispatcher's knowledge (it decides centrally: ``node`` = -1).

    ``loads[i]``: the estimated work (task sizes, work units) placed on node i and not finished, as
    known at ``time`` (``updated_at[i]``: when node i last finished a task); ``tasks[i]``: tasks placed
    on node i so far; ``next_size``: the size of the task to place; ``remaining``: tasks not placed yet,
    that one included. ``speeds`` are the nominal speeds (1 for every worker of a real run, which knows
    none). ``neighbours`` stays empty: the dispatcher reaches every node and no rule reads a topology.
    """

    n_nodes: int
    speeds: list[float]
    time: float = 0.0
    node: int = -1
    loads: list[float] = field(default_factory=list)
    tasks: list[int] = field(default_factory=list)
    next_size: float = 0.0
    remaining: int = 0
    updated_at: list[float] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        self._fill(self.n_nodes, updated_at=0.0, loads=0.0, tasks=0)

    def finish_estimate(self, i: int) -> float:
        """Seconds after ``time`` node i would take to finish its load and the next task, at its nominal speed."""
        return (self.loads[i] + self.next_size) / self.speeds[i]
