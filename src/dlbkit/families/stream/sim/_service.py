"""The stream engine's service disciplines (its option *service*): what a node does with a task that
reaches it and when the task departs, one strategy class per discipline, chosen once per run
(:data:`DISCIPLINES`; the rules are in :mod:`dlbkit.families.stream.sim.engine`'s docstring, "Service").

A discipline's methods are the run's rules for service: each takes the time first, as the kernel
passes it to a handler, then the run (:class:`~dlbkit.families.stream.sim._run.StreamRun`: the queues, the
statistics, the per-task state and the kernel). A discipline holds only its own per-node state and
no reference to the run, so the two make no reference cycle: a run's state goes when its caller
drops it, without the cyclic collector (``tests/families/stream/sim/test_stream_memory.py``).
"""

from __future__ import annotations

from collections import deque
from heapq import heappop, heappush

from dlbkit.sim.costs import finish_time

__all__ = ["Fifo", "ProcessorSharing", "DISCIPLINES"]


class Fifo:
    """One task per slot, first in, first out (003's supermarket model): a task that finds a free slot
    starts, else waits in its node's queue; a departure gives the slot to the oldest waiting entry. An
    entry is a task k (≥ 0) or a late-binding reservation r (stored as -r - 1), which holds the slot
    while it asks its origin for a task (:meth:`seat`, :meth:`free`)."""

    name = "fifo"
    summary = "one task per slot, first in, first out (the supermarket model)"
    __slots__ = ("busy", "waiting")

    def __init__(self, n: int):
        self.busy = [0] * n  # per node: slots serving a task or held by a reservation
        self.waiting = [deque() for _ in range(n)]  # per node: the waiting entries, oldest first

    # NOTE: the run's join() and leave() and this class's start() are inlined in enqueue() and depart(),
    # the kernel path's hot rules (calling them costs the supermarket case's kernel run about 5% more
    # instructions)
    def enqueue(self, t: float, run, k: int, j: int) -> None:
        """Task k reaches node j: it joins the system, and starts if a slot is free."""
        N = run.N
        run.area += N * (t - run.tlast)
        run.tlast = t
        run.N = N + 1
        q = run.q
        x = q[j] + 1
        q[j] = x
        run.upd[j] = t
        qmax = run.qmax
        if x > qmax[j]:
            qmax[j] = x
        run.at_node[k] = t
        busy = self.busy
        if busy[j] < run.slots[j]:
            busy[j] += 1
            run.started[k] = t
            r = run.rates[j]
            w = run.demand[k]
            run.kernel.schedule(t + w / r if r else finish_time(run.profiles[j], t, w, run.speeds[j]), self.depart,
                                run, k, j)
        else:
            self.waiting[j].append(k)

    def start(self, t: float, run, k: int, j: int) -> None:
        """Task k starts on a slot of node j: its departure is scheduled."""
        run.started[k] = t
        r = run.rates[j]
        w = run.demand[k]
        run.kernel.schedule(t + w / r if r else finish_time(run.profiles[j], t, w, run.speeds[j]), self.depart,
                            run, k, j)

    def depart(self, t: float, run, k: int, j: int) -> None:
        """Task k ends on node j: it leaves the system (its interval is recorded, its job done if it was
        the job's last task), and its slot takes the oldest waiting entry."""
        N = run.N
        run.area += N * (t - run.tlast)
        run.tlast = t
        run.N = N - 1
        run.q[j] -= 1
        run.upd[j] = t
        started = run.started
        s = started[k]
        run.busy_sum += t - s
        if run.record:
            run.tnode.append(j)
            run.tfirst.append(k)
            run.tcount.append(1)
            run.task.append(run.at_node[k])
            run.tstart.append(s)
            run.tend.append(t)
            run.tround.append(-1)
        b = run.job_of[k]
        left = run.left
        r = left[b] - 1
        left[b] = r
        jend = run.jend
        if t > jend[b]:  # a job's tasks may end at one instant in any order within the tolerance
            jend[b] = t
        if not r:
            run.done_at[b] = jend[b]
        waiting = self.waiting[j]
        if waiting:
            k = waiting.popleft()
            if k < 0:  # a late-binding reservation: it holds the slot and asks its origin for a task
                run.claim(t, -k - 1, j)
                return
            started[k] = t
            r = run.rates[j]
            w = run.demand[k]
            run.kernel.schedule(t + w / r if r else finish_time(run.profiles[j], t, w, run.speeds[j]), self.depart,
                                run, k, j)
        else:
            self.busy[j] -= 1

    def free(self, t: float, run, j: int) -> None:
        """A slot of node j is free (a reservation was cancelled): the oldest waiting entry takes it."""
        waiting = self.waiting[j]
        if waiting:
            k = waiting.popleft()
            if k < 0:
                run.claim(t, -k - 1, j)
                return
            self.start(t, run, k, j)
        else:
            self.busy[j] -= 1

    def seat(self, t: float, run, r: int, j: int) -> None:
        """Reservation r is in node j's queue: it takes a free slot (and asks for its task), else waits."""
        busy = self.busy
        if busy[j] < run.slots[j]:
            busy[j] += 1
            run.claim(t, r, j)
        else:
            self.waiting[j].append(-r - 1)


