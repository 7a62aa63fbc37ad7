"""The one evaluator of the task-graph family: the time of a static plan under either cost model.

It lives in the model layer because it is a pure function of the graph, the costs and a plan (no
clock, no queue): the graph engine (:mod:`dlbkit.families.graph.sim.static`) times every plan with it, and mappers that
search over plans (annealing) use it as their objective, without importing an engine.

* **Order.** With an order (a topological sequence of all tasks), each processor runs its tasks in
  that sequence, each as early as its data and its processor allow. Without one, the list rule of
  002 App. A.2: among the tasks whose predecessors have all been placed, the one of highest priority
  (upward rank = 002's precedence level), ties by earliest ready time, then lowest index, goes next on
  its processor. Non-preemptive; no insertion into idle gaps (a plan that wants a gap-filled
  schedule gives the order that says so: HEFT's order sorts tasks by their planned start).
* **standard** (Topcuoglu et al. 2002 §3): task i on p starts at max(processor free, max over
  predecessors j of finish_j + transfer(j → i)); the transfer is free on one machine; processors
  compute while data is in flight.
* **thesis** (002 §2.4, App. A.2, §9.4): a task's time on its processor is receive + compute +
  transmit, all serialised (every off-machine message occupies both ends, ``c · d``); after computing,
  a task sends in decreasing precedence level of its receivers, and a receiver is ready when its
  message *starts* to be sent (its receive time is inside its own time). This reproduces the
  thesis's simulated-annealing row (note §9.4) and the worst-case formulas of §10 (R5, R6).

* **standard with contention** (the one-port model, :mod:`dlbkit.families.graph.model.costs`): when a task
  finishes, its off-machine messages are placed one by one, to receivers of decreasing priority
  (ties in successor-list order), each at the earliest time ≥ the task's finish when both its
  machine's send port and the receiver machine's receive port are free for the whole transfer (an
  idle gap left by earlier messages may be used, since tasks are timed in list order, not in time
  order); the receiver's data arrives when the message ends.

Availability: with ``availability`` (one piecewise profile per processor, or None for dedicated
nodes) a task's time is stretched by its processor's availability (``Piecewise.finish``).
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left, bisect_right
from typing import Any, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.costs import GraphCosts, upward_rank

__all__ = ["Evaluator", "evaluate", "send_order", "Timeline", "Port", "plan_order"]


#: candidate gaps :meth:`Timeline.earliest` tries one by one in Python before handing the rest of the
#: timeline to one numpy comparison: most calls (a task whose data is ready near the end of a
#: processor's busy time) stop within a few intervals, where numpy's fixed cost (~1 µs) would dominate.
#: HEFT on 20 000 tasks took the same CPU time (±10%) with any value from 2 to 32 (BENCHMARKS.md).
_SCAN = 8


class Timeline:
    """The busy intervals of one processor (the list-scheduling mappers') or of one machine's port
    (the evaluator's contention), sorted by start (they never overlap).

    Because they never overlap, the ends are sorted too, so past the first interval that ends after
    ``ready`` the only candidate start in front of interval ``idx`` is ``ends[idx - 1]``: the search
    is "the first idx with ``starts[idx] - ends[idx - 1] >= duration``", asked of an array of those
    gaps (kept in step by :meth:`add`) at C speed. Each gap is the same float subtraction the plain
    scan (:meth:`_scan`) does, so both give the same answer to the bit; if a stretch ever breaks the
    order of the ends (a rounding overlap, a NaN), ends a stretch at −0.0 or at a time that is not a
    float, or leaves a gap numpy cannot hold exactly, the timeline falls back to the plain scan for
    good."""

    __slots__ = ("starts", "ends", "_gaps", "_fast")

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []
        self._gaps = np.empty(16)  # _gaps[i] = starts[i] - ends[i - 1] for 1 ≤ i < len(starts)
        self._fast = True  # the ends are sorted and every gap is held exactly in _gaps

    def earliest(self, ready: float, duration: float, insertion: bool = True) -> float:
        """The earliest start ≥ *ready* of a stretch of *duration*: in the first idle gap long enough
        (insertion-based policy, eq. 5's ``avail``), or after the last interval without insertion."""
        ends = self.ends
        if not ends:
            return ready
        if not insertion:
            return max(ready, ends[-1])
        if not self._fast or (type(duration) is not float and not _exact(duration)):
            return self._scan(ready, duration)
        starts = self.starts
        n = len(ends)
        k = bisect_right(ends, ready)  # intervals ending at or before ready cannot block it
        if k == n:
            return ready
        if starts[k] - ready >= duration:
            return ready
        stop = k + 1 + _SCAN
        if stop > n:
            stop = n
        for idx in range(k + 1, stop):
            t = ends[idx - 1]
            if starts[idx] - t >= duration:
                return t
        if stop < n:
            hit = self._gaps[stop:n] >= duration
            j = int(hit.argmax())
            if hit[j]:
                return ends[stop + j - 1]
        return ends[-1]

    def _scan(self, ready: float, duration: float) -> float:
        """The insertion search interval by interval (the definition :meth:`earliest` shortcuts)."""
        starts, ends = self.starts, self.ends
        t = ready
        for idx in range(bisect_right(ends, ready), len(starts)):
            if starts[idx] - t >= duration:
                return t
            if ends[idx] > t:
                t = ends[idx]
        return t

    def add(self, start: float, end: float) -> None:
        # sorted by (start, end): a zero-length stretch goes before one starting at the same time, so
        # that the ends stay sorted too
        starts, ends = self.starts, self.ends
        k = bisect_right(starts, start) if end > start else bisect_left(starts, start)
        starts.insert(k, start)
        ends.insert(k, end)
        if not self._fast:
            return
        n = len(starts)
        if ((k > 0 and not ends[k - 1] <= end) or (k + 1 < n and not end <= ends[k + 1])
                or type(end) is not float or (end == 0 and math.copysign(1.0, end) < 0)):
            # unsorted ends, or an end equal to another yet not the same value (−0.0 and 0.0, 5 and
            # 5.0: the scan returns the first of equal ends, the shortcut the last): keep to the scan
            self._fast = False
            return
        g = self._gaps
        if n > len(g):
            g = self._gaps = np.concatenate((g, np.empty(len(g))))
        if k + 1 < n:
            g[k + 2:n] = g[k + 1:n - 1]  # the later gaps move up one place, unchanged
            self._fast = _put(g, k + 1, starts[k + 1] - end)
        if k > 0 and self._fast:
            self._fast = _put(g, k, start - ends[k - 1])


def _exact(x) -> bool:
    """Whether *x* (a time or a length that is not a Python float) compares as its float64 does."""
    try:
        return float(x) == x
    except (TypeError, OverflowError, ValueError):
        return False


def _put(g, i: int, gap) -> bool:
    """Store *gap* at ``g[i]``; False if the array would not hold it exactly (then use the scan)."""
    if type(gap) is not float and not _exact(gap):
        return False
    g[i] = gap
    return True


#: a machine's send or receive port under one-port contention: its busy stretches are a timeline
Port = Timeline


def _both_free(out: Port, inp: Port, t: float, dur: float) -> float:
    """The earliest start ≥ *t* when both ports are free for *dur* (alternate until they agree)."""
    while True:
        t1 = out.earliest(t, dur)
        t2 = inp.earliest(t1, dur)
        if t2 == t1:
            return t1
        t = t2


def _all_free(lines: Sequence[Timeline], t: float, dur: float) -> float:
    """The earliest start ≥ *t* when every one of *lines* is free for *dur* (until they agree)."""
    while True:
        t1 = t
        for line in lines:
            t1 = line.earliest(t1, dur)
        if t1 == t:
            return t
        t = t1


class _Contended:
    """One timing's ports and links under contention: a message occupies its sender's send port and its
    receiver's receive port at once (one-port), or every link of its route (with routes), from the
    earliest time all are free."""

    def __init__(self, costs: GraphCosts):
        hosts = set(costs.host)
        self.costs = costs
        self.routes = getattr(costs, "routes", None)
        self.send_port = {h: Port() for h in hosts}
        self.recv_port = {h: Port() for h in hosts}
        self.links: dict = {}

    def arrivals(self, succs: Sequence[tuple[int, float]], a: Sequence[int], p: int, f: float):
        """(successor, time its data has arrived) of each edge out of a task that ended at *f* on *p*."""
        c = self.costs
        host = c.host
        hp = host[p]
        latp, perp = c.lat[p], c.per[p]
        out = self.send_port[hp]
        for j, d in succs:
            q = a[j]
            hq = host[q]
            dur = 0.0 if hq == hp else latp[q] + d * perp[q]
            t = f
            if dur > 0 and self.routes is not None:  # link contention: every link of the route at once
                route = [self.links.setdefault(k, Timeline()) for k in self.routes[(hp, hq)]]
                t = _all_free(route, f, dur)
                for line in route:
                    line.add(t, t + dur)
                t += dur
            elif dur > 0:
                inp = self.recv_port[hq]
                t = _both_free(out, inp, f, dur)
                out.add(t, t + dur)
                inp.add(t, t + dur)
                t += dur
            yield j, t


def send_order(costs: GraphCosts, prio: Sequence[float]) -> list[list[tuple[int, float]]]:
    """Per task, its successors in the order the thesis model accumulates them: ascending priority
    (so the highest-priority receiver's message is sent first), ties in successor-list order."""
    g = costs.graph
    return [sorted(g.succs[i], key=lambda e: prio[e[0]]) for i in range(g.n_tasks)]


class Evaluator:
    """The evaluator of one graph on one set of processors, prepared once (priorities, the thesis
    model's send order) to time many plans: ``times(assignment, order=None)`` → (ready, start,
    finish); ``makespan(...)``. :func:`evaluate` is the one-shot form."""

    def __init__(self, costs: GraphCosts, priority: Sequence[float] | None = None,
                 availability: Sequence[Any] | None = None):
        self.costs = costs
        self.prio = list(priority) if priority is not None else upward_rank(costs)
        self.thesis = costs.kind == "thesis"
        self.succs = send_order(costs, self.prio) if self.thesis else costs.graph.succs
        self.contention = bool(getattr(costs, "contention", False))
        if self.contention:  # the order messages are placed in: receivers of decreasing priority
            self.succs = send_order(costs, [-x for x in self.prio])
        self.npred0 = [len(p) for p in costs.graph.preds]
        self.entries = [i for i, k in enumerate(self.npred0) if k == 0]
        self.availability = list(availability) if availability is not None else None

    def makespan(self, assignment: Sequence[int], order: Sequence[int] | None = None) -> float:
        return max(self.times(assignment, order)[2])

    def times(self, assignment: Sequence[int], order: Sequence[int] | None = None):
        c = self.costs
        g = c.graph
        n = g.n_tasks
        a = assignment
        if len(a) != n:
            raise ConfigError("assignment", f"{len(a)} entries", f"one processor per task ({n})")
        prio, thesis, succs, preds = self.prio, self.thesis, self.succs, g.preds
        ex, host, lat, per = c.exec, c.host, c.lat, c.per
        ready = [0.0] * n
        start = [0.0] * n
        finish = [0.0] * n
        avail = [0.0] * c.n_nodes
        npred = self.npred0[:]
        prof = self.availability
        contended = _Contended(c) if self.contention else None
        push, pop = heapq.heappush, heapq.heappop
        if order is None:
            heap = [(-prio[i], 0.0, i) for i in self.entries]
            heapq.heapify(heap)
            it = None
        else:
            heap = None
            it = iter(order)
        done = 0
        while True:
            if it is None:
                if not heap:
                    break
                i = pop(heap)[2]
            else:
                i = next(it, -1)
                if i < 0:
                    break
                if npred[i] != 0:
                    raise ConfigError("order", f"task {g.ids[i]!r} before one of its predecessors",
                                      "a topological order")
            done += 1
            p = a[i]
            hp = host[p]
            st = ready[i]
            if avail[p] > st:
                st = avail[p]
            work = ex[i][p]
            perp = per[p]
            if thesis:
                for j, d in preds[i]:
                    q = a[j]
                    if host[q] != hp:
                        work += d * per[q][p]
                for j, d in succs[i]:
                    q = a[j]
                    if host[q] != hp:
                        work += d * perp[q]
            f = st + work if prof is None else prof[p].finish(st, work)
            start[i] = st
            finish[i] = f
            avail[p] = f
            if thesis:
                csum = 0.0
                for j, d in succs[i]:
                    q = a[j]
                    if host[q] != hp:
                        csum += d * perp[q]
                    t = f - csum
                    if t > ready[j]:
                        ready[j] = t
                    npred[j] -= 1
                    if npred[j] == 0 and it is None:
                        push(heap, (-prio[j], ready[j], j))
            elif contended is not None:
                for j, t in contended.arrivals(succs[i], a, p, f):
                    if t > ready[j]:
                        ready[j] = t
                    npred[j] -= 1
                    if npred[j] == 0 and it is None:
                        push(heap, (-prio[j], ready[j], j))
            else:
                latp = lat[p]
                for j, d in succs[i]:
                    q = a[j]
                    t = f if host[q] == hp else f + latp[q] + d * perp[q]
                    if t > ready[j]:
                        ready[j] = t
                    npred[j] -= 1
                    if npred[j] == 0 and it is None:
                        push(heap, (-prio[j], ready[j], j))
        if done != n:
            raise ConfigError("order", f"{done} of {n} tasks", "every task exactly once, in a topological order")
        return ready, start, finish


def evaluate(costs: GraphCosts, assignment: Sequence[int], order: Sequence[int] | None = None, *,
             priority: Sequence[float] | None = None, availability: Sequence[Any] | None = None,
             ) -> tuple[list[float], list[float], list[float]]:
    """(ready, start, finish) of every task of ``costs.graph`` under the plan (*assignment*, *order*).

    *priority* (default :func:`~dlbkit.families.graph.model.costs.upward_rank`) orders the list rule and the
    thesis model's messages. An order that is not a topological order of all tasks is a ConfigError.
    """
    return Evaluator(costs, priority, availability).times(assignment, order)


def plan_order(costs: GraphCosts, assignment: Sequence[int], order: Sequence[int] | None = None) -> list[int]:
    """The global order in which a plan's processors run their tasks: *order* if the plan has one,
    else the order the list rule gives on dedicated nodes (by start, then finish, then topological
    position), as the ``dynamic`` engine and the runtime replay a plan."""
    if order is not None:
        return list(order)
    _, s, f = Evaluator(costs).times(assignment)
    pos = {t: k for k, t in enumerate(costs.graph.topo)}
    return sorted(range(costs.graph.n_tasks), key=lambda i: (s[i], f[i], pos[i]))
