"""Round-robin dispatch: task k goes to node k mod n, whatever the loads."""

from __future__ import annotations

from sixth.balancers.base import BaggingBalancer
from sixth.model.view import BagView

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["BagRoundRobin"]


@register
class BagRoundRobin(BaggingBalancer):
    """Cyclic placement: the next task goes to the node after the last one, in index order.

    Source: the cyclic splitting of Wang & Morris 1985 (load sharing in distributed systems). Helps:
    equal nodes and equal tasks, where it is optimal and reads nothing. Backfires: unequal speeds or
    sizes, since it never looks at a load.
    """

    name = "bag-round-robin"
    source = "Wang & Morris 1985, cyclic splitting"
    taxonomy = Taxonomy("master (the dispatcher)", "central (dispatcher)", "none", "one task", "next task")

    def start(self, view: BagView, rng=None) -> None:
        super().start(view, rng)
        self.next_ = 0

    def pick(self, view: BagView) -> int:
        node = self.next_ % view.n_nodes
        self.next_ = node + 1
        return node
