"""The worker side of ``dlbkit.tree``: expand tasks from a local deque, give the oldest away on request.

A worker keeps its waiting tasks in a deque: it runs the newest (depth-first, LIFO) and migrates the
oldest (breadth-first, FIFO: nearest the root, likely the largest subtrees), as Haron's kernel does
(001 §1.3). It talks only to the coordinator and only through ``conn.send`` / ``conn.recv`` (a pipe
locally, a :class:`~dlbkit.runtime.backends.mpi_transport.RankConn` on MPI), so one loop serves both
backends. Since it cannot poll, it reads its messages at defined points:

* while busy, every :data:`CHECK_S` seconds between two tasks (a *check point*): it sends
  a Report and, at the next check point, reads everything up to the coordinator's Mail reply
  (one report is always out, so the reply has usually arrived and reading never waits long);
* while idle, it blocks in ``recv`` (the coordinator then posts to it at once).

Decisions are the balancer's (a clone in every worker, with its own random stream): ``on_idle``
when the worker runs dry (or falls to ``low_water``), ``on_request`` when asked for work (with the
exact length of its own deque), ``on_spawn`` after an expansion when the rule is sender-initiated.

Protocol (:mod:`.messages`): a worker sends :class:`Report` (answered by :class:`Mail`),
:class:`Steal` (each victim answers with a :class:`Loot` item), :class:`Idle`, :class:`Give` (tasks
for another worker), each with its :class:`WorkerState` and best bound; :class:`Final` after Stop;
an ``Error`` (index = the task's repr) when the user's code raised, or when a task, the bound or the
folded value cannot be pickled (instead of the message that carried it); :class:`Fail` when dlbkit's
own code (a balancer hook) raised. The coordinator sends :class:`Mail` in reply to a Report,
:class:`Post` to a worker that is reading anyway, both with items (:class:`Request`,
:class:`Order`, :class:`Loot`, :class:`Pushed`), and ``Stop()``.
"""

from __future__ import annotations

import operator
import pickle
import time
from array import array
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.families.tree.balancers.decide import given, placements, victims
from dlbkit.errors import DlbkitError
from dlbkit.families.tree.model.seeding import TREE
from dlbkit.model.seeding import streams
from dlbkit.families.tree.model.view import TreeView
from dlbkit.runtime.backends.base import UserCode, error_message, send_or_report, short_repr
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Stop
from dlbkit.runtime import status
from dlbkit.families.tree.runtime.messages import (ANSWER, ARRIVALS, ORDER, PUSH, Fail, Final, Give, Idle, Loot, Mail, Order, Pushed,
                            Redo, Report, Request, Resume, Snap, Snapped, Steal, WorkerState)

__all__ = ["TreeSpec", "serve_tree", "task_key", "CHECK_S", "PUSH", "ANSWER", "ORDER"]

#: seconds between a busy worker's check points: the delay a busy victim adds to a steal (M2's
#: latency is 1 ms) against one report round trip per check (~20 µs: about 1% of the worker's time)
CHECK_S = 0.002
#: marks a worker that folded no value yet (*initial* is folded exactly once, by the coordinator)
_NOTHING = object()


@dataclass
class TreeSpec:
    """What every worker needs (identical on every process: inherited with fork, or rebuilt per rank)."""

    expand: Callable
    root: Any
    n_workers: int
    balancer: MigrationBalancer
    combine: Callable = operator.add
    branch_and_bound: bool = False
    bound: Any = None
    better: Callable = operator.gt
    emulation: Emulation | None = None
    origin: float = 0.0
    seed: int = 0
    speeds: list[float] = field(default_factory=list)
    #: the raw ``topology`` argument, resolved per backend once the worker count is known
    topology: Any = None
    #: worker w's neighbours (empty: the complete graph) and the topology's edge colour classes
    neighbours: list[list[int]] = field(default_factory=list)
    colours: list[list[tuple[int, int]]] = field(default_factory=list)
    #: keep the coordinator's decisions (periodic rules) with a copy of their view in trace.decisions
    record_decisions: bool = False
    #: an information model (dlbkit.info) other than exact, or None: the coordinator's own reports
    info: Any = None
    #: a run resumed from its journal: worker 0 starts with these (id, task) instead of the root, and
    #: with the journaled Redo's tasks and what they skip (pickled)
    start: list | None = None
    start_redo: list = field(default_factory=list)
    start_skip: list = field(default_factory=list)

    def seeds(self) -> list[np.random.SeedSequence]:
        """The balancers' random streams, from the simulated tree engine's (the ``balancer`` stream of
        :data:`~dlbkit.families.tree.model.seeding.TREE`): [0] the coordinator's, that stream itself (a central rule
        draws as in the simulator), [1 + w] worker w's, its child w (each process draws its own)."""
        balancer = streams(self.seed, TREE).seq("balancer")
        return [balancer, *balancer.spawn(self.n_workers)]


