"""Join the shortest queue: each task on a node with the fewest tasks (exact, global)."""

from __future__ import annotations

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import RandomizedPlacement

__all__ = ["JoinShortestQueue"]


@register
class JoinShortestQueue(RandomizedPlacement):
    """JSQ: each task on a node with the fewest tasks in its system (``view.queue``), ties broken
    uniformly at random.

    Source: the deterministic shortest-queue rule that Algorithm 3.1 reduces to when one server is
    active (003 §3.3.3: it "generalizes the randomized d ≥ 2 algorithms and the deterministic
    shortest-queue algorithm"); Winston 1977 (optimality of JSQ for identical exponential servers).

    Helps: the shortest queues possible with exact, free information. Backfires: reads every node's
    load at every arrival; with stale information many deciders pick the same node (003 §2.7's hot
    spot and herd effect), which random sampling avoids.
    """

    name = "jsq"
    source = "003 §3.3.3; Winston 1977"
    taxonomy = Taxonomy("arrival", "distributed", "global (as fresh as the information model)", "one task",
                        "a shortest queue, random ties")

    def place(self, view) -> int:
        q = view.queue
        m = min(q)
        best = [j for j, x in enumerate(q) if x == m]
        return best[0] if len(best) == 1 else best[self.draws_.below(len(best))]
