"""The two diffusion baselines DLAH is compared with in 000 §8.4: same rule, poorer cost models."""

from __future__ import annotations

from numbers import Real

from dlbkit.params import Interval, Options
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.spmd.balancers.dlah import DLAH
from dlbkit.families.spmd.balancers.hnow_cost import NodeCost, node_cost

__all__ = ["HomogeneousDiffusion", "ProcessorOnly"]

#: The baselines' parameters: DLAH's, plus which processing power they believe in.
_CONSTRAINTS = {"c": [Interval(Real, 0, None, closed="neither")], "include_self": [bool],
                "receiver_fill": [Options("upper", "center", "lower")],
                "speeds": [Options("nominal", "measured")]}

_SPEEDS_DOC = """
    *speeds* ``"nominal"`` (default) prices data points with the nodes' static processing power
    (``SpmdView.speeds``; the measured one where a run does not know it): the reading the
    thesis supports — on its non-dedicated homogeneous network "both the homogeneous and processor
    only have the same response" (§8.4.2), which holds only if neither sees the current load, and
    DLAH wins by being "able to tap into the HNOW parameters and suppress the bouncing effect"
    (§8.5), bouncing coming from "neglecting the HNOW parameters" (§7.3). ``"measured"`` uses the
    measured effective speed instead (then, on that experiment, the baselines size transfers
    almost as DLAH does).
    """


def _nominal(view, j: int) -> float | None:
    """Node j's static processing power, if the view knows it."""
    ns = view.speeds
    return ns[j] if len(ns) == view.n_nodes and ns[j] > 0 else None


class _Baseline(DLAH):
    """DLAH's parameters plus *speeds*: which processing power a baseline believes in."""

    _parameter_constraints = _CONSTRAINTS

    def __init__(self, *, c: float = 0.3, include_self: bool = False, receiver_fill: str = "lower",
                 speeds: str = "nominal"):
        self.c = c
        self.include_self = include_self
        self.receiver_fill = receiver_fill
        self.speeds = speeds


@register
class HomogeneousDiffusion(_Baseline):
    """Homogeneous diffusion: DLAH's trigger, status rule and fill/average steps, but the amounts are
    computed as if every node were identical to the sender.

    Source: Osman 2003 (seed 000) §8.4, "a diffusion-oriented algorithm for a homogeneous network of
    workstations" (no further detail; reading of notes/000 §6.4). The sender measures its own cost per
    DP, κ = T_i / W_i (loop time over workload: no speed, memory or network parameters), and converts
    every time difference into DP with it: the excess is (T_i − (1 + c)·avg_i)/κ, a neighbour's
    capacity (level_j − T_j)/κ, and averaging equalises times as if each DP cost κ everywhere.
    Helps on a truly homogeneous network, where it equals DLAH. Backfires when a fast node sheds to a
    slow one: the receiver gets more than it can absorb, turns overloaded and sends load back — the
    bouncing effect of §7.3, Fig 7.2 (tests/families/spmd/balancers/test_repartition.py shows it on a 1:4 speed pair).
    With nominal speeds the sender's cost per DP is 1/PP_nominal instead of T_i / W_i.
    """

    name = "homogeneous-diffusion"
    source = "Osman 2003 (000) §8.4 (baseline), §7.3 Fig 7.2 (bouncing); notes/000_osman.md §6.4"
    taxonomy = Taxonomy("sender (overloaded node)", "distributed, asynchronous", "neighbourhood loop times",
                        "DP from time differences at the sender's own cost per DP",
                        "contiguous DP on the side of the receiving neighbour")

    def costs(self, view, node: int, members: list[int]) -> dict[int, NodeCost]:
        nominal = _nominal(view, node) if self.speeds == "nominal" else None
        kappa = 1.0 / nominal if nominal else view.loop_time[node] / view.points[node]
        return {j: NodeCost(view.loop_time[j], view.points[j], kappa) for j in members}


@register
class ProcessorOnly(_Baseline):
    """Processor-only diffusion: DLAH with a cost model that knows each node's processing power F
    and nothing else (no swap term, no boundary term: M_a = 0, K = 0 in eq 7.9).

    Source: Osman 2003 (seed 000) §8.4, "another diffusion algorithm for an HNOW that takes into
    account the processor heterogeneity only" (reading of notes/000 §6.4): capacity
    DP = (T_level − T_actual)·F_j. Helps when nodes differ only in speed (then equals DLAH).
    Backfires when a receiver swaps or sits on a slow link: it is sent more than it can absorb.
    With nominal speeds F_j is node j's static processing power.
    """

    name = "processor-only"
    source = "Osman 2003 (000) §8.4 (baseline); notes/000_osman.md §6.4"
    taxonomy = Taxonomy("sender (overloaded node)", "distributed, asynchronous", "neighbourhood loop times",
                        "eq 7.9/7.10 with F only (no swap, no network)",
                        "contiguous DP on the side of the receiving neighbour")

    def costs(self, view, node: int, members: list[int]) -> dict[int, NodeCost]:
        out = {}
        for j in members:
            nominal = _nominal(view, j) if self.speeds == "nominal" else None
            out[j] = (NodeCost(view.loop_time[j], view.points[j], 1.0 / nominal) if nominal
                      else node_cost(view, j, memory=False, network=False))
        return out


for _cls in (HomogeneousDiffusion, ProcessorOnly):
    _cls.__doc__ += _SPEEDS_DOC  # one text for both: which processing power a baseline believes in