def task_key(task) -> bytes:
    """A task as a dead worker's share compares it (:class:`~.messages.Redo`): pickled, one protocol on
    every process, so that equal tasks made by the same code give equal bytes."""
    return pickle.dumps(task, protocol=4)


class _Stop(Exception):
    """The coordinator said Stop."""


class _Failed(Exception):
    """The user's code raised; the ERROR is sent, the worker ends."""


class _Worker:
    def __init__(self, conn, w: int, spec: TreeSpec, user: UserCode):
        self.conn = conn
        self.user = user  # marks the calls of expand and combine
        self.w = w
        self.spec = spec
        self.clock = time.perf_counter
        self.origin = spec.origin
        P = spec.n_workers
        self.view = TreeView(P, speeds=list(spec.speeds) or [1.0] * P, node=w,
                             neighbours=[list(nb) for nb in spec.neighbours], colours=list(spec.colours))
        self.balancer = spec.balancer.clone()
        self.balancer.start(self.view, np.random.default_rng(spec.seeds()[1 + w]))
        # waiting tasks as (id, task): the id travels with the task, so that the recording keeps the tree's
        # shape (task_tree: which task created which) however the tasks moved
        self.dq: deque = deque()
        # a dead worker's share to expand again (Redo): first, depth-first, never given away; a child
        # equal to one in *skip* (pickled) was given away by it and expanded elsewhere: not made again
        self.redo: list = []
        self.skip: Counter = Counter()
        if w == 0:
            if spec.start is None:
                self.dq.append((0, spec.root))
            else:  # resumed from a journal's snapshot
                self.dq.extend(spec.start)
                self.redo.extend(spec.start_redo)
                self.skip.update(spec.start_skip)
        self.bound = spec.bound
        self.acc: Any = _NOTHING
        self.created = 0
        self.completed = 0
        self.idle = False
        self.mail_out = False  # a Report is out and its Mail not read yet
        self.asks_out = 0  # steal requests whose loot has not arrived
        self.announced = False  # this idle period's Idle or Steal is sent
        self.seen = 0  # Mail and Post messages read
        self.rows: list[tuple] = []
        # per task expanded, in order: its id, its measured seconds (before emulation's stretch), its children
        self.tasks = (array("q"), array("d"), array("q"))
        self.work = 0.0
        self.max_task = 0.0

    # --- messages ---------------------------------------------------------------------------
    def state(self) -> WorkerState:
        return WorkerState(self.created, self.completed, len(self.dq), self.idle, self.clock() - self.origin,
                           self.seen)

    def send(self, kind: type, *rest) -> None:
        """Send a message of *kind* (:class:`Report`, :class:`Steal`, :class:`Idle`, :class:`Give`)
        with this worker's state, its bound and *rest*; one that cannot be pickled (a task, the
        bound) is reported as the user's failure, naming the task, and ends this worker."""
        def parts():
            yield "the bound", "the bound", self.bound
            for _, t in (rest[1] if kind is Give else ()):
                yield short_repr(t), "a task created by expand", t

        if not send_or_report(self.conn.send, kind(self.state(), self.bound, *rest), parts):
            raise _Failed

    def read(self) -> None:
        """Receive and handle one message (raise _Stop on Stop)."""
        msg = self.conn.recv()
        if type(msg) is Stop:
            raise _Stop
        bound, loads, items = msg  # a Mail or a Post
        self.seen += 1
        if type(msg) is Mail:
            self.mail_out = False
        if self.spec.branch_and_bound and bound is not None and self.spec.better(bound, self.bound):
            self.bound = bound
        if loads is not None:
            self._merge(loads)
        # arrivals first: a Give sent while answering claims this whole message as seen, so the
        # queue length it reports must already include the tasks the message brought
        snap = False
        for item in sorted(items, key=lambda it: type(it) not in ARRIVALS):
            kind = type(item)
            if kind is Request:
                self.answer(item.thief, item.wanted)
            elif kind is Loot:
                self.asks_out -= 1
                self.dq.extend(item.tasks)
            elif kind is Pushed:
                self.dq.extend(item.tasks)
            elif kind is Order:
                self.transfer(item.dst, item.n)
            elif kind is Redo:
                self.redo.extend(item.tasks)
                self.skip.update(item.skip)
            elif kind is Snap:
                snap = True
        if snap:  # after everything else the message brought: the snapshot holds it
            self.snapshot()

    def snapshot(self) -> None:
        """Send this worker's snapshot (:class:`Snapped`: the value folded since the last one, then folded
        afresh) and wait for :class:`Resume`."""
        has = self.acc is not _NOTHING
        self.send(Snapped, has, self.acc if has else None, list(self.dq), list(self.redo), list(self.skip.elements()))
        self.acc = _NOTHING
        while True:
            msg = self.conn.recv()
            if type(msg) is Stop:
                raise _Stop
            if type(msg) is Resume:
                return
            raise DlbkitError(f"worker {self.w}: {type(msg).__name__} while waiting to resume after a snapshot")

    def _merge(self, loads) -> None:
        queue, done, updated = loads
        v = self.view
        for i in range(v.n_nodes):
            if i != self.w:
                v.queue[i] = queue[i]
                v.done[i] = done[i]
                v.updated_at[i] = updated[i]

    def _own_view(self) -> TreeView:
        v = self.view
        v.time = self.clock() - self.origin
        v.queue[self.w] = len(self.dq)
        v.done[self.w] = self.completed
        v.updated_at[self.w] = v.time
        return v

    def answer(self, thief: int, wanted: int) -> None:
        q = len(self.dq)
        n = given(self.balancer, self._own_view(), self.w, thief, q, wanted)
        tasks = [self.dq.popleft() for _ in range(n)]
        self.send(Give, thief, tasks, ANSWER)

    def transfer(self, dst: int, n: int) -> None:
        """A periodic transfer: the *n* oldest tasks (at most all) to *dst*; answered even if none."""
        n = max(0, min(int(n), len(self.dq)))
        self.send(Give, dst, [self.dq.popleft() for _ in range(n)], ORDER)

    def ask(self) -> bool:
        """Ask for work as the balancer says; False if it names nobody."""
        reqs = victims(self.balancer, self._own_view(), self.w)
        if not reqs:
            return False
        self.send(Steal, reqs)
        self.asks_out += len(reqs)
        return True

    # --- the loop -----------------------------------------------------------------------------
    def run(self) -> None:
        b = self.balancer
        low = int(b.low_water) if b.receiver_initiated else -1
        t_ask = self.clock() - self.origin
        while True:
            if self.dq or self.redo:
                self.idle = False
                self.announced = False
                t_start = self.clock() - self.origin
                first = self.completed
                self.send(Report)
                self.mail_out = True
                self.stretch(low)
                self.rows.append((first, self.completed - first, t_ask, t_start, self.clock() - self.origin))
                t_ask = self.clock() - self.origin
                continue
            self.idle = True
            while self.mail_out:  # read what was sent before going idle (steal requests among it)
                self.read()
            if self.dq or self.redo:
                continue
            if not self.announced:  # one idle-flagged message per idle period: the coordinator
                # then knows this worker is reading (and its final counts)
                if not (self.asks_out == 0 and b.receiver_initiated and self.ask()):
                    self.send(Idle)
                self.announced = True
            self.read()  # blocks: idle until a message comes
            if self.asks_out == 0 and not self.dq and not self.redo and b.receiver_initiated:
                self.announced = False  # every answer came back empty: ask again

    def stretch(self, low: int) -> None:
        """Expand tasks, newest first, until the deque is empty (a dead worker's share first)."""
        spec = self.spec
        clock = self.clock
        emu = spec.emulation
        b = self.balancer
        next_check = clock() + CHECK_S
        ids, costs, n_children = self.tasks
        P = spec.n_workers
        while self.dq or self.redo:
            redone = bool(self.redo)
            tid, task = (self.redo if redone else self.dq).pop()
            if status.ON:  # a launched MPI job: the launcher names this task if the rank dies
                status.doing("running task %d of worker %d (%s)", self.completed + 1, self.w, short_repr(task, 80))
            t0 = clock()
            children, value, new_bound = self.expand(task)
            busy = clock() - t0
            if emu is not None:
                emu.stretch(self.w, self.origin, t0, t0 + busy)
            self.work += busy
            if busy > self.max_task:
                self.max_task = busy
            if redone and self.skip:  # given away by the dead worker, expanded elsewhere: not made again
                children = [c for c in children if not self.skipped(c)]
            ids.append(tid)
            costs.append(busy)
            n_children.append(len(children))
            # the k-th task a worker creates has id 1 + w + P·k: unique across workers, the root's is 0
            children = [(1 + self.w + P * k, c) for k, c in enumerate(children, self.created)]
            self.completed += 1
            self.created += len(children)
            if value is not None:
                try:
                    with self.user:
                        self.acc = value if self.acc is _NOTHING else spec.combine(self.acc, value)
                except BaseException as e:  # noqa: BLE001 - the user's combine failed on this task
                    self.fail_task(task, e)
            if new_bound is not None:  # already known to improve on self.bound
                self.bound = new_bound
            if redone:
                self.redo.extend(children)
            elif children:
                if b.sender_initiated:
                    self.place(children)
                else:
                    self.dq.extend(children)
            if clock() >= next_check:
                while self.mail_out:
                    self.read()
                if low >= 0 and self.asks_out == 0 and len(self.dq) <= low and self.dq:
                    self.ask()
                self.send(Report)
                self.mail_out = True
                next_check = clock() + CHECK_S

    def skipped(self, child) -> bool:
        """Whether *child*, created again in a dead worker's share, is one that worker gave away (then
        expanded elsewhere): one copy of it used up."""
        if not self.skip:
            return False
        key = task_key(child)
        if self.skip[key] <= 0:
            return False
        self.skip[key] -= 1
        if not self.skip[key]:
            del self.skip[key]
        return True

    def expand(self, task) -> tuple[list, Any, Any]:
        """The user's expansion of *task*: (children, value, an improved bound or None)."""
        spec = self.spec
        try:
            with self.user:
                out = spec.expand(task, self.bound) if spec.branch_and_bound else spec.expand(task)
            if not isinstance(out, (tuple, list)) or len(out) not in ((2, 3) if spec.branch_and_bound else (2,)):
                shape = "(children, value) or (children, value, bound)" if spec.branch_and_bound \
                    else "(children, value)"
                raise TypeError(f"expand must return {shape}; got {short_repr(out)}")
            if out[0] is None:
                children = []
            else:
                with self.user:  # children given as a generator run the user's code here
                    children = list(out[0])
            new = out[2] if len(out) == 3 else None
            return children, out[1], (new if new is not None and spec.better(new, self.bound) else None)
        except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the caller
            self.fail_task(task, e)

    def fail_task(self, task, e: BaseException):
        self.conn.send(error_message(short_repr(task), e))
        raise _Failed

    def place(self, children: list) -> None:
        dests = placements(self.balancer, self._own_view(), self.w, len(children))
        away: dict[int, list] = {}
        for child, d in zip(children, dests):
            if d == self.w:
                self.dq.append(child)
            else:
                away.setdefault(d, []).append(child)
        for d, tasks in away.items():
            self.send(Give, d, tasks, PUSH)

    def final(self) -> None:
        has = self.acc is not _NOTHING
        acc = self.acc if has else None
        send_or_report(self.conn.send, Final(has, acc, self.bound, self.rows, self.completed, self.work,
                                             self.max_task, self.tasks),
                       lambda: [(("value", self.w), f"the value folded from worker {self.w}'s tasks", acc),
                                (("bound", self.w), "the bound", self.bound)])


def serve_tree(conn, w: int, spec: TreeSpec, interruptible: UserCode | None = None) -> None:
    """Process entry point of a tree worker: expand, steal and give until Stop (*interruptible*:
    :attr:`~..backends.base.Program.interruptible`)."""
    worker = None
    try:
        worker = _Worker(conn, w, spec, interruptible or UserCode())
        worker.run()
    except _Stop:
        worker.final()
    except _Failed:
        return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run
    except BaseException as e:  # noqa: BLE001 - a bug in dlbkit or a balancer hook: never silent
        # a balancer's answer that dlbkit refused (balancers.decide) says what was wrong in one line
        said = str(e) if isinstance(e, DlbkitError) else ""
        try:
            conn.send(Fail(traceback.format_exc(), said))
        except Exception:  # noqa: BLE001
            pass
