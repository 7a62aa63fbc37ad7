"""Metrics of pipelined-SPMD runs (000 §6.3.4.2, §7.2, §8; note §8).

* steps to balance per workstation: the balancing actions it initiated, 0 if it never had to act
  (000's histograms count them per workstation). ``trace.meta["steps"]`` counts every action of the run;
  :func:`steps_to_steady` only those "required to reach steady state from an imbalanced state"
  (000 §6.3.4.2's definition of convergence): a workstation's actions until its neighbourhood
  first settles;
* load exchange: DP moved by balancing, in the run or (:func:`dp_to_steady`) until steady state
  (000 §6.3.4.2: "total number of extra data points exchanged to reach steady state");
* system mean and variance of loop times per loop (eqs 7.1, 7.2);
* loops to steady state: from a given loop, how long until a quiet period (no transfer for
  ``quiet_windows`` measurement windows), optionally also requiring every workstation Normal;
* confidence half-widths z·s/√n at 95% and 90% (000's Tables 8.2–8.7).
"""

from __future__ import annotations

import math

import numpy as np

from dlbkit.families.spmd.model.bounds import Z90, Z95, ci_half_width
from dlbkit.families.spmd.model.trace import eq41_time, loops
from dlbkit.model.trace import Trace

__all__ = ["OWN_METRICS", "metrics", "loop_time_moments", "loops_to_steady", "steps_to_steady", "dp_to_steady",
           "smoothed", "summary", "half_width", "confidence", "QUIET_WINDOWS", "Z"]

#: the family's own metrics (``Family.own_metrics``; pipelined SPMD, Osman 2003, 000 §6.3.4.2):
#: name -> (description, which direction is better)
OWN_METRICS = {
    "steps_to_balance": ("balancing actions needed to reach steady state, all nodes (SPMD)", "lower"),
    "dp_moved": ("data points moved by balancing (SPMD)", "lower"),
    "loops_to_steady": ("loops until the last transfer before a quiet period (SPMD)", "lower"),
}

#: windows without any transfer that count as steady (the note §8 leaves k open; 3 windows = 30 loops
#: by default, longer than a transfer's reset plus a fresh window, so a pending reaction shows up)
QUIET_WINDOWS = 3

#: 000's two-sided normal quantiles (1.96 and 1.64485, the note's R15), from the shared helper
Z = {0.95: Z95, 0.90: Z90}


def half_width(samples, level: float = 0.95) -> float:
    """z·s/√n with s the sample standard deviation (ddof 1), as 000 computes its CIs
    (:func:`dlbkit.families.spmd.model.bounds.ci_half_width`)."""
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


