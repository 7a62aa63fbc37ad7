"""DLAH: Osman's sender-initiated, neighbour-only diffusion with a heterogeneity-aware cost model."""

from __future__ import annotations

import math
from numbers import Real

from dlbkit.params import Interval, Options
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register
from dlbkit.families.spmd.balancers.hnow_cost import NORMAL, OVER, UNDER, NodeCost, equalise, local_average, node_cost, status

__all__ = ["DLAH", "whole_points"]


def whole_points(amounts: list[float], total: int) -> list[int]:
    """Round real *amounts* to whole DP summing to *total* (≤ Σ amounts, rounded): floors, then one more
    DP each to the largest remainders, never above an amount's ceiling."""
    ints = [math.floor(a + 1e-9) for a in amounts]
    order = sorted(range(len(amounts)), key=lambda k: ints[k] - amounts[k])
    for k in order[: max(0, total - sum(ints))]:
        ints[k] += 1
    return ints


@register
class DLAH(RepartitionBalancer):
    """DLAH: an overloaded node fills its underloaded neighbours up to their capacity, computed with
    the HNOW cost model; if that is not enough, it averages its remaining excess with its
    underloaded and normal neighbours.

    Source: Osman 2003 (seed 000), §7.3 (rule, Fig 7.1, eqs 7.9–7.10), §7.4 (threshold band
    (1 ± c)·T_average); reconstruction in notes/000 §6.2. Per decision, for node i:

    1. Status (:func:`~.hnow_cost.status`): over if T_i > (1 + *c*)·avg_i, avg_i the mean loop time
       of i's neighbours (and i, with *include_self*). Only an overloaded node acts.
    2. Excess: the DP whose removal brings T_i to (1 + c)·avg_i, by inverting i's own cost
       function (swapped DP go first), rounded up; the sender always keeps at least one DP.
    3. Capacity of each underloaded neighbour j (status in j's own neighbourhood, as j reports it):
       eq 7.10 up to *receiver_fill* ∈ {"lower": (1 − c)·avg_j, "center": avg_j, "upper":
       (1 + c)·avg_j}, rounded down. Default "lower", the level the text names twice: the core
       description checks "how much extra data points they can accept before their status changes
       to normal", and eq 7.10 is "the number of extra data points needed for a workstation to
       change its status from underloaded to normal" — both the lower edge of the normal band.
       "upper" is the note's literal reading of eq 7.10's T_threshold with §7.4's (1 + c)·T_average.
    4. If the capacities cover the excess, the excess is split in proportion to them. Otherwise each
       gets its capacity, and the sender equalises predicted times (eq 7.9, swap kink included) with
       its underloaded and normal neighbours, shedding at most the rest of its excess.

    The boundary constant K is the view's ``boundary`` (0 by default: 1-D slabs moved along the
    decomposition axis keep their interface). Subclasses change only :meth:`costs` (the §8.4
    baselines). Helps on heterogeneous, non-dedicated networks: amounts fit each receiver's real
    speed, memory and link, so load does not bounce (Fig 7.2). Backfires: with "upper", a receiver is
    filled to (1 + c) times an average that still holds the sender's old time, so once the sender
    drops the receiver may turn overloaded and send some back ("lower" leaves a margin instead); one step moves load one hop only
    (O(Steps²) worst case, §7.4); statuses are one window stale.
    """

    name = "dlah"
    source = "Osman 2003 (000) §7.3–7.4, eqs 7.9–7.10; notes/000_osman.md §6.2"
    taxonomy = Taxonomy("sender (overloaded node)", "distributed, asynchronous", "neighbourhood loop times",
                        "HNOW cost model eq 7.9/7.10: fill to capacity, else average",
                        "contiguous DP on the side of the receiving neighbour")
    _parameter_constraints = {"c": [Interval(Real, 0, None, closed="neither")],
                              "include_self": [bool],
                              "receiver_fill": [Options("upper", "center", "lower")]}

    def __init__(self, *, c: float = 0.3, include_self: bool = False, receiver_fill: str = "lower"):
        self.c = c  # threshold ratio, 000 Table 8.1 (0.3)
        self.include_self = include_self
        self.receiver_fill = receiver_fill  # notes/000 §6.2 item 2

    # --- hook for the §8.4 baselines ----------------------------------------------------------
    def costs(self, view, node: int, members: list[int]) -> dict[int, NodeCost]:
        """The cost model of each node in *members* as *node* predicts it (DLAH: eq 7.9 in full)."""
        return {j: node_cost(view, j) for j in members}

    def sender_level(self, view, node: int) -> float:
        """The predicted loop time an overloaded *node* sheds down to: the top of the normal band,
        (1 + c) × its local average (§7.3; the "specific threshold" of §7.1's local averaging)."""
        return (1 + self.c) * local_average(view, node, self.include_self)

    # --- the rule -----------------------------------------------------------------------------
    def _fill_level(self, view, j: int) -> float:
        avg = local_average(view, j, self.include_self)
        return {"upper": (1 + self.c) * avg, "center": avg, "lower": (1 - self.c) * avg}[self.receiver_fill]

    def decide(self, view, node: int) -> list[Transfer]:
        nbrs = list(view.neighbours[node])
        if not nbrs or view.points[node] <= 1 or status(view, node, self.c, self.include_self) != OVER:
            return []
        states = {j: status(view, j, self.c, self.include_self) for j in nbrs}
        under = [j for j in nbrs if states[j] == UNDER]
        normal = [j for j in nbrs if states[j] == NORMAL]
        costs = self.costs(view, node, [node] + nbrs)
        sender = costs[node]
        excess = min(math.ceil(-sender.points_for(self.sender_level(view, node)) - 1e-9), view.points[node] - 1)
        if excess <= 0:
            return []
        caps = [max(0, math.floor(costs[j].points_for(self._fill_level(view, j)) + 1e-9)) for j in under]
        if sum(caps) >= excess:
            amounts = whole_points([excess * k / sum(caps) for k in caps], excess)
            return [Transfer(node, j, n) for j, n in zip(under, amounts) if n > 0]
        # averaging phase: capacities first, then equalise predicted times with under + normal
        sent = dict(zip(under, caps))
        members = under + normal
        after = [costs[j].shift(sent.get(j, 0)) for j in members]
        _, shed, extra = equalise(sender.shift(-sum(caps)), after, limit=excess - sum(caps))
        extra = whole_points(extra, math.floor(shed + 1e-9))
        for j, n in zip(members, extra):
            sent[j] = sent.get(j, 0) + n
        return [Transfer(node, j, n) for j, n in sent.items() if n > 0]
