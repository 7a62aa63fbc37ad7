"""The messages of a real task-tree run (``dlbkit.tree``): between a worker (:mod:`.tree_worker`) and
the coordinator (:mod:`.tree_coordinator`), which relays everything (workers never talk directly).

Every worker → coordinator message but :class:`Final` and :class:`Fail` carries the worker's
:class:`WorkerState` and its best bound. A coordinator → worker message (:class:`Mail`,
:class:`Post`) carries the best bound, the loads the worker may read (None when its balancer reads
none) and the *items* addressed to it since its last one: :class:`Request`, :class:`Order`,
:class:`Loot`, :class:`Pushed`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["WorkerState", "Report", "Steal", "Idle", "Give", "Final", "Fail", "Mail", "Post", "Request", "Order",
           "Loot", "Pushed", "Redo", "Snap", "Snapped", "Resume", "PUSH", "ANSWER", "ORDER", "STATED", "ARRIVALS"]

#: how a :class:`Give`'s tasks came to move: placed by on_spawn, a steal's answer, a periodic transfer's
PUSH, ANSWER, ORDER = 0, 1, 2


class WorkerState(NamedTuple):
    """A worker's counts when it sent a message. *created* counts the children created there,
    *completed* the tasks expanded there, both cumulative (every task a message carries is already
    counted in its sender's *created* or was received, so the coordinator's totals are a safe
    termination test); *waiting* its deque's length; *idle* whether it is blocked reading; *time*
    the run time; *seen* the :class:`Mail` and :class:`Post` messages it has read (so the coordinator
    knows which of the tasks it sent are in *waiting* and which are still in flight)."""

    created: int
    completed: int
    waiting: int
    idle: bool
    time: float
    seen: int


# --- worker → coordinator --------------------------------------------------------------------------
class Report(NamedTuple):
    """A busy worker's check point; answered by :class:`Mail`."""

    state: WorkerState
    bound: Any


class Steal(NamedTuple):
    """Ask these victims for work: ``[(victim, wanted), ...]``, each answered by a :class:`Loot`."""

    state: WorkerState
    bound: Any
    asks: list[tuple[int, int]]


class Idle(NamedTuple):
    """The worker ran dry and asks nobody: it waits for a message."""

    state: WorkerState
    bound: Any


class Give(NamedTuple):
    """*tasks* for worker *dst*; *how*: :data:`PUSH` (a placement), :data:`ANSWER` (a steal's reply)
    or :data:`ORDER` (a periodic transfer), the last two sent even when empty."""

    state: WorkerState
    bound: Any
    dst: int
    tasks: list
    how: int


class Snapped(NamedTuple):
    """A journaled run's snapshot of this worker (in reply to :class:`Snap`): the value it folded since its
    last one (if *has_value*; it starts folding afresh), the tasks it holds, its Redo's tasks and what
    they skip (pickled); it then waits for :class:`Resume`."""

    state: WorkerState
    bound: Any
    has_value: bool
    value: Any
    tasks: list
    redo: list
    skip: list


class Final(NamedTuple):
    """After Stop: the worker's folded *value* (if *has_value*), bound, busy stretches ``(first,
    count, t_ask, t_start, t_end)``, tasks expanded, seconds of work, its longest task and, per task it
    expanded, in order, its id, measured seconds and number of children (three arrays)."""

    has_value: bool
    value: Any
    bound: Any
    rows: list[tuple]
    expanded: int
    work: float
    max_task: float
    tasks: tuple


class Fail(NamedTuple):
    """dlbkit's own code (a balancer hook) raised on the worker; *message*: what dlbkit refused, if it did."""

    traceback: str
    message: str


# --- coordinator → worker --------------------------------------------------------------------------
class Mail(NamedTuple):
    """The reply to a :class:`Report`."""

    bound: Any
    loads: tuple[list, list, list] | None  # (queue, done, updated_at) of every worker
    items: list


class Post(NamedTuple):
    """Items (or fresh loads) for a worker that is reading anyway."""

    bound: Any
    loads: tuple[list, list, list] | None
    items: list


# --- the items of a Mail or Post -------------------------------------------------------------------
class Request(NamedTuple):
    """*thief* asks this worker for *wanted* tasks (0: the balancer's choice); answered by a :class:`Give`."""

    thief: int
    wanted: int


class Order(NamedTuple):
    """A periodic transfer: give *n* tasks to *dst* (answered by a :class:`Give`, even if empty)."""

    dst: int
    n: int


class Loot(NamedTuple):
    """A steal's answer: *victim*'s tasks (maybe none)."""

    victim: int
    tasks: list


class Pushed(NamedTuple):
    """Tasks *src* placed or transferred here."""

    src: int
    tasks: list


class Redo(NamedTuple):
    """A dead worker's share, to expand again here (:mod:`.coordinator`, "A worker that dies"): *tasks*, the
    tasks that had come to it (the root, what it received) and it did not give away, each ``(id, task)``,
    and *skip*, the tasks (pickled) it had created and given away, expanded elsewhere: a child equal to
    one of them is not made again (once per copy; the coordinator counted its creation when the worker
    died). Expanded before this worker's own tasks and never given away (another worker would not know
    what to skip)."""

    tasks: list
    skip: list


class Snap(NamedTuple):
    """Send a :class:`Snapped` once every other item of this message is handled, then wait for
    :class:`Resume` (the coordinator holds what it would send meanwhile)."""


class Resume(NamedTuple):
    """Every worker's snapshot is in: go on (sent on its own, not as an item)."""


#: the worker messages that carry a :class:`WorkerState`
STATED = (Report, Steal, Idle, Give, Snapped)
#: the items that bring tasks (a worker takes them before answering anything)
ARRIVALS = (Loot, Pushed)
