"""Spillback: pack tasks at their origin up to a utilisation threshold, then spill to one of the top k."""

from __future__ import annotations

from numbers import Integral, Real

from dlbkit.params import Interval
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import RandomizedPlacement

__all__ = ["Spillback"]


@register
class Spillback(RandomizedPlacement):
    """Spillback (two-phase hybrid placement): a node's utilisation is u_j = queue[j] / slots[j]. A
    task stays at its origin o while u_o < *threshold* (packing: no transfer, warm workers);
    otherwise it spills to a node drawn uniformly from the top k, the k nodes of smallest score,
    where a score is u_j truncated to 0 below *threshold* (so every node under the threshold ties
    with the best) and k = max(*top_k_absolute*, ⌊*top_k_fraction* · n⌋). The top k are taken by
    score with ties in a random order, so a tie at the k-th place is broken uniformly. The origin
    may be among them (Ray "spills back" to itself when it is still the best).

    Source: Ray's default ("hybrid") scheduling policy, the modern form named by 003 §5.2 for
    Nezha's weak batch placement: ``HybridSchedulingPolicy`` in ray-project/ray
    (src/ray/raylet/scheduling/policy/hybrid_scheduling_policy.h: utilisation below the spread
    threshold truncated to 0, the local node preferred when it scores best, one node at random from
    the top k; defaults ``scheduler_spread_threshold`` 0.5, ``scheduler_top_k_fraction`` 0.2,
    ``scheduler_top_k_absolute`` 1), and issue 14 ("pack locally up to a utilisation threshold, then
    one of the top-k at random"). Ray's utilisation is of resources, at most 1, and it queues a task
    it cannot place; here a node's queue is its utilisation above 1 (tasks wait at the node), so a
    node with a longer queue scores worse.

    Helps: light load stays local (no transfers, no probes); under load, the random choice among
    the k best spreads simultaneous deciders instead of herding them onto one node (003 §3.5.1's
    hot spot). Backfires: below the threshold the origin packs even while other nodes idle (on a
    heterogeneous cluster a slow origin keeps work a fast idle node would finish sooner); it reads
    every node's load (stale with gossip); with k = 1 it is the shortest-queue rule and herds on
    stale views.
    """

    name = "spillback"
    source = "Ray hybrid scheduling policy (spillback); 003 §5.2; issue 14"
    taxonomy = Taxonomy("arrival", "distributed", "global loads (as fresh as the information model)", "one task",
                        "the origin below a utilisation threshold, else one of the k least utilised at random")
    _parameter_constraints = {"threshold": [Interval(Real, 0, None)], "top_k_fraction": [Interval(Real, 0, 1)],
                              "top_k_absolute": [Interval(Integral, 1, None)]}

    def __init__(self, *, threshold: float = 0.5, top_k_fraction: float = 0.2, top_k_absolute: int = 1):
        self.threshold = threshold  # Ray's scheduler_spread_threshold
        self.top_k_fraction = top_k_fraction  # Ray's scheduler_top_k_fraction
        self.top_k_absolute = top_k_absolute  # Ray's scheduler_top_k_absolute

    def top_k(self, view) -> list[int]:
        """The k candidates of the spill phase, in score order (ties in a random order)."""
        n, q, c, th = view.n_nodes, view.queue, view.slots, self.threshold
        dr = self.draws_
        k = min(n, max(self.top_k_absolute, int(self.top_k_fraction * n)))
        keyed = []
        for j in range(n):
            u = q[j] / c[j]
            keyed.append((u if u >= th else 0.0, dr.u(), j))
        keyed.sort()
        return [j for _, _, j in keyed[:k]]

    def place(self, view) -> int:
        o = view.node
        if view.queue[o] / view.slots[o] < self.threshold:
            return o
        best = self.top_k(view)
        return best[self.draws_.below(len(best))]
