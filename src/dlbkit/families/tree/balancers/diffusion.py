"""Diffusion: receiver- and sender-initiated load exchange with the neighbours (RID and SID)."""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral, Real

from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register

__all__ = ["ReceiverDiffusion", "SenderDiffusion", "apportion"]

_SOURCE = ("Willebeek-LeMair & Reeves 1993, IEEE TPDS 4(9), as described in 001 §2.3.1 "
           "(Haron 1998, receiver-initiated diffusion)")


def apportion(total: int, weights: dict[int, Fraction]) -> dict[int, int]:
    """Split *total* whole tasks in proportion to *weights* (node → positive weight): the largest
    remainder (Hamilton) method. Every node gets the whole part of its exact share, and the tasks
    left over go one each to the largest remainders (ties: the lower node). Shares sum to *total*."""
    W = sum(weights.values())
    if total <= 0 or W <= 0:
        return {}
    exact = {j: total * w / W for j, w in weights.items()}
    out = {j: int(e) for j, e in exact.items()}  # exact shares are non-negative: int() is floor
    left = total - sum(out.values())
    for j in sorted(exact, key=lambda j: (-(exact[j] - out[j]), j))[:left]:
        out[j] += 1
    return {j: n for j, n in out.items() if n > 0}


def _mean(own: int, loads: dict[int, int]) -> Fraction:
    """The mean load of a node (*own*) and its neighbours (*loads*), exactly."""
    return Fraction(own + sum(loads.values()), len(loads) + 1)


