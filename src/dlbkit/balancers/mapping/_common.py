"""Shared pieces of the list-scheduling mappers: a processor's timeline with insertion, and the
earliest finish time of a task on a processor (Topcuoglu, Hariri & Wu 2002 §4.1, eqs 5–6)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

__all__ = ["Timeline", "data_ready", "plan_order"]


class Timeline:
    """The busy intervals of one processor, sorted by start (they never overlap)."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []

    def earliest(self, ready: float, duration: float, insertion: bool = True) -> float:
        """The earliest start ≥ *ready* of a stretch of *duration*: in the first idle gap long enough
        (insertion-based policy, eq. 5's ``avail``), or after the last interval without insertion."""
        ends = self.ends
        if not ends:
            return ready
        if not insertion:
            return max(ready, ends[-1])
        starts = self.starts
        k = bisect_right(ends, ready)  # intervals ending at or before ready cannot block it
        t = ready
        for idx in range(k, len(starts)):
            if starts[idx] - t >= duration:
                return t
            if ends[idx] > t:
                t = ends[idx]
        return t

    def add(self, start: float, end: float) -> None:
        # sorted by (start, end): a zero-length stretch goes before one starting at the same time, so
        # that the ends stay sorted too
        k = bisect_right(self.starts, start) if end > start else bisect_left(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def data_ready(costs, i: int, p: int, proc: list, finish: list) -> float:
    """When all of task i's inputs can be on processor p: max over predecessors j of
    finish_j + transfer(j → p) (eq. 5's second term)."""
    t = 0.0
    for j, d in costs.graph.preds[i]:
        v = finish[j] + costs.comm(d, proc[j], p)
        if v > t:
            t = v
    return t


def plan_order(start: list, finish: list, rank_position: list) -> tuple:
    """A global order from planned start times: by (start, finish, position in the priority list); a
    topological order whenever the planned schedule respects precedence (a successor starts after its
    predecessor finishes; equal times fall back to the priority list, itself topological)."""
    return tuple(sorted(range(len(start)), key=lambda i: (start[i], finish[i], rank_position[i])))
