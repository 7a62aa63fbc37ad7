"""The specialised loop of :mod:`dlbkit.families.stream.sim.engine` for the supermarket model's case: exact
information, one task per job, one first-in-first-out slot per node of rate and nominal speed 1, no transfer time, no
queue samples and no trace intervals (:func:`eligible` lists the conditions; every other case runs on
the kernel).

**Same semantics as the kernel path.** The balancer object still places every job
(``balancer.place(view)`` on the live :class:`~dlbkit.families.stream.model.view.StreamView`, its answer checked as
the engine's inlined decision does). What changes is the bookkeeping: a FIFO slot's departure is
known when a job is placed (the previous job's departure at that node, or the arrival if the node is
idle, plus the demand), so no departure is ever scheduled later: one heap of the pending departure
times (floats; a dict gives each time's node), the arrivals read from their sorted array, the queue
lengths, ``updated_at`` and the time integral of the tasks in the system kept exactly as the kernel's
handlers keep them, event by event, in the kernel's order.

**Ties.** The kernel runs the events within its tolerance of the earliest as one instant, in the
order they were scheduled (:mod:`dlbkit.sim.kernel`). The loop checks each event's neighbours (with
twice the tolerance: a superset of the kernel's test) and hands a possible tie to :class:`_Instants`,
which forms the kernel's instant from what the kernel's queue would hold (the next arrival and the
departure of the task in service at each node) and runs it in the order of scheduling: by where the
event that scheduled each one (arrival b: arrival b − 1; a departure: the event that started its
task) ran, an instant's events being placed by (the instant's first time, position). Where that
order is open (two departures at one exact time, two instants opening at one time, a task started
at an arrival's time by an event that cannot be told) the loop gives up and the engine reruns on the
kernel (:func:`run` returns None). At N = 1000, ρ = 0.9, J = 10⁶ (seed 1) the loop meets 5 possible
ties and no open one; recorded traces of integer times fall back.

``tests/families/stream/sim/test_stream_fast.py`` compares the two paths (every placement, every job's completion, queue
maxima, statistics and counts, bit for bit) on Poisson streams, with a tolerance at which most
events tie, on an exact-tie trace (the fallback), and in a hypothesis property.
"""

from __future__ import annotations

import inspect
import math
from heapq import heapify, heappop, heappush

import numpy as np

from dlbkit.families.stream.balancers import decide

__all__ = ["eligible", "run", "FastRun"]

_INF = math.inf

#: engine options the loop implements, with the values it implements (None: any value); an option
#: not listed here (one added to the engine later) must be at its default, else the kernel runs
_OPTIONS = {"platform": None, "workload": None, "balancer": None, "seed": None, "info": None, "task_bytes": None,
            "warmup": None, "samples": (0,), "batch_update": None, "record": (False,),
            "record_decisions": (False,), "inline": (True,)}


def eligible(engine, options: dict, *, exact: bool, slots, rates, speeds, widths, demands,
             zero_transfer: bool) -> str | None:
    """None if the loop implements this run, else why not (the first condition that fails).
    *engine*: the engine's options class (its :meth:`~dlbkit.sim.options.EngineOptions.defaults`) or
    function (its signature) gives the defaults of options the loop does not know; *options*: the call's
    options, by name; *exact*: exact information; *slots*, *rates*, *speeds* (nominal): per node;
    *widths*: tasks per job, *demands*: per task (arrays)."""
    defaults = engine.defaults() if hasattr(engine, "defaults") else {  # an EngineOptions class: its table
        k: p.default for k, p in inspect.signature(engine).parameters.items()}
    for k, v in options.items():
        if k in _OPTIONS:
            allowed = _OPTIONS[k]
            if allowed is not None and not any(_same(v, a) for a in allowed):
                return f"{k}={v!r}"
        elif k not in defaults or not _same(v, defaults[k]):
            return f"{k}={v!r} (an option the fast loop does not implement)"
    if not exact:
        return "an information model"
    if not zero_transfer:
        return "a transfer time"
    if any(s != 1 for s in slots):
        return "a node with more than one slot"
    if any(r != 1.0 for r in rates):
        return "a node whose rate is not 1"
    if any(v != 1.0 for v in speeds):  # rate 1 from speed × availability: the job's ideal time is demand / speed
        return "a node whose nominal speed is not 1"
    if not (np.asarray(widths) == 1).all():
        return "a job of more than one task"
    if not (np.asarray(demands) > 0.0).all():
        return "a task of no demand"  # a departure at its start time would break _instant's order argument
    return None


