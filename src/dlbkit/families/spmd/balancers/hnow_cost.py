"""DLAH's heterogeneity-aware cost model and status rule (000 §7.3, eqs 7.9–7.10), as pure functions.

A node's predicted loop time as a function of the data points (DP) it gains is piecewise linear and
increasing: each DP held in RAM costs ``rate`` = 1/F + K/BW seconds per loop, and each DP beyond the
free RAM M_f costs ``swap_cost`` = M_a more (eq 7.9 with the swap term clamped, notes/000 §6.2 and
errata 4). M_f ≤ 0 means the node already swaps −M_f DP, so removing DP first removes swapped ones.
Eq 7.10 is the inverse of this function, generalised to both segments (:meth:`NodeCost.points_for`).

Sums of such inverses are again piecewise linear, so every level below (:func:`solve_level`) is found
exactly: evaluate the sum at the kinks, pick the segment that brackets the target, interpolate — a
bisection over the kinks with no tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

__all__ = ["OVER", "NORMAL", "UNDER", "NodeCost", "extra_time", "extra_points", "node_cost", "local_average",
           "classify", "status", "solve_level", "water_fill", "equalise"]

OVER, NORMAL, UNDER = "over", "normal", "under"


def _rate(speed: float, bandwidth: float, boundary: float) -> float:
    """Seconds per loop per DP held in RAM: 1/F + K/BW (the K term only when K ≠ 0)."""
    return 1.0 / speed + (boundary / bandwidth if boundary else 0.0)


def extra_time(dp: float, *, speed: float, free_memory: float, swap_cost: float, bandwidth: float,
               boundary: float = 0.0) -> float:
    """Eq 7.9, clamped: seconds per loop added when a node gains *dp* DP (negative *dp*: loses).

    ``dp/F + (max(0, dp − M_f) − max(0, −M_f))·M_a + K·dp/BW``: with M_f ≥ 0 this is the thesis'
    ``DP/F + (DP − M_f)·M_a + K·DP/BW`` with the swap term clamped at zero.
    """
    return NodeCost(0.0, 0.0, _rate(speed, bandwidth, boundary), free_memory, swap_cost).delta(dp)


def extra_points(dt: float, *, speed: float, free_memory: float, swap_cost: float, bandwidth: float,
                 boundary: float = 0.0) -> float:
    """Eq 7.10 generalised: the DP (real) a node must gain for its loop time to grow by *dt* seconds.

    In the swap segment (*dt* above M_f's cost) this is exactly
    ``(dt + M_f·M_a) / (1/F + M_a + K/BW)``; below it, ``dt / (1/F + K/BW)``. Negative *dt*: DP to lose.
    """
    return NodeCost(0.0, 0.0, _rate(speed, bandwidth, boundary), free_memory, swap_cost).points_for(dt)


@dataclass(frozen=True)
class NodeCost:
    """One node's measured state and its predicted loop time as a function of DP gained.

    *time*: measured seconds per loop (T_actual); *points*: DP held (W); *rate*: seconds per loop per
    DP in RAM (1/F + K/BW); *free_memory*: M_f, DP that still fit in RAM (≤ 0: −M_f DP are swapped;
    ``inf``: no memory model); *swap_cost*: M_a, extra seconds per loop per swapped DP.
    """

    time: float
    points: float
    rate: float
    free_memory: float = math.inf
    swap_cost: float = 0.0

    @property
    def _linear(self) -> bool:
        return self.swap_cost == 0 or math.isinf(self.free_memory)

    def delta(self, dp: float) -> float:
        """Eq 7.9 (clamped): seconds per loop added by gaining *dp* DP."""
        if self._linear:
            return dp * self.rate
        b = self.free_memory
        return dp * self.rate + (max(0.0, dp - b) - max(0.0, -b)) * self.swap_cost

    def predict(self, dp: float) -> float:
        """Predicted loop time after gaining *dp* DP (T_actual + eq 7.9)."""
        return self.time + self.delta(dp)

    def kinks(self) -> list[float]:
        """Loop-time levels where the slope changes (where swapping starts), for :func:`solve_level`."""
        return [] if self._linear else [self.predict(self.free_memory)]

    def points_for(self, level: float) -> float:
        """Eq 7.10 generalised: the DP (real; negative = to lose) that bring the loop time to *level*."""
        if self._linear:
            return (level - self.time) / self.rate
        b = self.free_memory
        at_b = self.predict(b)
        if level <= at_b:
            return b + (level - at_b) / self.rate
        return b + (level - at_b) / (self.rate + self.swap_cost)

    def shift(self, dp: float) -> "NodeCost":
        """The node as predicted after gaining *dp* DP (negative: after sending −dp)."""
        return replace(self, time=self.predict(dp), points=self.points + dp, free_memory=self.free_memory - dp)


def node_cost(view, i: int, *, memory: bool = True, network: bool = True) -> NodeCost:
    """Node *i*'s :class:`NodeCost` read from an :class:`~dlbkit.families.spmd.model.view.SpmdView`.

    *memory* False drops the swap term (M_a = 0), *network* False the boundary term (K = 0): with both
    False this is the processor-only model of 000 §8.4.
    """
    rate = _rate(view.measured_speeds[i], view.bandwidth[i], view.boundary if network else 0.0)
    if memory:
        return NodeCost(view.loop_time[i], view.points[i], rate, view.free_memory[i], view.swap_cost[i])
    return NodeCost(view.loop_time[i], view.points[i], rate)


def local_average(view, i: int, include_self: bool = False) -> float:
    """T_average of node *i*: the mean loop time of its neighbours (and of *i* with *include_self*).

    Neighbours only by default: the only worked example (000 §8.2.1.2: 650 s beside 500 s and 600 s
    has local average 550 s) and §7.4 exclude self; §7.3's wording includes it (notes/000 errata 1).
    A node without neighbours is its own average.
    """
    members = list(view.neighbours[i]) + ([i] if include_self else [])
    if not members:
        return view.loop_time[i]
    return sum(view.loop_time[j] for j in members) / len(members)


def classify(actual: float, average: float, c: float) -> str:
    """000 §7.3's status rule with T_threshold = c·T_average: over if actual − average > c·average,
    under if average − actual > c·average, normal otherwise (the (1 ± c) band, edges included)."""
    tol = c * average
    if actual - average > tol:
        return OVER
    if average - actual > tol:
        return UNDER
    return NORMAL


def status(view, i: int, c: float, include_self: bool = False) -> str:
    """Node *i*'s status in its own neighbourhood (what it reports to its neighbours)."""
    return classify(view.loop_time[i], local_average(view, i, include_self), c)


def solve_level(total: Callable[[float], float], kinks: Sequence[float], target: float) -> float:
    """The level T with ``total(T) == target``, for *total* continuous, nondecreasing and linear
    between the given *kinks*, and increasing where it reaches *target*. Exact (no tolerance)."""
    pts = sorted({k for k in kinks if math.isfinite(k)}) or [0.0]
    span = 1.0 + max(abs(pts[0]), abs(pts[-1]))
    if target <= total(pts[0]):
        lo, hi = pts[0] - span, pts[0]
    elif target > total(pts[-1]):
        lo, hi = pts[-1], pts[-1] + span
    else:  # bisection over the kinks: total(pts[a]) < target <= total(pts[b])
        a, b = 0, len(pts) - 1
        while b - a > 1:
            mid = (a + b) // 2
            a, b = (mid, b) if total(pts[mid]) < target else (a, mid)
        lo, hi = pts[a], pts[b]
    f_lo, f_hi = total(lo), total(hi)
    if f_hi == f_lo:
        return hi
    return lo + (target - f_lo) * (hi - lo) / (f_hi - f_lo)


def water_fill(receivers: Sequence[NodeCost], amount: float) -> tuple[float, list[float]]:
    """Give *amount* DP to *receivers* so that every one that receives ends at the same predicted
    level and none above it (a node already above the level gets nothing). Returns (level, DP each)."""
    if amount <= 0 or not receivers:
        return (min((r.time for r in receivers), default=0.0), [0.0] * len(receivers))

    def total(t: float) -> float:
        return sum(max(0.0, r.points_for(t)) for r in receivers)

    kinks = [r.time for r in receivers] + [k for r in receivers for k in r.kinks()]
    level = solve_level(total, kinks, amount)
    return level, [max(0.0, r.points_for(level)) for r in receivers]


def equalise(sender: NodeCost, receivers: Sequence[NodeCost], limit: float = math.inf) -> tuple[float, float, list[float]]:
    """DLAH's averaging phase (000 §7.3; notes/000 §6.2): the sender sheds DP to *receivers* until its
    predicted time equals theirs (receivers above that level get nothing), shedding at most *limit*.

    Homogeneous nodes reduce to the thesis' equal-workload average (mL + L)/2 (eq 7.13); in general
    T* solves −x_sender(T*) = Σ max(0, x_k(T*)) with x = :meth:`NodeCost.points_for`, swap kinks
    included. Returns (level, DP shed, DP per receiver).
    """
    if not receivers:
        return sender.time, 0.0, []

    def total(t: float) -> float:
        return sender.points_for(t) + sum(max(0.0, r.points_for(t)) for r in receivers)

    kinks = sender.kinks() + [r.time for r in receivers] + [k for r in receivers for k in r.kinks()]
    level = solve_level(total, kinks, 0.0)
    shed = max(0.0, -sender.points_for(level))
    if shed > limit:
        level, amounts = water_fill(receivers, limit)
        return level, limit, amounts
    return level, shed, [max(0.0, r.points_for(level)) for r in receivers]
