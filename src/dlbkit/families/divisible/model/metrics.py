"""The divisible family's metrics: every family's (:func:`dlbkit.model.metrics.compute`) and its own, the rounds a
loop of the round mechanism took to balance (004)."""

from __future__ import annotations

import math

from dlbkit.model.metrics import compute
from dlbkit.model.trace import Trace

__all__ = ["OWN_METRICS", "BALANCE_TOLERANCE", "metrics", "rounds_to_balance"]

#: the family's own metrics (``Family.own_metrics``): name -> (description, which direction is better)
OWN_METRICS = {
    "rounds_to_balance": ("first round whose execution times agree within 10% (round mechanism)", "lower"),
}

BALANCE_TOLERANCE = 0.10  # 004 §5: "homogeneous execution time ... on third iteration"; within 10%


def rounds_to_balance(trace: Trace, tolerance: float = BALANCE_TOLERANCE) -> float:
    """Index of the first round whose per-worker execution times agree within *tolerance*
    (max/min ≤ 1 + tolerance), counting rounds from 0; NaN outside the round mechanism or if never."""
    if not trace.rounds:
        return math.nan
    by_round: dict[int, list[float]] = {}
    for rnd, _w, _n, _s, _send, _calc, exe in trace.rounds:
        by_round.setdefault(rnd, []).append(exe)
    for rnd in sorted(by_round):
        exe = by_round[rnd]
        if len(exe) > 1 and max(exe) <= (1.0 + tolerance) * min(exe):
            return float(rnd)
    return math.nan


def metrics(trace: Trace) -> dict[str, float]:
    """The metrics of one loop: every family's, and ``rounds_to_balance``."""
    return {**compute(trace), "rounds_to_balance": rounds_to_balance(trace)}
