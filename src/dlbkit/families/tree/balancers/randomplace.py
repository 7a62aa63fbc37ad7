"""Random placement: each new task goes to a node chosen uniformly at random (Haron's "Random")."""

from __future__ import annotations

from numbers import Integral

from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["RandomPlacement"]


@register
class RandomPlacement(MigrationBalancer):
    """Random: every child task created goes to a node drawn uniformly from all nodes (the node
    itself included: then it is run locally); with a *threshold*, a child stays local while the
    node's waiting queue holds fewer than *threshold* tasks, and only the rest go to random nodes.

    Source: 001 §2.3.3 (Haron 1998, "Random algorithm"): two variants, "a newly created task is sent
    to a randomly chosen processor in the system [Chakrabarti, Ranade & Yelick 1994; Shu & Wu 1996]"
    (*threshold* None, the default) "or a task is migrated only when the workload reaches above a
    certain 'heavy' limit [Eager, Lazowska & Zahorjan 1986]" (*threshold* = that limit h, so a node
    keeps at most h waiting tasks from its own expansions); 001 §2.4: "If the destination processor is
    itself the task will be processed locally". No load information, any topology.

    The engine calls :meth:`on_spawn` after each expansion with ``view.queue[node]`` = the waiting
    tasks before the children are added; children are decided in their creation order, one draw
    ``rng.integers(n_nodes)`` per child that is not kept by the threshold. Idle nodes ask nobody.

    Helps: spreads the tree fast from a single root with no information (Haron's phase I).
    Backfires: poor locality; without a threshold about (P-1)/P of all tasks cross the network, and
    a node may still run dry while others queue work (nothing is ever pulled).
    """

    name = "random"
    source = "001 §2.3.3 (Haron 1998, Random algorithm); Eager, Lazowska & Zahorjan 1986"
    taxonomy = Taxonomy("sender (at task creation)", "distributed", "none (threshold: its own queue length)",
                        "every new task, or those above the threshold", "the new task; destination uniform at random")
    sender_initiated = True
    reads_loads = False
    _parameter_constraints = {"threshold": [None, Interval(Integral, 0, None)]}

    def __init__(self, *, threshold: int | None = None):
        self.threshold = threshold

    def on_spawn(self, view: TreeView, node: int, n_children: int) -> list[int]:
        p = view.n_nodes
        if self.threshold is None:
            return [int(d) for d in self.rng_.integers(p, size=n_children)]
        q = view.queue[node]
        out = []
        for _ in range(n_children):
            d = node if q < self.threshold else int(self.rng_.integers(p))
            if d == node:
                q += 1
            out.append(d)
        return out
