"""The metrics every family may fill, computed from a Trace (simulated or real run alike).

A family's own metrics (a loop's rounds to balance, an SPMD run's data points moved, a job stream's response
times) are its declaration's (``Family.own_metrics``); ``dlbkit.families.metrics_table()`` is this table with
every family's own.
"""

from __future__ import annotations

import math

import numpy as np

from dlbkit.model.trace import Trace

__all__ = ["METRICS", "compute", "lower_bound", "worker_loads"]

#: name -> (description, which direction is better): the metrics several families fill. The descriptions are
#: worded for any family; a family whose meaning is narrower says it in its ``metric_text`` (a loop's makespan
#: is its last chunk's completion, a tree's its last task's), which the report shows (Family.describe_metric).
#: Their order is the columns' of results.csv (a family's own metrics go where its declaration says).
METRICS: dict[str, tuple[str, str]] = {
    "makespan": ("time the last work ended (s)", "lower"),
    "lower_bound": ("earliest time all work could be done given speeds and availability (s)", "lower"),
    "efficiency": ("lower_bound / makespan", "higher"),
    "imbalance": ("max / mean of the nodes' finish times", "lower"),
    "idle_share": ("share of node time not computing, up to the makespan", "lower"),
    "chunks": ("stretches of work in the trace (a node's run of work between waits)", "lower"),
    "messages": ("balancing messages sent between nodes", "lower"),
    "bytes": ("bytes moved with work and results", "lower"),
    "tasks_moved": ("tasks moved between nodes by balancing", "lower"),
    # the information layer (dlbkit.info): what knowing the loads cost, and how old it was
    "info_messages": ("messages that carried load information to deciders", "lower"),
    "info_bytes": ("bytes of load information sent", "lower"),
    "info_age_mean": ("mean age of the other nodes' loads in the views deciders read (s)", "lower"),
    "info_freshness": ("freshness ε: mean square error of the nodes' views of each other's loads against the truth, "
                       "sampled at the information rounds (003 §4.3.3.4)", "lower"),
}


def lower_bound(trace: Trace) -> float:
    """The earliest time at which all the work could be finished, ignoring communication.

    Fluid bound: the work W = Σ item costs, spread perfectly over every worker, finishes at the t
    where the platform's cumulative capacity Σ_i s_i ∫_0^t a_i equals W (a_i = worker i's
    availability, integrated exactly). Items are indivisible, so the bound is also at least the
    time the largest item takes on the worker that would finish it first. No schedule beats it.
    """
    speeds = trace.speeds
    avail = trace.availability
    work = float(trace.total_work)
    if not speeds or not work > 0:
        return 0.0
    if not math.isfinite(work) or not all(math.isfinite(s) and s > 0 for s in speeds):
        return math.nan  # nothing finite to bound (the model's checks keep configurations from this)
    # Work and speeds in units of the fastest node: Σ s_i stays finite however large the speeds
    # (two nodes of speed 1e308 would otherwise sum to inf and the search below never end).
    scale = max(speeds)
    rel = [s / scale for s in speeds]
    single = min(a.finish(0.0, trace.max_item / s) for s, a in zip(speeds, avail))
    if all(a.constant is not None for a in avail):
        fluid = work / scale / sum(s * a.constant for s, a in zip(rel, avail))
        return max(fluid, single)

    def capacity(t: float) -> float:
        return sum(s * a.capacity(t) for s, a in zip(rel, avail))

    target = work / scale
    lo, hi = 0.0, target / sum(rel)  # at full availability: a lower bound on t (> 0: rel has a 1)
    for _ in range(2100):  # doubling: from the smallest positive float to the largest takes < 2100
        if capacity(hi) >= target or not math.isfinite(hi):
            break
        lo, hi = hi, hi * 2.0
    if not math.isfinite(hi):
        return math.inf  # the capacity never reaches the work within the float range
    for _ in range(200):  # bisection to float resolution; capacity is continuous and increasing
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if capacity(mid) < target:
            lo = mid
        else:
            hi = mid
    return max(hi, single)


def worker_loads(trace: Trace) -> dict[str, np.ndarray]:
    """Per worker: items done, busy seconds, finish time (last completion, 0 if never used)."""
    P = trace.n_nodes
    ct = trace.intervals()
    w = ct["node"]
    items = np.bincount(w, weights=ct["count"], minlength=P)
    busy = np.bincount(w, weights=ct["t_end"] - ct["t_start"], minlength=P)
    finish = np.zeros(P)
    if len(w):
        np.maximum.at(finish, w, ct["t_end"])
    return {"items": items, "busy": busy, "finish": finish}


def compute(trace: Trace) -> dict[str, float]:
    """The metrics of METRICS that a trace's intervals, counters and information layer give, for one run."""
    makespan = trace.makespan
    bound = lower_bound(trace)
    loads = worker_loads(trace)
    finish = loads["finish"]
    mean_finish = float(finish.mean()) if len(finish) else 0.0
    return {
        "makespan": makespan,
        "lower_bound": bound,
        "efficiency": bound / makespan if makespan > 0 else math.nan,
        "imbalance": float(finish.max() / mean_finish) if mean_finish > 0 else math.nan,
        "idle_share": 1.0 - float(loads["busy"].sum()) / (trace.n_nodes * makespan) if makespan > 0 else math.nan,
        "chunks": float(trace.n_intervals),
        "messages": float(trace.messages),
        "bytes": float(trace.bytes),
        "tasks_moved": float(trace.meta.get("tasks_moved", math.nan)),
        "info_messages": float(trace.info_messages), "info_bytes": float(trace.info_bytes),
        "info_age_mean": float(trace.info_age_mean),
    }
