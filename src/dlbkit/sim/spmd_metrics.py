"""Metrics of pipelined-SPMD runs (000 §6.3.4.2, §7.2, §8; note §8).

* steps to balance per workstation: the balancing actions it initiated (``trace.steps``; 000's
  histograms count them per workstation, 0 if it never had to act);
* load exchange: DP moved by balancing;
* system mean and variance of loop times per loop (eqs 7.1, 7.2);
* loops to steady state: from a given loop, how long until a quiet period (no transfer for
  ``quiet_windows`` measurement windows), optionally also requiring every workstation Normal;
* confidence half-widths z·s/√n at 95% and 90% (000's Tables 8.2–8.7).
"""

from __future__ import annotations

import math

import numpy as np

from ..balancers.repartition.bounds import Z90, Z95, ci_half_width
from .spmd_trace import SpmdTrace

__all__ = ["loop_time_moments", "loops_to_steady", "smoothed", "summary", "half_width", "confidence",
           "QUIET_WINDOWS", "Z"]

#: windows without any transfer that count as steady (the note §8 leaves k open; 3 windows = 30 loops
#: by default, longer than a transfer's reset plus a fresh window, so a pending reaction shows up)
QUIET_WINDOWS = 3

#: 000's two-sided normal quantiles (1.96 and 1.64485, the note's R15), from the shared helper
Z = {0.95: Z95, 0.90: Z90}


def half_width(samples, level: float = 0.95) -> float:
    """z·s/√n with s the sample standard deviation (ddof 1), as 000 computes its CIs
    (:func:`dlbkit.balancers.repartition.bounds.ci_half_width`)."""
    x = np.asarray(samples, dtype=float)
    if len(x) < 2:
        return math.nan
    return ci_half_width(float(x.std(ddof=1)), len(x), Z[level])


def confidence(samples) -> dict[str, float]:
    """Mean, standard deviation (ddof 1), 95% and 90% half-widths and n of *samples*."""
    x = np.asarray(samples, dtype=float)
    return {"mean": float(x.mean()) if len(x) else math.nan,
            "std": float(x.std(ddof=1)) if len(x) > 1 else math.nan,
            "ci95": half_width(x, 0.95), "ci90": half_width(x, 0.90), "n": int(len(x))}


def loop_time_moments(trace: SpmdTrace) -> tuple[np.ndarray, np.ndarray]:
    """Per loop, the system mean m (eq 7.1) and variance s² (eq 7.2, divided by P) of loop times."""
    lt = trace.loop_time
    return lt.mean(axis=1), lt.var(axis=1)


def smoothed(values: np.ndarray, block: int) -> np.ndarray:
    """000's smoothing: every *block* consecutive samples (rows) replaced by their mean."""
    v = np.asarray(values, dtype=float)
    n = (len(v) // block) * block
    return v[:n].reshape(len(v) // block, block, *v.shape[1:]).mean(axis=1)


def _all_normal(trace: SpmdTrace, lo: int, hi: int, c: float) -> bool:
    """Every workstation's mean loop time over [lo, hi) within (1 ± c) × its neighbours' mean."""
    t = trace.loop_time[lo:hi].mean(axis=0)
    P = trace.n_nodes
    ring = trace.layout == "ring" and P > 2
    for i in range(P):
        nb = [(i - 1) % P, (i + 1) % P] if ring else [j for j in (i - 1, i + 1) if 0 <= j < P]
        if not nb:
            continue
        avg = float(np.mean(t[nb]))
        if abs(t[i] - avg) > c * avg:
            return False
    return True


def loops_to_steady(trace: SpmdTrace, *, since: int = 0, until: int | None = None,
                    quiet_windows: int = QUIET_WINDOWS, c: float | None = None) -> float:
    """Loops from *since* until the system settles for good within [since, until), NaN if it does not.

    Settled from L = one loop after the last transfer decided in [since, until) (L = *since* if there
    is none) when at least ``quiet_windows · window`` quiet loops follow before *until* (default:
    the end of the run) and, if *c* is given, every workstation is Normal over the last window
    before *until* (|T_i − mean of its neighbours| ≤ c × that mean).
    """
    until = trace.loops if until is None else min(until, trace.loops)
    inside = [t[0] for t in trace.transfers if since <= t[0] < until]
    L = max(inside) + 1 if inside else since
    if until - L < quiet_windows * trace.window:
        return math.nan
    if c is not None and not _all_normal(trace, until - trace.window, until, c):
        return math.nan
    return float(L - since)


def summary(trace: SpmdTrace, *, since: int = 0) -> dict:
    """Scalars of one run: steps (total, mean per workstation), DP exchanged, transfers, makespan,
    eq 4.1 time, loops to steady from *since*, and the last window's imbalance (max/mean − 1)."""
    tail = trace.loop_time[-trace.window:].mean(axis=0) if trace.loops >= trace.window else trace.loop_time[-1:]
    return {"steps": int(trace.steps.sum()), "steps_per_node": trace.steps.tolist(),
            "mean_steps": float(trace.steps.mean()), "dp_exchanged": trace.dp_exchanged,
            "transfers": len(trace.transfers), "makespan": trace.makespan, "eq41_time": trace.eq41_time,
            "loops_to_steady": loops_to_steady(trace, since=since),
            "final_imbalance": float(np.max(tail) / np.mean(tail) - 1.0)}
