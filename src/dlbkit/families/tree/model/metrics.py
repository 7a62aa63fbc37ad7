"""Task-tree metrics of Haron's thesis (001 §5): Improvement Through Adaptivity (ITA), both forms.

Time-based ITA (001 §5.2.1) compares total times on the same tree: ``(T_NA − T_A)/T_NA·100``, in
(−∞, 100]. Speed-based ITA compares speeds (nodes per second), for trees whose size differs between
runs (001's imbalance tree): ``(S_A − S_NA)/S_NA·100``, in (−100, ∞). On the same tree
``ITA_speed = T_NA/T_A − 1`` (×100), so 24.48% speed-ITA is 19.7% time-ITA (001 §5, notes); say
which one is quoted (001 erratum §4.10 item 12). For algorithmic adaptivity the reference is the
better of the single-algorithm runs (001 §5.2.1): :func:`ita_best`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from dlbkit.errors import ConfigError

__all__ = ["ita_time", "ita_speed", "ita_best", "speed_from_time_ita", "time_from_speed_ita"]


def _positive(x: float, field: str) -> float:
    if isinstance(x, np.generic):
        x = x.item()
    if not (isinstance(x, (int, float)) and not isinstance(x, bool)) or not x > 0 or math.isinf(x):
        raise ConfigError(field, x, "a positive finite number")
    return float(x)


def ita_time(t_na: float, t_a: float) -> float:
    """Time-based ITA in percent: ``(T_NA − T_A)/T_NA·100`` (positive: the adaptive run is faster)."""
    t_na, t_a = _positive(t_na, "t_na"), _positive(t_a, "t_a")
    return (t_na - t_a) / t_na * 100.0


def ita_speed(s_a: float, s_na: float) -> float:
    """Speed-based ITA in percent: ``(S_A − S_NA)/S_NA·100`` (speeds in nodes per second)."""
    s_a, s_na = _positive(s_a, "s_a"), _positive(s_na, "s_na")
    return (s_a - s_na) / s_na * 100.0


def ita_best(t_a: float, single: Iterable[float]) -> float:
    """Time-based ITA of an algorithmically adaptive run against the best (fastest) single run."""
    times = [_positive(t, "single") for t in single]
    if not times:
        raise ConfigError("single", times, "at least one non-adaptive time")
    return ita_time(min(times), t_a)


def speed_from_time_ita(ita: float) -> float:
    """The speed-based ITA of the same-tree pair whose time-based ITA is *ita* (percent)."""
    if ita >= 100:
        raise ConfigError("ita", ita, "a time-based ITA below 100%")
    return ita / (100.0 - ita) * 100.0


def time_from_speed_ita(ita: float) -> float:
    """The time-based ITA of the same-tree pair whose speed-based ITA is *ita* (percent)."""
    if ita <= -100:
        raise ConfigError("ita", ita, "a speed-based ITA above -100%")
    return ita / (100.0 + ita) * 100.0
