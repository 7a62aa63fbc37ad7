"""The simulation kernel: one event queue with a documented, deterministic order for simultaneous events.

An event is a handler to call at a time: ``schedule(time, handler, *args, priority=, rank=)`` queues
it, :meth:`Kernel.step` runs the next one, :meth:`Kernel.run` runs them until the queue is empty,
:meth:`Kernel.stop` is called or *until* is reached. Handlers are the engine's rules; they schedule
further events. The kernel owns the queue and its order, nothing else.

**Order.** Events run in order of the key (time, priority, rank, sequence):

* *time*: exact integer ticks, or float seconds in which times closer than the kernel's *tolerance*
  (:data:`~dlbkit.sim.timebase.SIMULTANEITY_TOLERANCE` for the engines) are the same instant, because
  round-off splits exact ties in arbitrary directions (docs/reference-models.md, "Time base and ties");
* *priority*: one of the named constants below (:data:`URGENT`, :data:`NORMAL`): what kind of event it is;
* *rank*: an index by which the family's model orders simultaneous events of one kind (the divisible
  engine: the worker index, docs/reference-models.md M1's tie rule); 0 when the model has none;
* *sequence*: the order in which events were scheduled (first in, first out; docs/reference-models.md M2's canonical
  order), assigned by the kernel, so the order never depends on an RNG or on memory addresses.

An *instant* is fixed when it opens: the kernel takes every queued event within *tolerance* of the
earliest one (with ticks: the events at exactly that time) and runs them in (priority, rank, sequence)
order, each at its own time (so ``now`` may step back by less than the tolerance inside an instant).
Events that handlers schedule meanwhile for the same instant run after them, in a new round of that
instant (as VHDL's and SystemC's delta cycles do). Both engines' tie rules are this rule: the divisible
engine's requests that reach the master at one instant are all queued before it opens, and the tree
engine schedules every event at one priority, where rounds and FIFO agree.

**Failures are never silent.** An exception raised by a handler propagates unchanged, with a note
naming the event (handler, time, priority, rank, sequence); scheduling before ``now`` and
``run(until=)`` with *until* before ``now`` raise :exc:`~dlbkit.errors.ConfigError` quoting the value.

**Event log.** ``Kernel(log=True)`` appends ``(time, priority, rank, sequence, handler name, args)``
for every event it runs, so that two paths of one engine can be compared event for event: a
specialised loop that writes the same log is proven to give the kernel path's trace by a test.

**Who uses the queue.** The divisible engine's self-scheduling mechanism, the asynchronous tree
engine, the stream engine (``events``) and the task graph's ``dynamic`` engine run their rules as
handlers on a :class:`Kernel`. The first two also have a specialised loop for their reference model
(M1: ``divisible._fast_self_scheduling``; M2: :mod:`dlbkit.families.tree.sim._fast`), and the stream engine one
for the supermarket case (:mod:`dlbkit.families.stream.sim._fast`), that keep the kernel's order with a
cheaper queue (the first two with :func:`pop_instant` and :func:`simultaneous`); tests compare the
two paths. The round-based
engines need no queue: the superstep (BSP) engine and the SPMD engine advance every node one
iteration or loop at a time and vectorise over nodes, and the divisible engine's ``rounds`` mechanism
is a loop over bulk-synchronous rounds; nothing happens between their barriers that could tie. The
task graph's ``static`` engine times one plan with one evaluator and needs none either. docs/design.md,
"The simulation kernel", is the longer account.

**Extending.** Another component (e.g. an information model that sends load reports) schedules its
own events with its own handler and a named priority on the engine's kernel; its handlers may change
what the engine's rules read (a view) and schedule further events. Nothing in the kernel is specific
to an engine.
"""

from __future__ import annotations

from heapq import heappop, heappush
from itertools import count
from operator import itemgetter
from typing import Any, Callable, NewType

from dlbkit.errors import ConfigError

__all__ = ["Kernel", "Priority", "URGENT", "NORMAL", "pop_instant", "simultaneous"]

Priority = NewType("Priority", int)

URGENT = Priority(0)
"""Runs before the model's events of the same instant. For components whose event a decision at that
instant must already see, such as the information layer's load reports (DESIGN.md ``info/``). No
engine schedules at this priority yet; the kernel tests check that it runs first."""

NORMAL = Priority(1)
"""The model's own events. The asynchronous tree engine schedules every event here (FIFO ties, docs/reference-models.md
M2's canonical order); the divisible engine schedules the requests that reach the master here, ranked
by worker index (docs/reference-models.md M1's tie rule)."""

#: (priority, rank, sequence): the order of a kernel instant's events (time aside)
_INSTANT_ORDER = itemgetter(1, 2, 3)
_INF = float("inf")


class _Stop(Exception):
    """Raised by :meth:`Kernel.stop` inside a handler: ends :meth:`Kernel.run` after that event."""


def pop_instant(heap: list, tolerance, order: Callable = _INSTANT_ORDER, first: tuple | None = None) -> list:
    """Pop the events of *heap*'s next instant: its first event and every other one within
    *tolerance* of it, ordered by *order* (a key without the time) so that ``list.pop()`` gives the
    one to run next. *first*: the instant's first event, already popped. Shared by the kernel and
    the specialised loops, so all keep one tie rule."""
    if first is None:
        first = heappop(heap)
    lim = first[0] + tolerance
    out = [first]
    while heap and heap[0][0] <= lim:
        out.append(heappop(heap))
    out.sort(key=order, reverse=True)
    return out