@register
class ReceiverDiffusion(MigrationBalancer):
    """Receiver-initiated diffusion (RID): a node whose load falls low asks each neighbour with
    more than the neighbourhood's average for a share of its excess.

    Source: Willebeek-LeMair & Reeves 1993, "Strategies for dynamic load balancing on highly
    parallel computers", IEEE TPDS 4(9), as described in 001 §2.3.1 (Haron 1998, §2.3.1). For node
    i with load L_i (its waiting tasks, ``view.queue``: Haron's load measure, 001 §2.1 citing Kunz)
    and neighbours j (``view.neighbours[i]``, the topology):

    * trigger: L_i < L_LOW. The engine calls :meth:`on_idle` when a node holds at most
      *low_water* waiting tasks (and when it runs dry), so *low_water* = L_LOW − 1;
    * L̄_i, the mean load of i and its neighbours; proceed only if L̄_i − L_i > *threshold*
      (L_threshold);
    * excess weights w_j = L_j − L̄_i where L_j > L̄_i (else 0), W_i = Σ w_j;
    * request δ_j = (L̄_i − L_i) · w_j / W_i from neighbour j: one ``Transfer(j, i, n_j)``;
    * a neighbour gives at most half its current load per request (:meth:`on_request`, the base
      class's rule: ⌊q/2⌋ of its q waiting tasks, at most what was asked), for stability while
      load information ages.

    Whole tasks: the total asked, L̄_i − L_i rounded to the nearest task (halves up), is split over
    the neighbours in proportion to w_j by the largest remainder method (:func:`apportion`), so the
    n_j sum to it and a neighbour whose share rounds to nothing is not asked. Each n_j is then capped
    at ⌊(L_j − L_i)/2⌋, so that a move narrows the gap between the two nodes: the real-valued rule
    never lifts the receiver above the giver, but rounding can (a node with one waiting task, two
    neighbours with two: the deficit 2/3 rounds to one task, and taking it swaps the two loads, after
    which the giver asks it back; two such nodes traded the same task for as long as they ran,
    432 301 tasks moved for a tree of 573 in docs/experiments.md). All arithmetic is
    exact (fractions). Loads of the neighbours are as last reported (aged; the engines refresh them
    periodically, as W&R's periodic load updates to neighbours). Deterministic; it takes the engine's
    Generator like every migration balancer, and draws nothing.

    Defaults (ours; the source gives none): *low_water* 1 (ask while the last waiting task runs,
    which hides the request's latency); *threshold* 0.5 (with whole tasks, a deficit of at most half
    a task is not worth a message).

    Helps: fully distributed, neighbour-only information, and the under-loaded node acts, so busy
    nodes pay only to answer; W&R report it beats SID and suits large systems (001 §2.3.1).
    Backfires: work moves at most one hop per exchange, so on a sparse topology (a chain, a large
    ring) a single loaded region drains slowly; a node whose neighbours are all light waits even
    when work sits two hops away; the requested amounts rest on aged loads.
    """

    name = "rid"
    source = _SOURCE
    taxonomy = Taxonomy("receiver (load below L_LOW)", "distributed", "neighbourhood (aged queue lengths)",
                        "(mean - own) split over neighbours by excess; a donor gives at most half",
                        "oldest waiting tasks of every neighbour above the neighbourhood mean")
    receiver_initiated = True
    _parameter_constraints = {"low_water": [Interval(Integral, 0, None)],
                              "threshold": [Interval(Real, 0, None)]}

    def __init__(self, *, low_water: int = 1, threshold: float = 0.5):
        self.low_water = low_water
        self.threshold = threshold

    def on_idle(self, view: TreeView, node: int) -> list[Transfer] | None:
        nb = view.neighbours[node]
        if not nb:
            return None
        loads = {int(j): int(view.queue[j]) for j in nb}
        own = int(view.queue[node])
        mean = _mean(own, loads)
        deficit = mean - own
        if deficit <= self.threshold:
            return None
        excess = {j: L - mean for j, L in loads.items() if L > mean}
        total = int(deficit + Fraction(1, 2))  # nearest whole task, halves up
        shares = apportion(total, excess)
        # whole tasks: a move of n from j must narrow the gap, n <= (L_j - L_i) / 2 (see the docstring)
        shares = {j: min(n, (loads[j] - own) // 2) for j, n in shares.items()}
        return [Transfer(j, node, n) for j, n in sorted(shares.items()) if n > 0] or None


@register
class SenderDiffusion(MigrationBalancer):
    """Sender-initiated diffusion (SID): a node whose load rises above its neighbourhood's average
    sends the excess to the lighter neighbours, in proportion to how far each is below the average.

    Source: Willebeek-LeMair & Reeves 1993, IEEE TPDS 4(9) (the sender-initiated mirror of RID, 001
    §2.3.1). For node i with load L_i and neighbours j, after an expansion: if L_i > *high_water*
    (L_HIGH) and L_i − L̄_i > *threshold* (L̄_i the mean load of i and its neighbours), deficits
    d_j = L̄_i − L_j where L_j < L̄_i, D_i = Σ d_j, and neighbour j is sent δ_j = (L_i − L̄_i)·d_j/D_i.

    Which hook, and why: a tree node's load only *rises* when an expansion creates children, so the
    trigger of a sender-initiated rule is exactly :meth:`on_spawn` (evaluated by the loaded node
    itself, with its own exact load and its neighbours' last reported ones, as W&R's fully
    distributed SID); the periodic :meth:`balance` hook is central (one decision over all nodes on
    the coordinator's view), which would make it a different, centralised algorithm. The cost of
    the hook: only the new children can be placed, so at most ``n_children`` tasks move per
    expansion, and they are the newest (deepest) tasks rather than the oldest.

    Whole tasks: L_i counts the new children; the total sent is ⌊L_i − L̄_i⌋ (never so much that
    i falls below the mean), at most the children, split over the lighter neighbours by the largest
    remainder method (:func:`apportion`). The first children in creation order go away and the
    last ones stay (the last child runs next: e.g. the greedy branch of a branch and bound).
    Between two load reports a node counts what it sent to each neighbour on top of that
    neighbour's reported load (state ``sent_``, cleared when a newer report arrives), so it does
    not flood a neighbour that looks idle only because its report is old.

    Defaults (ours; the source gives none): *high_water* 1 (a node with a single waiting task keeps
    it), *threshold* 1.0 (move only an excess of more than one whole task).

    Helps: spreads a tree from one root without anyone asking (every expansion pushes work
    downhill), neighbour-only information, no request round trips.
    Backfires: busy nodes pay for every decision; the tasks moved are the newest (the smallest
    subtrees of a depth-first search), so many small transfers; work moves one hop per expansion;
    W&R report RID beats it (001 §2.3.1).
    """

    name = "sid"
    source = "Willebeek-LeMair & Reeves 1993, IEEE TPDS 4(9); 001 §2.3.1 (Haron 1998: SID, the mirror of RID)"
    taxonomy = Taxonomy("sender (load above L_HIGH, at task creation)", "distributed",
                        "neighbourhood (aged queue lengths)",
                        "floor(own - mean) split over neighbours by deficit, at most the new children",
                        "the first new children; to neighbours below the neighbourhood mean")
    sender_initiated = True
    _parameter_constraints = {"high_water": [Interval(Integral, 0, None)],
                              "threshold": [Interval(Real, 0, None)]}

    def __init__(self, *, high_water: int = 1, threshold: float = 1.0):
        self.high_water = high_water
        self.threshold = threshold

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.sent_: dict[int, tuple[tuple, int]] = {}

    def _sent(self, view: TreeView, j: int) -> tuple[tuple, int]:
        """(the stamp of j's reported load, tasks sent to j since that report)."""
        stamp = (view.updated_at[j], view.queue[j])
        seen = self.sent_.get(j)
        return stamp, (seen[1] if seen is not None and seen[0] == stamp else 0)

    def _load(self, view: TreeView, j: int) -> int:
        """Neighbour j's reported load plus what this node sent it since that report."""
        return int(view.queue[j]) + self._sent(view, j)[1]

    def on_spawn(self, view: TreeView, node: int, n_children: int) -> list[int]:
        out = [node] * n_children
        nb = view.neighbours[node]
        own = int(view.queue[node]) + n_children
        if not nb or n_children == 0 or own <= self.high_water:
            return out
        loads = {int(j): self._load(view, j) for j in nb}
        k = len(loads)
        if k * own - sum(loads.values()) <= self.threshold * (k + 1):  # (k+1)·(L_i − L̄_i), in integers
            return out  # the common case, decided without fractions (this runs at every expansion)
        mean = _mean(own, loads)
        excess = own - mean
        deficit = {j: mean - L for j, L in loads.items() if L < mean}
        shares = apportion(min(n_children, int(excess)), deficit)
        pos = 0
        for j, n in sorted(shares.items()):  # the first children go, the last ones stay
            out[pos:pos + n] = [j] * n
            pos += n
            stamp, before = self._sent(view, j)
            self.sent_[j] = (stamp, before + n)
        return out