def _same(v, d) -> bool:
    """*v* is the value *d* (identity, or an equal plain scalar of the same type)."""
    return v is d or (type(v) is type(d) and isinstance(d, (bool, int, float, str)) and v == d)


class FastRun:
    """What the loop hands back to the engine (the kernel path's closing state)."""

    __slots__ = ("done", "area", "tlast", "busy", "snap_w", "snap_e", "events", "ties")

    def __init__(self, done, area, tlast, busy, snap_w, snap_e, events, ties):
        self.done, self.area, self.tlast, self.busy = done, area, tlast, busy
        self.snap_w, self.snap_e, self.events, self.ties = snap_w, snap_e, events, ties


class _Ambiguous(Exception):
    """A tie whose kernel order the loop cannot tell (the engine reruns on the kernel)."""


def run(balancer, view, times, origins, demand, q: list, upd: list, qmax: list, tol: float,
        w_index: int) -> FastRun | None:
    """Run the stream (one task per job: job b's task is task b) with *balancer* deciding on *view*
    (whose ``queue`` is *q* and ``updated_at`` *upd*, updated in place, as is *qmax*). *times*,
    *origins* and *demand* are the arrivals' arrays (float64, int64, float64); the loop reads them
    :data:`CHUNK` jobs at a time as Python numbers, so a run keeps no Python object per job (its
    memory per job: these arrays and the completion times' array). None: a tie the loop cannot
    order (nothing it changed is then meaningful; the engine starts again)."""
    try:
        return _loop(balancer, view, times, origins, demand, q, upd, qmax, tol, w_index)
    except _Ambiguous:
        return None


#: jobs per block read from the arrivals' arrays (a block's lists: 4 × 8 bytes + a Python float and
#: int per job, about 2 MB here, whatever J)
CHUNK = 1 << 15


def _loop(balancer, view, times, origins, demand, q, upd, qmax, tol, w_index):
    n = view.n_nodes
    J = len(times)
    times = np.asarray(times, dtype=float)
    origins = np.asarray(origins, dtype=np.int64)
    demand = np.asarray(demand, dtype=float)
    place = balancer.place
    nodes = range(n)
    tol2 = 2.0 * tol  # the loop's tie test: a superset of the kernel's (first + tol), round-off included
    h = [_INF]  # pending departure times (every placed task not yet gone), and a sentinel
    who: dict[float, int] = {}  # departure time -> node
    pop, push, node_of = heappop, heappush, who.pop  # locals: the hot loop's calls
    free = [0.0] * n  # departure of the last task placed on each node
    cur = [0.0] * n  # start of the task in service on each node
    out = np.empty(J)  # each job's completion: a block's are appended to done (in job order), then copied here
    done: list = []
    st = [0.0, 0.0, 0, 0.0, None, None]  # area, tlast, N, busy, snap_w, snap_e: in and out of the tie resolver
    area = 0.0
    tlast = 0.0
    N = 0.0  # tasks in the system; a float, so N * dt is a float product (the value int * float gives)
    busy = 0.0
    last = J - 1
    mark = w_index if w_index < last else last  # the next arrival whose area is a snapshot
    snap_w = snap_e = None

    instants = _Instants(times, origins, demand, h, who, q, upd, qmax, free, cur, done, view, balancer, tol, w_index)
    add = done.append
    for c0 in range(0, J, CHUNK):
        c1 = min(c0 + CHUNK, J)
        done.clear()
        for b, t, o, w in zip(range(c0, c1), times[c0:c1].tolist(), origins[c0:c1].tolist(),
                              demand[c0:c1].tolist()):
            tlo = t - tol2
            while True:
                D = h[0]
                if D < tlo:  # a departure before the arrival, alone unless the next departure ties
                    pop(h)
                    if h[0] - D > tol2:
                        j = node_of(D)
                        area += N * (D - tlast)
                        tlast = D
                        N -= 1
                        x = q[j] - 1
                        q[j] = x
                        upd[j] = D
                        busy += D - cur[j]
                        if x:
                            cur[j] = D  # the next task starts (its departure is in the heap since it was placed)
                        continue
                    push(h, D)
                elif D - t > tol2:  # the arrival, alone
                    view.time = t
                    view.node = o
                    j = place(view)
                    if j.__class__ is not int or j not in nodes:
                        j = decide.checked_node(balancer, view, j)  # raises the checked error (or accepts a numpy int)
                    area += N * (t - tlast)
                    tlast = t
                    N += 1
                    if b == mark:
                        if b == w_index:
                            snap_w = area
                        if b == last:
                            snap_e = area
                        mark = last
                    x = q[j]
                    if x:
                        D = free[j] + w
                    else:
                        D = t + w
                        cur[j] = t
                    x += 1
                    q[j] = x
                    upd[j] = t
                    if x > qmax[j]:
                        qmax[j] = x
                    free[j] = D
                    if D in who:  # two departures at one exact time: their kernel order is not known here
                        raise _Ambiguous
                    who[D] = j
                    push(h, D)
                    add(D)  # done[b]
                    break
                # a possible tie: the kernel's instant, in its order
                st[:] = area, tlast, N, busy, snap_w, snap_e
                took = instants.run(b, st)
                area, tlast, N, busy, snap_w, snap_e = st
                if took:
                    if b == mark:
                        mark = last
                    break
        out[c0:c1] = done  # every arrival of the block ran, each appending its job's completion once, in order

    st[:] = area, tlast, N, busy, snap_w, snap_e
    _drain(h, who, q, upd, cur, tol2, instants, st)
    area, tlast, N, busy, snap_w, snap_e = st
    return FastRun(out, area, tlast, busy, snap_w, snap_e, 2 * J, instants.count)


