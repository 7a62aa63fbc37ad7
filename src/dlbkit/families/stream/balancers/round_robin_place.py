"""Round-robin placement: each origin hands its tasks to the nodes in turn (PVM)."""

from __future__ import annotations

from dlbkit.families.stream.balancers.base import PlacementBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["RoundRobinPlacement"]


@register
class RoundRobinPlacement(PlacementBalancer):
    """Round-robin: each origin keeps its own pointer and gives its next task to the node after the
    one it gave the last to, starting with itself (one pointer per origin: every user's PVM is a
    "closed world" that knows nothing of the others' placements).

    Source: PVM's task placement, the baseline of 003 §2.2.1 and §6.3 (the loaded-cluster and parallel
    matrix runs). Registered as ``round-robin-place``: ``round-robin`` is the mapping kind's.

    Helps: an idle cluster and one user: k·n tasks land exactly k per node. Backfires: ignores load
    (003 §6.3.2.2: the task placed on the loaded node took 4724 s against about 3200 s), and several
    origins' pointers create hot spots (two users' 2- and 6-task programs give 3, 3, 1, 1 on 4 nodes).
    """

    name = "round-robin-place"
    source = "003 §2.2.1, §6.3 (PVM round-robin)"
    taxonomy = Taxonomy("arrival", "distributed", "none", "one task", "the next node in turn, per origin")
    reads_loads = False

    def start(self, view, rng=None):
        super().start(view, rng)
        self.next_: dict[int, int] = {}

    def place(self, view) -> int:
        o = view.node
        j = self.next_.get(o, o)
        self.next_[o] = (j + 1) % view.n_nodes
        return j
