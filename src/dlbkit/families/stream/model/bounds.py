"""A lower bound on a job-stream run's makespan, from what its trace records (the stream's ``lower_bound``).

:func:`dlbkit.model.metrics.lower_bound` bounds a run whose work is all there at time 0 on nodes of one
slot each; a stream's work arrives over time, on nodes of several slots (``cores``). No placement,
service discipline or information model can end a stream's last task before the largest of:

* **the fluid bound of every suffix of the arrivals**: the work W_k of the jobs that arrive at or after
  a_k (the k-th arrival, in time order) cannot start before a_k, and the platform does at most
  C'(t) = Σ_i s_i · c_i · a_i(t) work units per second (node i: speed s_i, c_i slots, availability
  a_i), so the run lasts at least until the t where C(t) − C(a_k) = W_k (C integrated exactly over the
  piecewise availability); k = 0 with all the work, the initial tasks' too (they are there at 0), is
  the stream's "total work over capacity";
* **every task alone**: a task of demand d arriving (with its job) at a runs on one slot, at most at
  s_i · a_i(t) on node i, so it ends no earlier than min over i of the t where
  ∫_a^t s_i a_i = d ("the last arrival plus its job's fastest time", taken over every job: a long job
  arriving earlier may end later); for the largest task (``trace.max_item``, the initial tasks
  included) from t = 0 as well.

Transfer times are left out (a task kept at its origin has none), so the bound holds for every
balancer. A job's tasks are bounded one by one (the stream does not gang-schedule them). The times
are computed in floating point, so a bound that one task decides can exceed the makespan it equals by
rounding (a few units in the last place). A real run's trace (``dlbkit.Cluster``: no availability
profiles, its demands measured busy seconds) has no bound: NaN.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["stream_lower_bound"]


def _segments(profile, horizon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(knots, capacity at the knots, level from each knot) of one availability over [0, *horizon*]
    (the last level taken to last; a bound beyond the horizon, the makespan, cannot be reached)."""
    t, lv = profile.segments_until(horizon)
    cum = np.concatenate(([0.0], np.cumsum(lv[:-1] * np.diff(t))))
    return t, cum, lv


def _at(seg, x: np.ndarray) -> np.ndarray:
    """The piecewise-linear capacity *seg* at times *x*."""
    t, cum, lv = seg
    k = np.searchsorted(t, x, side="right") - 1
    return cum[k] + lv[k] * (x - t[k])


def _inverse(seg, y: np.ndarray) -> np.ndarray:
    """The first times at which the capacity *seg* reaches *y* (levels > 0: it increases)."""
    t, cum, lv = seg
    k = np.searchsorted(cum, y, side="right") - 1
    return t[k] + (y - cum[k]) / lv[k]


def _platform(segs, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The platform's capacity C(t) = Σ_i weight_i · A_i(t) as one piecewise-linear function: its slope
    changes by weight_i × (the step of node i's level) at each of node i's knots (a sweep over the knots
    sorted once, so many nodes with many changes cost their number of knots, not nodes × knots)."""
    t = np.concatenate([g[0] for g in segs])
    step = np.concatenate([w * np.diff(g[2], prepend=0.0) for w, g in zip(weight, segs)])
    order = np.argsort(t, kind="stable")
    t, slope = t[order], np.cumsum(step[order])
    last = np.ones(len(t), dtype=bool)  # the slope after every change at one time
    last[:-1] = t[1:] != t[:-1]
    knots, levels = t[last], slope[last]
    cum = np.concatenate(([0.0], np.cumsum(levels[:-1] * np.diff(knots))))
    return knots, cum, levels


def stream_lower_bound(trace) -> float:
    """The earliest time the stream in *trace* could end (the module docstring's bounds; 0.0 for a run
    with no work, NaN for a trace without the simulator's availability profiles or slots)."""
    n = trace.n_nodes
    profiles, speeds = list(trace.availability), list(trace.speeds)
    slots = trace.meta.get("slots") or []
    s = trace.series
    if n == 0 or len(profiles) != n or len(speeds) != n or len(slots) != n or "demand" not in s:
        return math.nan
    total = float(trace.total_work)
    if not total > 0:
        return 0.0
    horizon = float(trace.end_time) if math.isfinite(trace.end_time) and trace.end_time > 0 else 0.0
    segs = [_segments(p, horizon) for p in profiles]
    speed = np.asarray(speeds, dtype=float)
    platform = _platform(segs, speed * np.asarray(slots, dtype=float))

    bounds = [float(_inverse(platform, np.array([total]))[0])]  # all the work from t = 0
    one = np.array([0.0])
    bounds.append(min(float(_inverse(g, one + trace.max_item / v)[0]) for g, v in zip(segs, speed)))
    arrive = np.asarray(s.get("job_time", []), dtype=float)
    demand = np.asarray(s["demand"], dtype=float)
    if len(arrive) and len(demand):
        first = np.asarray(s["job_first"], dtype=np.int64)
        work = np.add.reduceat(demand, first)  # per job (every job has >= 1 task)
        largest = np.maximum.reduceat(demand, first)
        order = np.argsort(arrive, kind="stable")
        a, w = arrive[order], work[order]
        suffix = np.cumsum(w[::-1])[::-1]  # work arriving at or after each arrival
        bounds.append(float(_inverse(platform, _at(platform, a) + suffix).max()))
        # a constant node finishes at a + d / (s · level): of those, the fastest rate decides; a node whose
        # availability changes is integrated on its own
        steady = [k for k, p in enumerate(profiles) if getattr(p, "constant", None) is not None]
        alone = np.full(len(arrive), np.inf)
        if steady:
            alone = arrive + largest / max(speed[k] * profiles[k].constant for k in steady)
        varying = {}  # nodes of one speed and one realised availability finish alike: one pass for each kind
        for k in sorted(set(range(n)) - set(steady)):
            varying.setdefault((speed[k], segs[k][0].tobytes(), segs[k][2].tobytes()), k)
        for k in varying.values():
            alone = np.minimum(alone, _inverse(segs[k], _at(segs[k], arrive) + largest / speed[k]))
        bounds.append(float(alone.max()))
    return max(bounds)
