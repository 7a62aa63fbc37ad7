"""What a loop's trace measured of the links between the workers and the master: the round trip of
each request (a chunk's end to the start of the worker's next chunk in the same time step), per worker
and over all. Read by the replay, ``advise`` and ``auto`` (their model of the next run), and kept in a
real run's recording (``meta["link_latency"]``)."""

from __future__ import annotations

from bisect import bisect_right

import numpy as np

from dlbkit.model.trace import Trace

__all__ = ["round_trip_latency", "link_latencies"]


def _gaps(trace: Trace) -> list[list[float]]:
    """Per worker, the times from a chunk's end to the start of its next chunk in the same time step
    (a request's round trip through the master; a gap across steps is the step's barrier)."""
    P = trace.n_nodes
    steps = trace.meta.get("time_steps") or []
    bounds = [s["chunks"][0] for s in steps[1:]]
    rows_of: list[list[int]] = [[] for _ in range(P)]
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        rows_of[trace.node[k]].append(k)
    # a step boundary b lies in (r1, r2] iff the two chunks are in different steps: a bisection each, not a
    # scan of every boundary per gap (Loop.trace reads this over all of a long run's steps)
    return [[trace.t_start[b] - trace.t_end[a] for a, b in zip(rows, rows[1:])
             if bisect_right(bounds, a) == bisect_right(bounds, b)] for rows in rows_of]


def round_trip_latency(trace: Trace) -> float:
    """Half the mean round trip of every worker's requests (:func:`_gaps`): one latency for all links."""
    gaps = [g for mine in _gaps(trace) for g in mine]
    return max(float(np.mean(gaps)), 0.0) / 2 if gaps else 0.0


def link_latencies(trace: Trace) -> list[float]:
    """Each worker's own latency to the master: half the mean round trip of its requests; a worker
    with no second chunk in a step (nothing measured) gets :func:`round_trip_latency`'s."""
    pooled = round_trip_latency(trace)
    return [max(float(np.mean(mine)), 0.0) / 2 if mine else pooled for mine in _gaps(trace)]
