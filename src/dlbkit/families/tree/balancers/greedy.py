"""Central greedy and refine balancing of waiting tasks (Charm++'s GreedyLB and RefineLB kind)."""

from __future__ import annotations

import heapq
from abc import abstractmethod
from numbers import Real

from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register

__all__ = ["Greedy", "Refine", "net_transfers"]

_MANUAL = ("Charm++ manual, \"Load Balancing\" > \"Available Load Balancing Strategies\" "
           "(charm.readthedocs.io; charmplusplus/charm: doc/charm++/manual.rst)")


def _loads(view: TreeView) -> tuple[list[int], list[float]]:
    """Queue lengths and speeds (a speed that is not positive counts as 1)."""
    q = [max(0, int(x)) for x in view.queue]
    s = [float(x) if x > 0 else 1.0 for x in view.speeds]
    return q, s


def net_transfers(before: list[int], after: list[int]) -> list[Transfer]:
    """The transfers that turn loads *before* into *after* (the same total) moving the fewest
    tasks: a node sends only its surplus ``before - after`` (never more than it holds) and receives
    only its deficit; the largest surplus is paired with the largest deficit first (ties: the lower
    node), so there are at most (senders + receivers - 1) transfers."""
    give = sorted(([b - a, i] for i, (b, a) in enumerate(zip(before, after)) if b > a), key=lambda t: (-t[0], t[1]))
    take = sorted(([a - b, i] for i, (b, a) in enumerate(zip(before, after)) if a > b), key=lambda t: (-t[0], t[1]))
    out: dict[tuple[int, int], int] = {}
    gi = ti = 0
    while gi < len(give) and ti < len(take):
        n = min(give[gi][0], take[ti][0])
        key = (give[gi][1], take[ti][1])
        out[key] = out.get(key, 0) + n
        give[gi][0] -= n
        take[ti][0] -= n
        gi += give[gi][0] == 0
        ti += take[ti][0] == 0
    return [Transfer(src, dst, n) for (src, dst), n in sorted(out.items())]


def _move(x: list[int], s: list[float], donors: set[int], receivers: set[int], donor_ok, receiver_ok) -> list[int]:
    """Loads after moving single tasks from the most loaded donor (load x/s; ties: the lower node)
    to the receiver whose load after the move is least (ties: the lower node), while that is
    strictly below the donor's load: the maximum never rises, and Σ x(x+1)/2s falls with every
    move, so the loop ends. A node stays a donor while ``donor_ok(i, x)`` and holds a task, a
    receiver while ``receiver_ok(j, x)``."""
    x = list(x)
    hi: list[tuple[float, int, int]] = []  # (-load, node, x[node] when pushed: stale if it changed)
    lo: list[tuple[float, int, int]] = []  # (load after receiving one, node, x[node] when pushed)

    def push(i: int) -> None:
        if i in donors and x[i] > 0 and donor_ok(i, x):
            heapq.heappush(hi, (-x[i] / s[i], i, x[i]))
        if i in receivers and receiver_ok(i, x):
            heapq.heappush(lo, ((x[i] + 1) / s[i], i, x[i]))

    for i in sorted(donors | receivers):
        push(i)
    while hi and lo:
        if hi[0][2] != x[hi[0][1]]:
            heapq.heappop(hi)
            continue
        if lo[0][2] != x[lo[0][1]]:
            heapq.heappop(lo)
            continue
        h, (after, j, _) = hi[0][1], lo[0]
        if h == j or not after < x[h] / s[h]:
            break  # no receiver ends below the most loaded donor: no move lowers the maximum
        heapq.heappop(hi)
        heapq.heappop(lo)
        x[h] -= 1
        x[j] += 1
        push(h)
        push(j)
    return x


class _Central(MigrationBalancer):
    """What :class:`Greedy` and :class:`Refine` share: periodic and central, with a *tolerance* and an
    *interval*; a call nets the loads :meth:`_settle` reaches from the view's into transfers
    (:func:`net_transfers`), and with nothing waiting moves nothing."""

    periodic = True
    _parameter_constraints = {"tolerance": [Interval(Real, 0, None)], "interval": [Interval(Real, 0, None)]}
    tolerance: float

    def balance(self, view: TreeView) -> list[Transfer]:
        q, s = _loads(view)
        if sum(q) == 0:
            return []
        return net_transfers(q, self._settle(q, s))

    @abstractmethod
    def _settle(self, q: list[int], s: list[float]) -> list[int]:
        """The loads after balancing queues *q* (some task waits) at speeds *s*."""


