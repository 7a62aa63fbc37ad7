"""The SPMD family's view: what a repartition balancer reads of a domain's parts and their neighbours."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from dlbkit.model.view import View

__all__ = ["SpmdView"]


def _line(p: int, ring: bool) -> list[list[int]]:
    """Neighbour lists of a line 0–1–…–(p−1), or a ring (a ring of two is a line of two)."""
    if ring and p > 2:
        return [[(i - 1) % p, (i + 1) % p] for i in range(p)]
    return [[j for j in (i - 1, i + 1) if 0 <= j < p] for i in range(p)]


@dataclass
class SpmdView(View):
    """What the workstations of a 1-D decomposed SPMD computation know (000 §7.3).

    The domain's data points (DP) are split into contiguous blocks, one per node in node order;
    each loop every node computes its block and exchanges boundaries with its neighbours (a line:
    0–1–…–(P−1); a ring adds (P−1)–0). Per node i, measured over the last measurement window:
    ``points[i]`` DP owned; ``loop_time[i]`` mean busy seconds per loop (000's T_actual: compute,
    swap and communication); ``speed[i]`` effective processing power F (DP/s, measured, so it folds
    in background load); ``free_memory[i]`` M_f, DP that still fit in RAM (≤ 0 once swapping);
    ``swap_cost[i]`` M_a, seconds per swapped DP; ``bandwidth[i]`` BW, DP/s of its link;
    ``updated_at[i]`` when it was measured. ``boundary`` is 000's K (extra boundary DP per DP moved).
    ``speeds[i]`` is node i's nominal processing power from the platform description (DP/s,
    never updated; empty when unknown, as in a real run) — what a balancer that ignores the current
    load assumes. ``neighbours`` follow the layout (a line, or a ring).
    A distributed balancer deciding for node i may read only i and its neighbours.
    """

    n_nodes: int
    points: list[int]
    loop_time: list[float]
    measured_speeds: list[float]
    free_memory: list[float]
    swap_cost: list[float]
    bandwidth: list[float]
    layout: str = "line"
    boundary: float = 0.0
    loop: int = 0
    time: float = 0.0
    updated_at: list[float] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    node: int = -1
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        if not self.neighbours:
            self.neighbours = _line(self.n_nodes, self.layout == "ring")
        self._fill_common()

    def measured_speed(self, i: int) -> float:
        return self.measured_speeds[i]