class ProcessorSharing:
    """Processor sharing (the seed's time-shared machines, §6.3.2.2): k tasks on a node of c slots each
    progress at speed × availability × min(1, c/k), every task starting the moment it reaches its node.
    Per node: the service each present task has received (all receive the same), a heap of the service
    at which each task is done, and one pending departure, moved when k changes (a departure carries
    its node's version; a superseded one is skipped when it comes due)."""

    name = "ps"
    summary = "processor sharing: k tasks on c slots each at min(1, c/k) of a slot (time-shared machines)"
    __slots__ = ("got", "got_at", "ahead", "version")

    def __init__(self, n: int):
        self.got = [0.0] * n  # service each task present on node j has received (work units)
        self.got_at = [0.0] * n  # when got[j] was brought up to date
        self.ahead = [[] for _ in range(n)]  # heap of (got[j] at which the task is done, task)
        self.version = [0] * n  # the pending departure of node j is the one scheduled with version[j]

    def enqueue(self, t: float, run, k: int, j: int) -> None:
        """Task k reaches node j: it joins the system and starts at once; the node's departure moves."""
        run.join(t, k, j)
        run.started[k] = t
        self.catch_up(t, run, j)
        heappush(self.ahead[j], (self.got[j] + run.demand[k], k))
        self.schedule_next(t, run, j)

    def depart(self, t: float, run, j: int, v: int) -> None:
        """Node j's task with the least work left ends, unless departure *v* was superseded."""
        if v != self.version[j]:
            return  # superseded: the node's set of tasks changed since it was scheduled
        self.catch_up(t, run, j)
        _, k = heappop(self.ahead[j])
        run.leave(t, k, j)
        self.schedule_next(t, run, j)

    def catch_up(self, t: float, run, j: int) -> None:
        """Bring node j's received service (and the run's busy time) up to *t*."""
        got_at = self.got_at
        k = len(self.ahead[j])
        if k and t > got_at[j]:
            c = run.slots[j]
            r = run.rates[j]
            a0 = got_at[j]
            p = run.profiles[j]
            work = r * (t - a0) if r else run.speeds[j] * (p.capacity(t) - p.capacity(a0))
            self.got[j] += work * (c / k if k > c else 1.0)
            run.busy_sum += (t - got_at[j]) * (c if k > c else k)
        got_at[j] = t

    def schedule_next(self, t: float, run, j: int) -> None:
        """Schedule node j's next departure (superseding the pending one), if it holds a task."""
        version = self.version
        version[j] += 1
        h = self.ahead[j]
        if h:
            k, c = len(h), run.slots[j]
            left = max(h[0][0] - self.got[j], 0.0) / (c / k if k > c else 1.0)
            r = run.rates[j]
            run.kernel.schedule(t + left / r if r else finish_time(run.profiles[j], t, left, run.speeds[j]),
                                self.depart, run, j, version[j])


#: service discipline name -> its strategy class
DISCIPLINES = {cls.name: cls for cls in (Fifo, ProcessorSharing)}
