"""Every node's queue over a job-stream run, exactly, from its trace's intervals, and the convergence time
(003 §3.4.3.4: from a start with some over-loaded queues, the time until the queues are "normal" again).

A task is in node j's system from ``t_ask`` (it reached j; 0 for a task already there when the run
starts) until ``t_end``. Events at one instant are applied together and the state read after them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["queue_path", "convergence_time"]

#: cells of the events × nodes matrix handled at once (4 Mi int64: 32 MB)
CELLS = 1 << 22


def queue_path(trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, max queue, min queue): after all the events at each distinct time, the longest and the
    shortest queue over the nodes (the state from that time until the next)."""
    n = trace.n_nodes
    node = np.asarray(trace.node, dtype=np.int64)
    t_in = np.asarray(trace.t_ask, dtype=float)
    t_out = np.asarray(trace.t_end, dtype=float)
    t = np.concatenate((t_in, t_out))
    step = np.concatenate((np.ones(len(node), np.int64), -np.ones(len(node), np.int64)))
    where = np.concatenate((node, node))
    order = np.argsort(t, kind="stable")
    t, step, where = t[order], step[order], where[order]
    last = np.ones(len(t), dtype=bool)  # the last event of each instant
    last[:-1] = t[1:] != t[:-1]
    hi, lo = [], []
    q = np.zeros(n, dtype=np.int64)
    block = max(1, CELLS // n)
    for a in range(0, len(t), block):
        b = min(a + block, len(t))
        m = np.zeros((b - a, n), dtype=np.int64)
        m[np.arange(b - a), where[a:b]] = step[a:b]
        m = np.cumsum(m, axis=0) + q
        q = m[-1].copy()
        keep = last[a:b]
        hi.append(m[keep].max(axis=1))
        lo.append(m[keep].min(axis=1))
    if not len(t):
        return np.zeros(0), np.zeros(0, np.int64), np.zeros(0, np.int64)
    return t[last], np.concatenate(hi), np.concatenate(lo)


def convergence_time(trace, maxdiff: float) -> float:
    """The first time at which the longest and the shortest queue differ by at most *maxdiff* tasks
    (0 if they do from the start; NaN if never within the run)."""
    t, hi, lo = queue_path(trace)
    ok = np.flatnonzero(hi - lo <= maxdiff)
    return float(t[ok[0]]) if len(ok) else math.nan
