"""The two diffusion baselines DLAH is compared with in 000 §8.4: same rule, poorer cost models."""

from __future__ import annotations

from ..base import Taxonomy
from ..registry import register
from .dlah import DLAH
from .hnow_cost import NodeCost, node_cost

__all__ = ["HomogeneousDiffusion", "ProcessorOnly"]


@register
class HomogeneousDiffusion(DLAH):
    """Homogeneous diffusion: DLAH's trigger, status rule and fill/average steps, but the amounts are
    computed as if every node were identical to the sender.

    Source: Osman 2003 (seed 000) §8.4, "a diffusion-oriented algorithm for a homogeneous network of
    workstations" (no further detail; reading of notes/000 §6.4). The sender measures its own cost per
    DP, κ = T_i / W_i (loop time over workload: no speed, memory or network parameters), and converts
    every time difference into DP with it: the excess is (T_i − (1 + c)·avg_i)/κ, a neighbour's
    capacity (level_j − T_j)/κ, and averaging equalises times as if each DP cost κ everywhere.
    Helps on a truly homogeneous network, where it equals DLAH. Backfires when a fast node sheds to a
    slow one: the receiver gets more than it can absorb, turns overloaded and sends load back — the
    bouncing effect of §7.3, Fig 7.2 (tests/test_repartition.py shows it on a 1:4 speed pair).
    """

    name = "homogeneous-diffusion"
    source = "Osman 2003 (000) §8.4 (baseline), §7.3 Fig 7.2 (bouncing); notes/000_osman.md §6.4"
    taxonomy = Taxonomy("sender (overloaded node)", "distributed, asynchronous", "neighbourhood loop times",
                        "DP from time differences at the sender's own cost per DP",
                        "contiguous DP on the side of the receiving neighbour")

    def costs(self, view, node: int, members: list[int]) -> dict[int, NodeCost]:
        kappa = view.loop_time[node] / view.points[node]
        return {j: NodeCost(view.loop_time[j], view.points[j], kappa) for j in members}


@register
class ProcessorOnly(DLAH):
    """Processor-only diffusion: DLAH with a cost model that knows each node's processing power F
    and nothing else (no swap term, no boundary term: M_a = 0, K = 0 in eq 7.9).

    Source: Osman 2003 (seed 000) §8.4, "another diffusion algorithm for an HNOW that takes into
    account the processor heterogeneity only" (reading of notes/000 §6.4): capacity
    DP = (T_level − T_actual)·F_j. Helps when nodes differ only in speed (then equals DLAH).
    Backfires when a receiver swaps or sits on a slow link: it is sent more than it can absorb.
    """

    name = "processor-only"
    source = "Osman 2003 (000) §8.4 (baseline); notes/000_osman.md §6.4"
    taxonomy = Taxonomy("sender (overloaded node)", "distributed, asynchronous", "neighbourhood loop times",
                        "eq 7.9/7.10 with F only (no swap, no network)",
                        "contiguous DP on the side of the receiving neighbour")

    def costs(self, view, node: int, members: list[int]) -> dict[int, NodeCost]:
        return {j: node_cost(view, j, memory=False, network=False) for j in members}