def simultaneous(heap: list, tolerance) -> bool:
    """Whether another event lies within *tolerance* of *heap*'s first (the second smallest entry of
    a heap is one of the root's two children)."""
    n = len(heap)
    if n < 2:
        return False
    lim = heap[0][0] + tolerance
    return heap[1][0] <= lim or (n > 2 and heap[2][0] <= lim)


class Kernel:
    """One event queue and a clock (see the module for the order).

    *tolerance*: times closer than this are one instant (0 for exact integer ticks). *log*: keep
    :attr:`log`, one entry per event run. *start*: the initial ``now``.
    """

    __slots__ = ("now", "tolerance", "log", "processed", "_heap", "_batch", "_seq")

    def __init__(self, *, tolerance: float = 0.0, log: bool = False, start: Any = 0):
        if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
            raise ConfigError("tolerance", tolerance, "a number >= 0 (0 for exact integer ticks)")
        #: the time of the event running or last run
        self.now = start
        self.tolerance = tolerance
        #: (time, priority, rank, sequence, handler name, args) of every event run, if asked for
        self.log: list | None = [] if log else None
        #: events run so far
        self.processed = 0
        self._heap: list = []
        self._batch: list = []  # the open instant's events not run yet; the last runs next
        self._seq = count()

    def schedule(self, time, handler: Callable, *args, priority: Priority = NORMAL, rank: int = 0) -> None:
        """Call ``handler(time, *args)`` at *time* (see the module for the order of simultaneous events).

        Raise :exc:`~dlbkit.errors.ConfigError` if *time* is before ``now`` (by more than the tolerance).
        """
        if time < self.now - self.tolerance:
            raise ConfigError("time", time, f"an event time not before the kernel's now ({self.now!r})")
        heappush(self._heap, (time, priority, rank, next(self._seq), handler, args))

    def peek(self):
        """The time of the next event (inf if none is queued)."""
        if self._batch:
            return self._batch[-1][0]
        return self._heap[0][0] if self._heap else _INF

    def __len__(self) -> int:
        """Events queued."""
        return len(self._heap) + len(self._batch)

    def stop(self) -> None:
        """End :meth:`run` (or :meth:`step`) after the running event; call it from a handler."""
        raise _Stop

    def _next(self) -> tuple:
        """Take the next event (opening an instant when the earliest has simultaneous company)."""
        batch = self._batch
        if batch:
            return batch.pop()
        heap = self._heap
        ev = heappop(heap)
        if heap and heap[0][0] <= ev[0] + self.tolerance:
            batch[:] = pop_instant(heap, self.tolerance, first=ev)
            ev = batch.pop()
        return ev

    def _put_back(self, ev: tuple) -> None:
        """Undo :meth:`_next` for an event that must not run yet (it stays the next one)."""
        if self._batch or (self._heap and self._heap[0][0] <= ev[0] + self.tolerance):
            self._batch.append(ev)
        else:
            heappush(self._heap, ev)

    def step(self) -> bool:
        """Run the next event; False if none was queued."""
        if not self._heap and not self._batch:
            return False
        ev = self._next()
        self.now = ev[0]
        self.processed += 1
        if self.log is not None:
            self.log.append(ev[:4] + (ev[4].__name__, ev[5]))
        try:
            ev[4](ev[0], *ev[5])
        except _Stop:
            pass
        except Exception as e:
            e.add_note(_describe(ev))
            raise
        return True

    def run(self, until=None) -> None:
        """Run events in order until none is queued, a handler calls :meth:`stop`, or the next event
        is at or after *until* (then ``now`` becomes *until*; events at *until* stay queued).

        Raise :exc:`~dlbkit.errors.ConfigError` if *until* is before ``now``.
        """
        if until is not None and not until >= self.now:
            raise ConfigError("until", until, f"a time not before the kernel's now ({self.now!r})")
        heap, batch, tol, log = self._heap, self._batch, self.tolerance, self.log
        n = 0
        ev = None
        try:
            while heap or batch:
                # NOTE: _next() and step() inlined for speed (the tree engine's general loop runs here)
                if batch:
                    ev = batch.pop()
                else:
                    ev = heappop(heap)
                    if heap and heap[0][0] <= ev[0] + tol:
                        batch[:] = pop_instant(heap, tol, first=ev)
                        ev = batch.pop()
                t, _, _, _, handler, args = ev
                if until is not None and t >= until:
                    self._put_back(ev)
                    break
                self.now = t
                n += 1
                if log is not None:
                    log.append(ev[:4] + (handler.__name__, args))
                handler(t, *args)
            if until is not None:
                self.now = until
        except _Stop:
            pass
        except Exception as e:
            if ev is not None:
                e.add_note(_describe(ev))
            raise
        finally:
            self.processed += n


def _describe(ev: tuple) -> str:
    t, priority, rank, seq, handler, args = ev
    return (f"in kernel event {getattr(handler, '__qualname__', handler)!s}{args!r} at time {t!r} "
            f"(priority {priority}, rank {rank}, sequence {seq})")
