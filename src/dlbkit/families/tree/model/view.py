"""The task-tree family's view: what a migration balancer reads of the nodes' queues."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from dlbkit.model.view import View

__all__ = ["TreeView"]


@dataclass
class TreeView(View):
    """A deciding node's knowledge of a task-tree computation (what a migration balancer reads).

    Per node i (lists of length ``n_nodes``): ``queue[i]``, the tasks waiting in its queue (Haron's
    load measure, 001 §2.1: queue length, not counting the task it is running); ``done[i]``, tasks it
    has completed; ``updated_at[i]``, when those two were measured (their age is ``time -
    updated_at[i]``: a node knows its own entry exactly and others' only as recently as a message
    brought them); ``neighbours[i]``, the nodes it may exchange work with (the topology; the complete
    graph by default); ``speeds[i]``, nominal speeds (1.0 by default); ``work[i]``, the estimated
    remaining work its waiting tasks stand for, in tree nodes (the sum of the workload's expected
    subtree sizes; all zero when the engine has no estimate, as for user trees in real runs).
    ``node`` is the deciding node
    (-1 for a central decision, e.g. :meth:`~dlbkit.families.tree.balancers.base.MigrationBalancer.balance`).
    ``colours`` are the topology's edge colour classes (lists of disjoint node pairs, in exchange
    order; :func:`dlbkit.model.topology.edge_colouring`) when the engine knows the topology; empty
    means a dimension-exchange rule derives them from ``neighbours``.
    """

    n_nodes: int
    time: float = 0.0
    queue: list[int] = field(default_factory=list)
    updated_at: list[float] = field(default_factory=list)
    done: list[int] = field(default_factory=list)
    neighbours: list[Sequence[int]] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    work: list[float] = field(default_factory=list)
    node: int = -1
    colours: list[list[tuple[int, int]]] = field(default_factory=list)

    def __post_init__(self):
        self._fill(self.n_nodes, queue=0, done=0, speeds=1.0, work=0.0)
        self._fill_common()

    @property
    def waiting(self) -> int:
        """Tasks waiting over all nodes as known here (Haron's n(t), 001 §2.7)."""
        return sum(self.queue)
