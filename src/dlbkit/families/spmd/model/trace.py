"""The SPMD family's record in the one :class:`~dlbkit.model.trace.Trace` (:func:`spmd_trace`) and what reads it.

Per loop and node (``trace.series``, numpy arrays of shape loops × P): ``loop_time``, the node's own
busy seconds in that loop (compute + swap + boundary communication + any transfer it sent or
received; 000's loop time L_i, see the note §5.6 for why it is not wall-clock); ``points``, the DP it
held. Every transfer is a row (loop, time, src, dst, dp): decided at the end of ``loop``, its DP are
computed by ``dst`` from loop + 1 on and its cost is paid by both ends in loop + 1.
``meta["steps"][i]`` counts the balancing actions node i initiated (decisions that moved DP),
``meta["decided"][i]`` every time its balancer was asked.

:func:`series_from_intervals` sets those series from a trace's intervals: a real run builds them so, and the
family's recording rules (:mod:`dlbkit.families.spmd.runtime.recording`) so rebuild an old recording's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dlbkit.model.trace import Column, Trace

__all__ = ["spmd_trace", "series_from_intervals", "pipeline_finish_times", "loops", "finish_times", "eq41_time",
           "ownership"]


def pipeline_finish_times(loop_time: np.ndarray, layout: str) -> np.ndarray:
    """Wall-clock end of every loop on every workstation (loops × P) in the pipelined model.

    A workstation starts loop k when it has finished loop k−1 and its neighbours have finished
    theirs (their boundaries of loop k−1 have arrived; the transfer time is already in the busy
    time): ``end[k, i] = max(end[k−1, i], end[k−1, j] for j ∈ N(i)) + loop_time[k, i]``. No global
    barrier (000 §4.4). With constant loop times the slowest workstation never waits, so the
    makespan is exactly loops × its loop time (000 §8.1, eq 4.1).
    """
    loops, P = loop_time.shape
    out = np.empty_like(loop_time)
    end = np.zeros(P)
    ring = layout == "ring" and P > 2
    for k in range(loops):
        ready = end.copy()
        if P > 1:
            np.maximum(ready[1:], end[:-1], out=ready[1:])
            np.maximum(ready[:-1], end[1:], out=ready[:-1])
            if ring:  # the two ends are neighbours too (np.roll would copy both arrays every loop)
                ready[0] = max(ready[0], end[-1])
                ready[-1] = max(ready[-1], end[0])
        end = ready + loop_time[k]
        out[k] = end
    return out


def spmd_trace(*, layout: str, window: int, loop_time: np.ndarray, points: np.ndarray, starts: np.ndarray,
               transfers: list[tuple[int, int, int, int]], steps: np.ndarray | None = None,
               decided: np.ndarray | None = None, finish: np.ndarray | None = None, balancer: str = "",
               seed: Any = None, source: str = "sim", **meta: Any) -> Trace:
    """The :class:`~dlbkit.model.trace.Trace` of an SPMD run from its per-loop arrays (loops × P).

    Every loop of every node is an interval: ``first`` its block's first DP offset (``starts``),
    ``count`` the DP it held (``points``), ``t_end`` when it ended (*finish*; by default the pipeline
    of :func:`pipeline_finish_times`) and ``t_start`` = ``t_end`` − ``loop_time``, ``round`` the loop.
    ``series`` keeps ``loop_time``, ``points`` and ``starts``; every transfer ``(loop, src, dst, dp)`` is
    a transfer row ``(loop, time, src, dst, dp)``, *time* the end of that loop on the sender (where it
    was decided); ``meta`` has ``layout``, ``window``, ``steps`` and ``decided`` (per node: balancing actions
    initiated, and times its balancer was asked) and anything else given.
    """
    loop_time = np.asarray(loop_time, dtype=float)
    loops, P = loop_time.shape if loop_time.ndim == 2 else (0, len(steps) if steps is not None else 0)
    if finish is None:
        finish = pipeline_finish_times(loop_time, layout)
    tr = Trace(P, list(range(P)), balancer=balancer, seed=seed, source=source, family="spmd")
    if loops:
        tr.node = np.tile(np.arange(P, dtype=np.int64), loops)
        tr.first = np.asarray(starts, dtype=np.int64).ravel()
        tr.count = np.asarray(points, dtype=np.int64).ravel()
        tr.t_end = np.asarray(finish, dtype=float).ravel()
        tr.t_start = tr.t_end - loop_time.ravel()
        tr.t_ask = Column("d", tr.t_start)  # a copy: the columns grow apart if rows are appended
        tr.round_of = np.repeat(np.arange(loops, dtype=np.int64), P)
    tr.series = {"loop_time": loop_time, "points": np.asarray(points), "starts": np.asarray(starts)}
    # a transfer's time: when the sender finished the loop at whose end it was decided
    tr.transfers = [(int(k), float(finish[k, src]), int(src), int(dst), int(dp)) for k, src, dst, dp in transfers]
    tr.meta.update(layout=layout, window=int(window),
                   steps=np.zeros(P, dtype=np.int64) if steps is None else np.asarray(steps),
                   decided=np.zeros(P, dtype=np.int64) if decided is None else np.asarray(decided), **meta)
    return tr


def loops(trace: Trace) -> int:
    """Loops an SPMD trace holds."""
    return int(trace.series["loop_time"].shape[0])


def finish_times(trace: Trace) -> np.ndarray:
    """Wall-clock end of every loop on every node (loops × P): the intervals' ends, placed by their
    round and node (a real run appends them in the order they complete)."""
    ct = trace.intervals()
    out = np.zeros((loops(trace), trace.n_nodes))
    out[ct["round"], ct["node"]] = ct["t_end"]
    return out


def eq41_time(trace: Trace) -> float:
    """000's eq 4.1: Σ over loops of the slowest node's loop time (a barrier after every loop)."""
    lt = trace.series["loop_time"]
    return float(lt.max(axis=1).sum()) if len(lt) else 0.0


def ownership(trace: Trace, loop: int) -> np.ndarray:
    """Block start offsets of every node during *loop* (node 0 starts where it started).

    Blocks are contiguous and in node order; on a ring offsets are modulo the domain size and node 0's
    start moves when the wrap-around pair (P−1, 0) exchanges DP.
    """
    return trace.series["starts"][loop]


def series_from_intervals(trace: Trace, n_loops: int | None = None) -> Trace:
    """Set an SPMD trace's series from its intervals (one per loop and node, in any order): loop time
    ``t_end − t_start``, points ``count`` and block starts ``first`` (loops × P); return the trace.
    A real run builds its series so, and so does a recording written before traces kept them."""
    ct = trace.intervals()
    n = n_loops if n_loops is not None else (int(ct["round"].max()) + 1 if len(ct["round"]) else 0)
    shape = (n, trace.n_nodes)
    loop_time, points, starts = np.zeros(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    loop_time[ct["round"], ct["node"]] = ct["t_end"] - ct["t_start"]
    points[ct["round"], ct["node"]] = ct["count"]
    starts[ct["round"], ct["node"]] = ct["first"]
    trace.series = {"loop_time": loop_time, "points": points, "starts": starts}
    return trace