def loop_time_moments(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Per loop, the system mean m (eq 7.1) and variance s² (eq 7.2, divided by P) of loop times."""
    lt = trace.series["loop_time"]
    return lt.mean(axis=1), lt.var(axis=1)


def smoothed(values: np.ndarray, block: int) -> np.ndarray:
    """000's smoothing: every *block* consecutive samples (rows) replaced by their mean."""
    v = np.asarray(values, dtype=float)
    n = (len(v) // block) * block
    return v[:n].reshape(len(v) // block, block, *v.shape[1:]).mean(axis=1)


def _all_normal(trace: Trace, lo: int, hi: int, c: float) -> bool:
    """Every workstation's mean loop time over [lo, hi) within (1 ± c) × its neighbours' mean."""
    t = trace.series["loop_time"][lo:hi].mean(axis=0)
    for i, hood in enumerate(_neighbourhoods(trace)):
        nb = sorted(hood - {i})
        if not nb:
            continue
        avg = float(np.mean(t[nb]))
        if abs(t[i] - avg) > c * avg:
            return False
    return True


def loops_to_steady(trace: Trace, *, since: int = 0, until: int | None = None,
                    quiet_windows: int = QUIET_WINDOWS, c: float | None = None) -> float:
    """Loops from *since* until the system settles for good within [since, until), NaN if it does not.

    Settled from L = one loop after the last transfer decided in [since, until) (L = *since* if there
    is none) when at least ``quiet_windows · window`` quiet loops follow before *until* (default:
    the end of the run) and, if *c* is given, every workstation is Normal over the last window
    before *until* (|T_i − mean of its neighbours| ≤ c × that mean).
    """
    n, window = loops(trace), trace.meta["window"]
    until = n if until is None else min(until, n)
    inside = [t[0] for t in trace.transfers if since <= t[0] < until]
    L = max(inside) + 1 if inside else since
    if until - L < quiet_windows * window:
        return math.nan
    if c is not None and not _all_normal(trace, until - window, until, c):
        return math.nan
    return float(L - since)


def _quiet_after(ks: list[int], since: int, until: int, quiet: int) -> int:
    """The earliest L — *since*, or one loop after a decision loop in *ks* (sorted) — followed by
    *quiet* loops without a decision, before *until*; *until* if there is none."""
    for L, nxt in zip([since] + [k + 1 for k in ks], ks + [until]):
        if L + quiet <= until and nxt >= L + quiet:
            return L
    return until


def _neighbourhoods(trace: Trace) -> list[set[int]]:
    P = trace.n_nodes
    ring = trace.meta["layout"] == "ring" and P > 2
    return [{i, (i - 1) % P, (i + 1) % P} if ring else {j for j in (i - 1, i, i + 1) if 0 <= j < P}
            for i in range(P)]


def _settled(trace: Trace, since: int, until: int | None, quiet_windows: int) -> list[int]:
    """Per workstation i, the loop at which its neighbourhood (i and its neighbours) settles: one loop
    after the last transfer touching it in its first burst of balancing after *since* (transfers less
    than ``quiet_windows · window`` loops apart form one burst); *since* if none touches it; *until*
    if the burst runs into *until*. Local, so a far-away transfer in a large network does not
    prolong a workstation's count (000's steps are per workstation, §8.2)."""
    n = loops(trace)
    until = n if until is None else min(until, n)
    quiet = quiet_windows * trace.meta["window"]
    inside = [(t[0], t[2], t[3]) for t in trace.transfers if since <= t[0] < until]
    out = []
    for hood in _neighbourhoods(trace):
        ks = sorted({k for k, src, dst in inside if src in hood or dst in hood})
        out.append(_quiet_after(ks, ks[0], until, quiet) if ks else since)
    return out


def steps_to_steady(trace: Trace, *, since: int = 0, until: int | None = None,
                    quiet_windows: int = QUIET_WINDOWS) -> np.ndarray:
    """Per workstation, the balancing actions (decisions that moved DP) it took from *since* until its
    neighbourhood settled (see :func:`_settled`): the steps required to bring it from the imbalance at
    *since* to steady state. Later actions (noise re-triggering a workstation that sits near the
    threshold after a quiet spell) are not counted; one that never settles counts every action up to
    *until*."""
    settled = _settled(trace, since, until, quiet_windows)
    out = np.zeros(trace.n_nodes, dtype=np.int64)
    for k, src in {(t[0], t[2]) for t in trace.transfers if since <= t[0] < settled[t[2]]}:
        out[src] += 1
    return out


def dp_to_steady(trace: Trace, *, since: int = 0, until: int | None = None,
                 quiet_windows: int = QUIET_WINDOWS) -> int:
    """DP moved by the actions :func:`steps_to_steady` counts."""
    settled = _settled(trace, since, until, quiet_windows)
    return int(sum(t[4] for t in trace.transfers if since <= t[0] < settled[t[2]]))


def summary(trace: Trace, *, since: int = 0) -> dict:
    """Scalars of one run: steps (total, mean per workstation, and to steady state from *since*), DP
    exchanged (total and to steady state), transfers, makespan, eq 4.1 time, loops to steady from
    *since*, and the last window's imbalance (max/mean − 1)."""
    lt, window, steps = trace.series["loop_time"], trace.meta["window"], trace.meta["steps"]
    tail = lt[-window:].mean(axis=0) if loops(trace) >= window else lt[-1:]
    return {"steps": int(steps.sum()), "steps_per_node": steps.tolist(),
            "mean_steps": float(steps.mean()), "dp_exchanged": trace.moved,
            "steps_to_steady": int(steps_to_steady(trace, since=since).sum()),
            "dp_to_steady": dp_to_steady(trace, since=since),
            "transfers": len(trace.transfers), "makespan": trace.makespan, "eq41_time": eq41_time(trace),
            "loops_to_steady": loops_to_steady(trace, since=since),
            "final_imbalance": float(np.max(tail) / np.mean(tail) - 1.0)}


def metrics(trace: Trace) -> dict[str, float]:
    """The metrics of one SPMD run, simulated or real (METRICS and :data:`OWN_METRICS`); NaN for those of
    METRICS that do not apply to the family.

    * ``makespan``: when the last loop ended (the pipelined wall clock in simulation, 000 §4.4);
    * ``imbalance``: max / mean of the nodes' loop times averaged over the last measurement
      window (000's balance criterion compares loop times, not finish times: in a pipeline every
      node finishes within one loop of the others);
    * ``idle_share``: 1 − Σ busy seconds (loop times) / (P × makespan): time spent waiting for a
      neighbour's boundary;
    * ``steps_to_balance``: Σ over nodes of the actions needed to reach steady state
      (:func:`steps_to_steady`, 000 §6.3.4.2);
    * ``dp_moved``: DP moved by balancing in the whole run (000's "load exchange");
    * ``loops_to_steady``: loops until the last transfer, if a quiet period follows (NaN if none does).

    lower_bound / efficiency, chunks, messages, bytes, tasks_moved and the information layer's metrics
    belong to other families: NaN.
    """
    nan = math.nan
    makespan = trace.makespan
    lt, window = trace.series["loop_time"], trace.meta["window"]
    if not len(lt):  # no loop ran (a real run of zero iterations)
        tail, mean_tail = np.zeros(trace.n_nodes), nan
    else:
        tail = lt[-window:].mean(axis=0) if loops(trace) >= window else lt.mean(axis=0)
        mean_tail = float(np.mean(tail))
    return {
        "makespan": makespan,
        "lower_bound": nan, "efficiency": nan,
        "imbalance": float(np.max(tail)) / mean_tail if mean_tail > 0 else nan,
        "idle_share": 1.0 - float(lt.sum()) / (trace.n_nodes * makespan) if makespan > 0 else nan,
        "chunks": nan, "messages": nan, "bytes": nan, "tasks_moved": nan,
        "steps_to_balance": float(steps_to_steady(trace).sum()),
        "dp_moved": float(trace.moved),
        "loops_to_steady": loops_to_steady(trace),
        "info_messages": nan, "info_bytes": nan, "info_age_mean": nan,
    }
