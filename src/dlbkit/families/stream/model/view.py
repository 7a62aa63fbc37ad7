"""The job-stream family's view: what a placement balancer reads of the nodes' queues when a job arrives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from dlbkit.model.view import View

__all__ = ["StreamView"]


@dataclass
class StreamView(View):
    """What a node knows when a job arrives at it and it places the job's tasks (the job-stream
    family, 003): the deciding ``node`` is the job's origin; per node i, ``queue[i]`` is the tasks
    in its system (waiting and in service: the supermarket model's "customers", 003 §3.2), as the
    origin knows it (exactly, or as old as ``updated_at[i]`` under an information model),
    ``slots[i]`` its cores (tasks it serves at once) and ``speeds[i]`` its nominal speed. A
    balancer placing a batch may add to ``queue`` as it goes (the engine refreshes the view before
    every decision). ``neighbours`` is empty: every node may place on every other.
    """

    n_nodes: int
    queue: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    time: float = 0.0
    node: int = 0
    updated_at: list[float] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        self._fill(self.n_nodes, queue=0, slots=1, speeds=1.0, updated_at=0.0)
