"""The placement kind: the base of the job-stream family's balancers (which node a job joins)."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from dlbkit.balancers.base import Balancer
from dlbkit.families.stream.model.view import StreamView

__all__ = ["PlacementBalancer"]


class PlacementBalancer(Balancer):
    """Decides where the tasks of a job that arrived at a node run (the job-stream family, 003).

    One required method, :meth:`place`: from a :class:`~dlbkit.families.stream.model.view.StreamView` whose ``node``
    is the job's origin, the node one task goes to. Optional hook :meth:`place_batch` for a job of k
    tasks (default: :meth:`place` k times, adding each placed task to ``view.queue`` in between when
    *update* is true, so that a decider does not herd its own batch onto one node; 003 §5.2's "local
    optimistic update"). Engines call them through :func:`dlbkit.families.stream.balancers.decide.place`, which
    checks every answer is a node. ``reads_loads`` False: the rule never reads ``view.queue`` (local,
    random, round-robin), so engines need not fill it. Randomised rules draw only from ``self.rng_``.
    """

    kind = "placement"
    kind_use = "it places each arriving job: dlbkit.Cluster, dlbkit cluster, a job-stream workload"
    #: False for rules that never read other nodes' loads (engines then skip filling the view)
    reads_loads: ClassVar[bool] = True

    @abstractmethod
    def place(self, view: StreamView) -> int:
        """The node that one task arriving at ``view.node`` runs on."""

    def place_batch(self, view: StreamView, k: int, update: bool = True) -> list[int]:
        """The nodes of a job's *k* tasks (default: :meth:`place` each; *update*: count each placed
        task in ``view.queue`` before placing the next)."""
        out = []
        for _ in range(k):
            j = self.place(view)
            out.append(j)
            if update:
                view.queue[j] += 1
        return out