def _drain(h, who, q, upd, cur, tol2, instants, st) -> None:
    """The departures after the last arrival (the loop's, as it runs them; *st* holds (area, tlast, N,
    busy, snap_w, snap_e) in and out)."""
    area, tlast, N, busy, snap_w, snap_e = st
    J = len(instants.times)
    while len(h) > 1:
        D = heappop(h)
        if h[0] - D <= tol2:
            heappush(h, D)
            st[:] = area, tlast, N, busy, snap_w, snap_e
            instants.run(J, st)
            area, tlast, N, busy, snap_w, snap_e = st
            continue
        j = who.pop(D)
        area += N * (D - tlast)
        tlast = D
        N -= 1
        x = q[j] - 1
        q[j] = x
        upd[j] = D
        busy += D - cur[j]
        if x:
            cur[j] = D
    st[:] = area, tlast, N, busy, snap_w, snap_e


class _Instants:
    """The tie resolver: runs the kernel's next instant when the loop meets a possible tie (:meth:`run`),
    on the loop's structures (the departure heap *h* and *who*, the queues, each node's last departure
    *free* and start of the task in service *cur*, the completions *done*), and keeps, for the events
    scheduled in an instant of more than one event, where their scheduler ran (the others' follows
    from their parent time): *arrival*, *head*, *firsts*."""

    __slots__ = ("times", "origins", "demand", "h", "who", "q", "upd", "qmax", "free", "cur", "done", "view",
                 "balancer", "tol", "w_index", "last", "arrival", "head", "firsts", "count")

    def __init__(self, times, origins, demand, h, who, q, upd, qmax, free, cur, done, view, balancer, tol, w_index):
        self.times, self.origins, self.demand, self.h, self.who = times, origins, demand, h, who
        self.q, self.upd, self.qmax, self.free, self.cur, self.done = q, upd, qmax, free, cur, done
        self.view, self.balancer, self.tol, self.w_index, self.last = view, balancer, tol, w_index, len(times) - 1
        self.arrival: dict = {}  # job b -> key of the event that scheduled arrival b
        self.head: dict = {}  # node j -> (start time, key of the event that scheduled the departure of its task)
        self.firsts: set = set()  # first times of the instants of more than one event
        self.count = 0  # possible ties met (the instants run here)

    def run(self, b: int, st: list) -> bool:
        """Run the kernel's next instant (the next arrival is job *b*; *b* = J: none): its events in
        the order they were scheduled, each at its own time, as the kernel's handlers do. *st* holds
        (area, tlast, N, busy, snap_w, snap_e) in and out. True if arrival *b* ran."""
        self.count += 1
        heads, first, members = self._members(b)
        return self._execute(heads, first, members, st)

    def _members(self, b: int) -> tuple[dict, float, list]:
        """The instant's events in the kernel's order: (the pending departure of each node's task in
        service, the instant's first time, its members as (parent key, explicit, kind, payload): kind 0
        arrival *b*, 1 a node's departure).

        The kernel orders an instant's events by sequence number, i.e. by when they were scheduled: by
        the run position of the event that scheduled them (their parent), then, for the two events one
        arrival schedules, the next arrival before its task's departure. An event's run position is the
        key (first time of its instant, position in the instant): instants run in order of their first
        times. An event that ran alone has the key (its time, 0); one that ran in an instant of more than
        one event has its key in :attr:`arrival` or :attr:`head`. A parent key known only by its time
        (sub-order unknown) that equals another member's parent time, or two instants of one first
        time, leave the order open: :class:`_Ambiguous`."""
        times, who, cur = self.times, self.who, self.cur
        J = len(times)
        # what the kernel's queue holds: arrival b and the departure of the task in service at each node
        # (the earliest pending departure of that node; the heap also holds the later ones)
        heads: dict[int, float] = {}
        for D in self.h:
            if D != _INF:
                j = who[D]
                if j not in heads or D < heads[j]:
                    heads[j] = D
        first = min(heads.values(), default=_INF)
        tb = float(times[b]) if b < J else _INF  # the arrays' items as Python numbers, as the loop reads them
        if tb < first:  # exact equality: both join the instant, whatever the order
            first = tb
        lim = first + self.tol  # the kernel's test (pop_instant)
        members = []
        if b < J and tb <= lim:
            k = self.arrival.get(b)
            members.append((k, True, 0, b) if k is not None else
                           ((float(times[b - 1]) if b else -_INF, 0, 0), False, 0, b))
        for j, D in heads.items():
            if D <= lim:
                e = self.head.get(j)
                if e is not None and e[0] == cur[j]:  # started in an instant of more than one event
                    members.append((e[1], True, 1, j))
                else:  # by the event at its start time (an arrival: sub-order 1; a departure: 0; unknown)
                    members.append(((cur[j], 0, 0), False, 1, j))
        if len(members) > 1:
            if first in self.firsts:
                raise _Ambiguous
            self.firsts.add(first)
            a0 = members[0]
            if a0[2] == 0 and not a0[1] and b:
                # a task started at arrival b - 1's time (ran alone) was started by it, the only event
                # then (demands are > 0, and no other arrival then): scheduled after arrival b
                pt = a0[0][0]
                same = [i for i, m in enumerate(members) if m[2] == 1 and not m[1] and m[0][0] == pt]
                if len(same) == 1 and (b < 2 or float(times[b - 2]) != pt):
                    members[0] = (a0[0], True, 0, b)
                    i = same[0]
                    members[i] = ((pt, 0, 1), True, 1, members[i][3])
            for u in range(len(members)):
                for v in range(u):
                    a, c = members[u], members[v]
                    if a[0][0] == c[0][0] and not (a[1] and c[1] and a[0] != c[0]):
                        raise _Ambiguous
            members.sort(key=lambda m: m[0])
        return heads, first, members

    def _execute(self, heads: dict, first: float, members: list, st: list) -> bool:
        """Run the instant's *members* in order, as the kernel's arrival and departure handlers do; *st*
        in and out. True if an arrival ran."""
        h, who, q, upd, qmax, free, cur = self.h, self.who, self.q, self.upd, self.qmax, self.free, self.cur
        view, balancer, n = self.view, self.balancer, self.view.n_nodes
        many = len(members) > 1
        area, tlast, N, busy, snap_w, snap_e = st
        took = removed = False
        for pos, (_, _, kind, x) in enumerate(members):
            if kind == 0:  # the arrival handler
                t = float(self.times[x])
                view.time = t
                view.node = int(self.origins[x])
                j = balancer.place(view)
                if j.__class__ is not int or not 0 <= j < n:
                    j = decide.checked_node(balancer, view, j)
                area += N * (t - tlast)
                tlast = t
                N += 1
                if x == self.w_index:
                    snap_w = area
                if x == self.last:
                    snap_e = area
                k = q[j]
                if k:
                    D = free[j] + float(self.demand[x])
                else:
                    D = t + float(self.demand[x])
                    cur[j] = t
                    if many:
                        self.head[j] = (t, (first, pos, 1))
                k += 1
                q[j] = k
                upd[j] = t
                if k > qmax[j]:
                    qmax[j] = k
                free[j] = D
                if D in who:
                    raise _Ambiguous
                who[D] = j
                heappush(h, D)
                self.done.append(D)  # done[x]: arrivals run in job order
                took = True
                if many:
                    self.arrival[x + 1] = (first, pos, 0)
            else:  # the departure handler of node x's task in service
                D = heads[x]
                h.remove(D)
                removed = True
                del who[D]
                area += N * (D - tlast)
                tlast = D
                N -= 1
                k = q[x] - 1
                q[x] = k
                upd[x] = D
                busy += D - cur[x]
                if k:
                    cur[x] = D
                    if many:
                        self.head[x] = (D, (first, pos, 0))
        if removed:
            heapify(h)  # h.remove broke the heap order
        st[:] = area, tlast, N, busy, snap_w, snap_e
        return took
