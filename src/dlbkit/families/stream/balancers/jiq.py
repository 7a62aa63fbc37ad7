"""Join the idle queue: a task goes to a node known to have a free slot, else to a random node."""

from __future__ import annotations

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import RandomizedPlacement

__all__ = ["JoinIdleQueue"]


@register
class JoinIdleQueue(RandomizedPlacement):
    """JIQ: place the task on a node the origin knows to be idle (fewer tasks than slots), drawn
    uniformly among them; when it knows none, on a node drawn uniformly from all.

    Source: Lu, Xie, Kliot, Geller, Larus & Greenberg 2011, "Join-Idle-Queue: a novel load balancing
    algorithm for dynamically scalable web services" (idle servers report to dispatchers' I-queues;
    here the origin's view plays the I-queue, so a report is what the information model delivers);
    cited in 003 §5.2 as a way to avoid global state.

    Helps: at light and moderate load nearly every task starts at once, with no probe on the critical
    path. Backfires: at high load nobody is idle and it is random placement; with stale information
    several origins send to the same "idle" node.
    """

    name = "jiq"
    source = "Lu et al. 2011; 003 §5.2"
    taxonomy = Taxonomy("arrival", "distributed", "idle nodes (as fresh as the information model)", "one task",
                        "an idle node at random, else any node at random")

    def place(self, view) -> int:
        q, c = view.queue, view.slots
        idle = [j for j in range(view.n_nodes) if q[j] < c[j]]
        if idle:
            return idle[self.draws_.below(len(idle))]
        return self.draws_.below(view.n_nodes)