@register
class Greedy(_Central):
    """Greedy: move waiting tasks one at a time from the most loaded node to the node that would be
    least loaded after receiving it, until every load is within *tolerance* of the average (or no
    move lowers the maximum). Periodic and central.

    Source: the Charm++ manual, "Available Load Balancing Strategies" (charmplusplus/charm:
    doc/charm++/manual.rst, rendered at charm.readthedocs.io): **GreedyLB** "uses a
    greedy algorithm that always assigns the heaviest object to the least loaded processor", a
    centralised strategy in which "the entire machine's load ... [is] accumulated to a single point"
    before the decision. Here every object is a waiting task of the same weight (queue length is the
    load measure, 001 §2.1), so the heaviest-object order is moot and the rule reduces to filling
    the least loaded node first. With speeds, the load of node i is ``queue[i] / speeds[i]`` and the
    least loaded node after a move is the one with the least ``(queue[j] + 1) / speeds[j]``.

    Rule, on the coordinator's view (global, aged): while the most loaded node h (ties: the lower)
    has load > (1 + *tolerance*)·average (average = Σ queue / Σ speeds) and the best receiver j
    would end strictly below h's load, move one task h → j. Each move lowers the maximum or leaves
    it, never raises it; the moves are then netted into the fewest transfers between the same
    start and end loads (:func:`net_transfers`: a node never sends more than it holds). It runs
    every *interval* completed tasks per node (0: at every load update the centre receives).

    Unlike Charm++'s GreedyLB, which reassigns every object from scratch (and so migrates most of
    them), only the tasks that must move to reach the balanced loads move. Deterministic (ties go to the
    lower node); it asks for the engine's Generator like every migration balancer, and draws nothing.

    Defaults (ours): *tolerance* 0 (balance as far as whole tasks allow), *interval* 1.

    Helps: global information, so the result is as balanced as whole tasks allow after every call
    (the manual: centralised decisions "tend to be more accurate"); heterogeneous speeds handled.
    Backfires: every call is a global collection (the manual: "requires synchronization which may
    incur an overhead and delay"); it moves many tasks (the oldest, the largest subtrees) at every
    call even for small imbalances, and loads age between the reports and the moves.
    """

    name = "greedy"
    source = _MANUAL + ": GreedyLB"
    taxonomy = Taxonomy("periodic (every interval tasks per node)", "central", "global (aged queue lengths, speeds)",
                        "one task at a time, most loaded to least loaded, until within tolerance",
                        "oldest waiting tasks")

    def __init__(self, *, tolerance: float = 0.0, interval: float = 1):
        self.tolerance = tolerance
        self.interval = interval

    def _settle(self, q: list[int], s: list[float]) -> list[int]:
        limit = (1 + self.tolerance) * sum(q) / sum(s)
        nodes = set(range(len(q)))
        return _move(q, s, nodes, nodes, lambda i, x: x[i] / s[i] > limit, lambda j, x: True)


@register
class Refine(_Central):
    """Refine: move tasks only away from the nodes above (1 + *tolerance*) times the average load,
    only to nodes below the average, and only as many as bring the overloaded nodes down to that
    threshold. Periodic and central.

    Source: the Charm++ manual, "Available Load Balancing Strategies" (charmplusplus/charm:
    doc/charm++/manual.rst, rendered at charm.readthedocs.io): **RefineLB** "moves
    objects away from the most overloaded processors to reach average, limits the number of objects
    migrated"; the manual recommends such "a strategy which favors migration minimization at the
    cost of balance (eg: RefineLB)" where migrating objects is expensive. Loads are queue lengths
    (001 §2.1) per unit of speed, ``queue[i] / speeds[i]``; the average is Σ queue / Σ speeds.

    Rule, on the coordinator's view: donors are the nodes with load > T = (1 + *tolerance*)·average;
    the most loaded donor gives one task to the under-average node whose load after the move is
    least, provided that is strictly below the donor's load (so the maximum never rises, and a
    receiver is never pushed above a donor), until no donor is above T or no under-average node can
    take a task. Each donor loses only what brings it to T, so the number of tasks moved is the
    least that removes the overload. Moves are netted into transfers (:func:`net_transfers`). Deterministic
    (ties: the lower node); it takes the engine's Generator like every migration balancer, unused.

    Defaults (ours; the manual gives none): *tolerance* 0.1 (a node is overloaded 10% above the
    average), *interval* 1.

    Helps: few migrations (only overloaded nodes give), receivers never become the new maximum,
    and a balanced system costs nothing but the load collection.
    Backfires: leaves an imbalance up to the tolerance (the manual: balance is traded for fewer
    migrations); a node slightly under the threshold keeps its surplus while others idle when the
    average is small (whole tasks); a central, global collection at every call as :class:`Greedy`.
    """

    name = "refine"
    source = _MANUAL + ": RefineLB"
    taxonomy = Taxonomy("periodic (every interval tasks per node)", "central", "global (aged queue lengths, speeds)",
                        "from nodes above (1+tolerance)*average to nodes below average, down to the threshold",
                        "oldest waiting tasks")

    def __init__(self, *, tolerance: float = 0.1, interval: float = 1):
        self.tolerance = tolerance
        self.interval = interval

    def _settle(self, q: list[int], s: list[float]) -> list[int]:
        avg = sum(q) / sum(s)
        limit = (1 + self.tolerance) * avg
        donors = {i for i in range(len(q)) if q[i] / s[i] > limit}
        receivers = {j for j in range(len(q)) if q[j] / s[j] < avg}
        return _move(q, s, donors, receivers, lambda i, x: x[i] / s[i] > limit, lambda j, x: x[j] / s[j] < avg)
