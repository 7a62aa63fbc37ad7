"""Speed-aware d choices: the sampled node where the task would finish first, by queue and speed."""

from __future__ import annotations

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import least
from dlbkit.families.stream.balancers.power_of_d import PowerOfD

__all__ = ["SpeedAwareD"]


@register
class SpeedAwareD(PowerOfD):
    """Speed-aware d choices: sample *d* nodes as ``power-of-d`` does and place the task on the one of
    smallest expected completion (queue + 1) / (speed × slots): the tasks ahead of it and itself,
    served by the node's slots at its nominal speed; ties broken uniformly at random. Its parameters
    and sampling are :class:`~.power_of_d.PowerOfD`'s; only the choice among the d differs.

    Source: 003 §5.2's remark that Nezha assumes identical servers and that heterogeneous power-of-d
    "should compare expected completion time"; the heterogeneous supermarket analyses (Mukhopadhyay
    & Mazumdar 2016; Hellemans & Van Houdt 2018).

    Helps: on heterogeneous nodes a fast node with a longer queue can still be the better choice.
    Backfires: nominal speeds ignore availability (a node that lost its CPU to other users looks
    fast; the queue grows there until its length shows it).
    """

    name = "speed-d"
    source = "003 §5.2; Mukhopadhyay & Mazumdar 2016"
    taxonomy = Taxonomy("arrival", "distributed", "d sampled nodes and nominal speeds", "one task",
                        "smallest (queue + 1) / (speed × slots) of d random nodes")

    def place(self, view) -> int:
        q, s, c = view.queue, view.speeds, view.slots
        cands = self.draws_.sample(range(view.n_nodes), self.d, self.replace)
        return least(cands, lambda j: (q[j] + 1) / (s[j] * c[j]), self.draws_)
