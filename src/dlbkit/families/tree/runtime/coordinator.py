"""The coordinator of a real task-tree run: relays work between workers and detects termination.

Workers talk only to the coordinator (no listener, no worker-to-worker link), which:

* **relays** steal requests to victims and their answers back to thieves, pushed tasks (sender-
  initiated placement) and periodic transfers, holding what is addressed to a busy worker in its
  mailbox until that worker's next report (so a worker reads its messages at its check points and
  pipes never fill), and posting at once to a worker that is idle (it is blocked reading);
* runs the balancer's central hook, :meth:`~dlbkit.families.tree.balancers.base.MigrationBalancer.balance`, on
  its :class:`~dlbkit.families.tree.model.view.TreeView` (queue lengths and completed tasks as last reported,
  each with its age, corrected for the tasks in flight: :class:`~.tree_loads.InFlightLoads`; the neighbours and edge
  colours of the run's topology), as soon as a worker has completed ``interval`` tasks since the
  last call (re-read at every decision; 0: at every report), and ships that view to the workers when the balancer reads loads;
* sends fresh loads to a worker of a receiver-initiated, load-reading rule (RID) that asked nobody
  and sleeps in ``recv``, whenever a neighbour's load rises above what it last saw (Willebeek-
  LeMair & Reeves's periodic load updates to the neighbours; ``trace.meta["load_updates"]``);
* keeps the best **bound** reported so far and sends it with every message (branch and bound);
* paces **failed steals**: an empty answer reaches its thief after a back-off that doubles with
  each consecutive failure (:data:`STEAL_BACKOFF_S`), so idle workers wait in ``recv`` instead of
  spinning (M2's thieves retry after one round trip; a real machine's cores are better left to
  the busy workers);
* detects **termination** by counting: the run is over when the tasks completed equal the tasks
  created (the root plus every child), as reported cumulatively by the workers. Every message that
  carries tasks also carries its sender's counts, which already include those tasks' creation, so
  a task's completion is never known before its creation and the test cannot fire early; a task in
  flight is created and not completed, so none is lost.

**A worker that dies** (its pipe ends: the transport's ``Died``, after every message it sent) is
survived, with each task's value counted once. Every task that moves between workers passes here, so
the coordinator keeps, per worker, the tasks that came to it (the root, received) and those it gave away.
What the dead worker expanded — its value, never sent, is lost — is the part of the subtrees of the
tasks that came to it that it did not give away: the coordinator cancels, by task id, what came and left
again, and sends the rest, with the tasks it had created and given away (pickled), to the live worker
with the fewest waiting tasks as a :class:`~.messages.Redo`. That worker expands them again, first and
depth-first, never giving them away; a child equal to one it was told to skip is not made again,
since another worker has it (the dead worker's counts are taken back, and the creation of each task it
gave away counted again at once: the count of tasks not completed never falls to 0 while its share waits). Expansion must be deterministic (the same task, the same children); equal tasks are
interchangeable. What was addressed to the dead worker is answered (a steal request: empty), sent on
(tasks in flight to it) or dropped (an order). ``trace.meta["dead"]`` lists the dead workers and
``["recovery"]`` each death (its heir, the tasks sent and skipped); a run with a death has a task tree that
replay refuses (the dead worker's tasks were expanded twice). Every worker
dead: a :class:`~dlbkit.errors.DlbkitError`. An exception in the user's code stops every worker and is
raised as :class:`~dlbkit.errors.TaskError`.

**A journaled run** (``journal=``) takes a snapshot every :data:`JOURNAL_S` seconds: every worker gets a
:class:`~.messages.Snap`, sends its :class:`~.messages.Snapped` (the value it folded since its last one,
which the coordinator folds into the run's value at once, and the tasks it holds) and waits; the
coordinator holds whatever it would send to a worker that has snapped. Every task that moves passes here,
so once every snapshot is in, the tasks the workers hold and those held for them are the whole frontier,
and each expanded task's value is in the run's value exactly once: that is written to the journal (with
the best bound), and every worker resumes. A worker's snapshot also starts its new epoch for a death:
what came to it is then what it held, and its counts are taken back only from there. A rerun resumes
from the last whole snapshot: worker 0 starts with the frontier and the run's value is the journaled one.
The journal's last entry, once the run is done, is its value. A snapshot waits for the slowest worker to
reach a check point (its task in hand done): the next one is at least :data:`SNAP_SLACK` times as long later.
"""

from __future__ import annotations

import heapq
import math
import time
import traceback
from collections import Counter
from typing import Any

import numpy as np

from dlbkit.errors import DlbkitError, RemoteTraceback, TaskError
from dlbkit.model.availability import Constant
from dlbkit.families.tree.model.backoff import backoff_delay
from dlbkit.families.tree.model.seeding import TREE
from dlbkit.model.seeding import streams
from dlbkit.model.trace import Trace
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.balancers.decide import transfers
from dlbkit.runtime.backends.base import Transport, short_repr, task_error
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Died, Error, Stop
from dlbkit.runtime.progress import Progress
from dlbkit.families.tree.runtime.loads import InFlightLoads
from dlbkit.families.tree.runtime.messages import ANSWER, ARRIVALS, ORDER, STATED, Fail, Final, Give, Idle, Loot, Mail, \
    Order, Post, Pushed, Redo, Report, Request, Resume, Snap, Snapped, Steal
from dlbkit.families.tree.runtime.worker import CHECK_S, TreeSpec, task_key

__all__ = ["coordinate_tree", "JOURNAL_S", "SNAP_SLACK", "STEAL_BACKOFF_S", "steal_backoff"]

#: (first, longest) delay before an empty steal answer reaches its thief, in seconds; the delay
#: doubles with each consecutive empty answer and resets when a steal succeeds
STEAL_BACKOFF_S = (1e-4, 5e-3)
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives
#: seconds between two snapshots of a journaled run (each pauses every worker for about a round trip)
JOURNAL_S = 2.0
#: a snapshot waits for the slowest worker's next check point (the end of its task in hand) while the others
#: wait: the next one comes at least this many times the last one's length later (the pauses then cost at
#: most about 1/SNAP_SLACK of the run, however long a task is)
SNAP_SLACK = 10.0


def steal_backoff(failures: int, lo: float | None = None, hi: float | None = None) -> float:
    """The delay of the *failures*-th consecutive empty steal answer: ``lo · 2^(failures − 1)``, at
    most *hi* (default :data:`STEAL_BACKOFF_S`); the rule the simulated tree engine follows too
    (:func:`dlbkit.families.tree.model.backoff.backoff_delay`: exact, and finite however long a worker goes
    without work, e.g. a chain of tasks)."""
    lo = STEAL_BACKOFF_S[0] if lo is None else lo
    hi = STEAL_BACKOFF_S[1] if hi is None else hi
    return backoff_delay(max(failures, 1), lo, hi)


def coordinate_tree(transport: Transport, spec: TreeSpec, *, initial: Any = 0,
                    emulation: Emulation | None = None, progress: Progress | None = None,
                    backend: str = "local", journal=None) -> tuple[Any, Any, Trace]:
    """Run the tree of *spec* on *transport*'s workers; return (combined value, best bound, trace).
    *journal*: a :class:`~dlbkit.runtime.journal.Journal` of kind ``"snapshots"`` they go to.

    The backend stops every worker if anything here fails and closes the progress bar (base.drive).
    """
    return _Coordinator(transport, spec, emulation, progress, backend, journal).run(initial)


class _Coordinator:
    """One run's state and rules (the module docstring): relay, decide, count, then fold the values."""

    def __init__(self, transport: Transport, spec: TreeSpec, emulation: Emulation | None,
                 progress: Progress | None, backend: str, journal=None):
        P = transport.n_workers
        self.transport, self.spec, self.emulation = transport, spec, emulation
        self.progress, self.backend = progress, backend
        self.P = P
        self.origin = spec.origin
        self.clock = time.perf_counter
        self.balancer = balancer = spec.balancer.clone()
        self.speeds = list(spec.speeds) or [1.0] * P
        self.neighbours = [list(nb) for nb in spec.neighbours] or [[j for j in range(P) if j != i] for i in range(P)]
        self.view = TreeView(P, speeds=self.speeds, neighbours=self.neighbours, colours=list(spec.colours))
        balancer.start(self.view, np.random.default_rng(spec.seeds()[0]))
        self.record: list | None = [] if spec.record_decisions else None  # the periodic decisions and their views
        self.best = spec.bound
        self.created = [0] * P
        self.completed = [0] * P
        self.n_created = 1  # the root, plus every child the workers report
        self.n_completed = 0
        self.reading = [w != 0 for w in range(P)]  # every worker but 0 starts idle, blocked in recv
        self.mailbox: list[list] = [[] for _ in range(P)]
        self.failures = [0] * P
        self.timers: list[tuple[float, int, int, tuple]] = []  # (due, seq, worker, item): delayed answers
        self.seq = 0
        self.counts = {"messages": 0, "steal_requests": 0, "steals": 0, "tasks_moved": 0, "transfers": 0,
                       "load_updates": 0}
        self.at_last = [0] * P  # tasks each worker had completed at the last periodic point
        self.books = InFlightLoads(self.view)
        self.reads_loads = balancer.reads_loads
        self.periodic_ = balancer.periodic
        # receiver-initiated rules that read loads (RID) decide whether to ask from their neighbours'
        # loads: a worker that asked nobody sleeps in recv, so it is sent fresh loads (an empty Post)
        # when a neighbour's load rises above what it last saw (W&R's periodic neighbour updates)
        self.wake = balancer.receiver_initiated and self.reads_loads
        self.asleep = [False] * P
        self.shown: list[list[int]] = [[0] * P for _ in range(P)]  # the loads each worker last received
        # what a dead worker's share is made of (the module docstring): per worker, the (id, task) that came
        # to it and that it gave away, and the tasks (pickled) a Redo it got told it to skip
        self.came: list[list] = [[(0, spec.root)] if w == 0 else [] for w in range(P)]
        self.left: list[list] = [[] for _ in range(P)]
        self.owed: list[list] = [[] for _ in range(P)]
        self.asked: list[Counter] = [Counter() for _ in range(P)]  # per victim, its thieves not yet answered
        self.base = [(0, 0)] * P  # each worker's (created, completed) when its epoch began (its last snapshot)
        if spec.start is not None:  # resumed from a journal: worker 0 holds the frontier
            self.n_created = len(spec.start) + len(spec.start_redo)
            self.came[0] = list(spec.start) + list(spec.start_redo)
            self.owed[0] = list(spec.start_skip)
            self.books.reported[0] = len(spec.start)
            self.books.refresh(0)
        # a journaled run's snapshots (the module docstring)
        self.journal = journal
        self.next_snap = JOURNAL_S if journal is not None else math.inf
        self.snapping: set[int] = set()  # workers whose snapshot is not in yet
        self.frozen: set[int] = set()  # workers sent a Snap and not yet resumed: nothing is posted to them
        self.held: dict[int, type] = {}  # what a frozen worker is owed: a Mail (it waits for one) or a Post
        self.snapped: dict[int, tuple] = {}  # worker → (tasks, redo, skip) of this snapshot
        self.broken = False  # a worker died during this snapshot: it is not written
        self.snaps = 0
        self.dead: set[int] = set()
        self.recovery: list[dict] = []  # per death: who died, when, its heir, the tasks redone and skipped
        self._start_info()

    def _start_info(self) -> None:
        """An information model (dlbkit.info): the coordinator is the star's relay, so it keeps every
        worker's table; a round's messages are merged into their receivers' tables as they pass it,
        and a worker reads its table in the next loads it is sent (Mail/Post). A node's own entry is
        what it last reported of itself. Without a model, deciders read the coordinator's view (reports)."""
        spec, P = self.spec, self.P
        self.info = info = spec.info if spec.info is not None and not spec.info.exact else None
        self.next_round = math.inf
        if info is not None:
            info.start(P, self.neighbours, [1 if w == 0 else 0 for w in range(P)],
                       streams(spec.seed, TREE).rng("info"))  # the simulated tree engine's info stream
            self.next_round = info.interval
            self.seen_view = TreeView(P, speeds=self.speeds, neighbours=self.neighbours, colours=list(spec.colours))

    # --- what a decider knows ---------------------------------------------------------------------
    def knowledge(self, node: int) -> TreeView:
        """What *node* (-1: the coordinator, deciding centrally) knows now, as a view."""
        info, books = self.info, self.books
        if info is None:
            return self.view
        v = self.seen_view
        v.time, v.node, v.done = self.clock() - self.origin, node, self.view.done
        c = info.centre if node < 0 else node
        info.fill(c, v.time, books.reported[c], v.queue, v.updated_at, integer=True)
        if node < 0:  # the coordinator adds what it sent or ordered that no report covers yet
            for j in range(self.P):
                if j != c:
                    v.queue[j] = max(0, v.queue[j] + books.flight_sum[j] + books.mail[j] + books.promised[j])
        return v

    def loads(self, w: int):
        """The loads sent to worker *w* with a Mail or Post (None: its balancer reads none)."""
        if not self.reads_loads:
            return None
        k = self.knowledge(w)
        return list(k.queue), list(k.done), list(k.updated_at)

    def info_round(self) -> None:
        now = self.clock() - self.origin
        info = self.info
        for m in info.round(now, list(self.books.reported)):
            info.deliver(m)
        while self.next_round <= now:
            self.next_round += info.interval
        if self.wake:  # every sleeping worker's knowledge changed: it reconsiders
            for u in range(self.P):
                if self.asleep[u]:
                    self.counts["load_updates"] += 1
                    self.asleep[u] = False
                    self.post(u, Post)

    # --- sending ----------------------------------------------------------------------------------
    def send(self, w: int, msg: tuple) -> None:
        self.transport.send(w, msg)
        self.counts["messages"] += 1

    def post(self, w: int, kind: type) -> None:
        """Send worker *w* its mailbox as a *kind* (:class:`Mail` or :class:`Post`); held while it is frozen
        for a snapshot (a Mail is then sent at its resumption: it waits for one)."""
        if w in self.frozen:
            self.held[w] = Mail if kind is Mail or self.held.get(w) is Mail else Post
            return
        items, self.mailbox[w] = self.mailbox[w], []
        if any(type(it) is Snap for it in items):
            self.frozen.add(w)
        self.books.posted(w)
        if self.wake:
            self.shown[w] = list(self.view.queue)
        self.send(w, kind(self.best, self.loads(w), items))

    def deliver(self, w: int, item: tuple) -> None:
        """Address *item* to worker *w*: posted at once if it is reading, else at its next report (to a
        dead worker: :meth:`undeliverable`)."""
        if w in self.dead:
            self.undeliverable(w, item)
            return
        kind = type(item)
        if kind in ARRIVALS:
            self.came[w].extend(item.tasks)
        elif kind is Request:
            self.asked[w][item.thief] += 1
        elif kind is Redo:
            self.came[w].extend(item.tasks)
            self.owed[w].extend(item.skip)
        self.mailbox[w].append(item)
        self.books.queued(w, item)
        if self.reading[w]:
            self.asleep[w] = False
            self.post(w, Post)

    def wake_neighbours(self, v: int) -> None:
        """Fresh loads to every sleeping neighbour of *v* that has not seen v's load this high (with an
        information model, workers hear of loads in its rounds instead)."""
        if self.info is not None:
            return
        q, asleep = self.view.queue, self.asleep
        for u in self.neighbours[v]:
            if asleep[u] and q[v] > self.shown[u][v]:
                self.counts["load_updates"] += 1
                asleep[u] = False
                self.post(u, Post)

    # --- a journaled run's snapshots --------------------------------------------------------------------
    def begin_snapshot(self) -> None:
        self.snap_began = self.clock()
        live = [w for w in range(self.P) if w not in self.dead]
        self.snapping, self.snapped, self.broken = set(live), {}, False
        for w in live:
            self.deliver(w, Snap())

    def on_snapped(self, w: int, msg: Snapped) -> None:
        """Worker *w*'s snapshot: its value folded in, its new epoch begun; the last one written and every
        worker resumed."""
        if msg.has_value:
            self.value = self.combined(self.value, msg.value, w)
        held_for = [t for it in self.mailbox[w] if type(it) in ARRIVALS or type(it) is Redo for t in it.tasks]
        self.came[w] = list(msg.tasks) + list(msg.redo) + held_for
        self.left[w] = []
        self.owed[w] = list(msg.skip) + [k for it in self.mailbox[w] if type(it) is Redo for k in it.skip]
        self.base[w] = (msg.state.created, msg.state.completed)
        self.snapped[w] = (list(msg.tasks), list(msg.redo), list(msg.skip))
        self.snapping.discard(w)
        if not self.snapping:
            self.end_snapshot()

    def end_snapshot(self) -> None:
        if not self.broken:
            tasks, redo, skip = [], [], []
            for w in sorted(self.snapped):
                t, r, k = self.snapped[w]
                tasks += t
                redo += r
                skip += k
                for it in self.mailbox[w]:  # held for it: in flight, part of the frontier
                    if type(it) in ARRIVALS:
                        tasks += it.tasks
                    elif type(it) is Redo:
                        redo += it.tasks
                        skip += it.skip
            self.journal.append([("snap", self.snaps)], [{"value": self.value, "bound": self.best, "tasks": tasks,
                                                          "redo": redo, "skip": skip}])
            self.snaps += 1
        self.snapped = {}
        for w in sorted(self.frozen):
            self.transport.send(w, Resume())
            self.counts["messages"] += 1
        self.frozen, held, self.held = set(), self.held, {}
        for w, kind in held.items():
            if kind is Mail or (self.reading[w] and self.mailbox[w]):
                self.post(w, kind)
        for w in range(self.P):  # what came for a worker that is reading while it was frozen
            if w not in self.dead and w not in held and self.reading[w] and self.mailbox[w]:
                self.post(w, Post)
        took = self.clock() - self.snap_began
        self.next_snap = self.clock() - self.origin + max(JOURNAL_S, SNAP_SLACK * took)

    def combined(self, a: Any, b: Any, w: int) -> Any:
        """*combine(a, b)*, the user's, on worker *w*'s value (a TaskError naming it if it raises)."""
        spec = self.spec
        try:
            return spec.combine(a, b)
        except Exception as e:  # noqa: BLE001 - the user's combine, on two workers' results
            name = getattr(spec.combine, "__qualname__", None) or short_repr(spec.combine, 60)
            err = TaskError(w, f"{type(e).__name__}: {e}", traceback.format_exc(), what="combine",
                            label=f"combine ({name}) of worker {w}'s value")
            err.__cause__ = e
            raise err from e

    # --- a worker that dies ---------------------------------------------------------------------------
    def undeliverable(self, w: int, item: tuple) -> None:
        """*item*, addressed to dead worker *w*: a steal request answered empty, tasks sent to the live
        worker that took its share, an order dropped (the dead worker has nothing to give)."""
        kind = type(item)
        if kind is Request:
            self.on_give(w, item.thief, [], ANSWER)
        elif kind in ARRIVALS and item.tasks:  # (a Loot's victim or a Pushed's source first in both)
            self.deliver(self.heir(), Pushed(item[0], item.tasks))
        elif kind is Redo:
            self.deliver(self.heir(), item)

    def heir(self) -> int:
        """The live worker that takes a dead worker's share: the one with the fewest waiting tasks."""
        live = [v for v in range(self.P) if v not in self.dead]
        return min(live, key=lambda v: (self.view.queue[v], v))

    def on_died(self, w: int, exitcode: Any) -> None:
        """Worker *w* died: its counts taken back, what waited for it answered or sent on, and its share
        (what came to it and did not leave, what it gave away to skip) sent to an heir as a Redo."""
        if len(self.dead) + 1 >= self.P:
            raise DlbkitError(f"worker {w} died (exit code {exitcode}) and no worker is left; "
                              f"{self.n_created - self.n_completed} tasks were not completed")
        self.dead.add(w)
        # what it did since its epoch began (its last snapshot: what it did before is in the run's value)
        self.n_created -= self.created[w] - self.base[w][0]
        self.n_completed -= self.completed[w] - self.base[w][1]
        self.created[w], self.completed[w] = self.base[w]
        if w in self.snapping or w in self.frozen:  # a snapshot without it is not whole: not written
            self.broken = True
            self.snapping.discard(w)
            self.frozen.discard(w)
            self.held.pop(w, None)
        self.reading[w] = self.asleep[w] = False
        self.books.died(w)
        self.mailbox[w] = []  # the tasks in it came to it already: they are in its share
        for thief, n in list(self.asked[w].items()):  # asked, in its mailbox or unread: answered empty
            for _ in range(n):
                self.on_give(w, thief, [], ANSWER)
        gave = Counter(tid for tid, _ in self.left[w])
        share, back = [], Counter()
        for tid, task in self.came[w]:
            if gave[tid] > back[tid]:  # came, and left again unexpanded (as the same task, by its id)
                back[tid] += 1
            else:
                share.append((tid, task))
        skip = []
        for tid, task in self.left[w]:
            if back[tid]:
                back[tid] -= 1
            else:
                skip.append(task_key(task))
        # it created these and they live on elsewhere: their creation, taken back with its counts, counted
        # again (an earlier death's, in owed, was counted at that death)
        self.n_created += len(skip)
        skip += self.owed[w]
        heir = self.heir()
        self.recovery.append({"worker": w, "exit": exitcode, "time": self.clock() - self.origin, "to": heir,
                            "tasks": len(share), "skip": len(skip)})
        if share:
            self.deliver(heir, Redo(share, skip))
        if self.broken and not self.snapping and (self.frozen or self.snapped):
            self.end_snapshot()  # the others' snapshots were in: they resume (this one is not written)

    # --- deciding -----------------------------------------------------------------------------------
    def periodic(self) -> None:
        """The balancer's central hook, once a worker has completed ``interval`` tasks since the last call."""
        balancer, view = self.balancer, self.view
        interval = float(balancer.interval)  # re-read: an adaptive rule may change it
        # 001 §2.9: i tasks per worker between invocations; the first worker to get there calls it
        if interval > 0 and max(c - a for c, a in zip(self.completed, self.at_last)) < interval:
            return
        self.at_last = list(self.completed)
        view.time = self.clock() - self.origin
        view.node = -1
        if balancer.observes:
            balancer.observe(view)
        if balancer.acting() is None:
            return
        for t in transfers(balancer, self.knowledge(-1), self.record):
            if t.n > 0:
                self.counts["transfers"] += 1
                self.books.order(t.src, t.dst, t.n)
                self.deliver(t.src, Order(t.dst, t.n))

    # --- the run ------------------------------------------------------------------------------------
    def run(self, initial: Any) -> tuple[Any, Any, Trace]:
        self.value = initial  # the run's value: initial (used once), and each snapshot's values as they come
        self.expand()
        finals = self.collect()
        value = self.fold(finals, self.value)
        if self.journal is not None:  # the run's last entry: its value (a rerun computes nothing)
            self.journal.append([("done", 0)], [{"value": value, "bound": self.best}])
        trace = _trace(finals, self.P, self.balancer, self.spec, self.emulation, self.counts, self.backend, self.best)
        trace.meta.update(dead=sorted(self.dead), recovery=self.recovery)
        if self.journal is not None:
            trace.meta["journal"] = {"path": str(self.journal.path), "snapshots": self.snaps,
                                     "resumed": self.spec.start is not None}
        trace.decisions = self.record or []
        info = self.info
        if info is not None:
            trace.info_messages, trace.info_bytes, trace.info_age_mean = info.messages_, info.bytes_, info.age_mean
            trace.meta["info"] = {"model": info.name, **info.get_params(), "rounds": info.rounds_}
        return value, self.best if self.spec.branch_and_bound else None, trace

    def expand(self) -> None:
        """Relay and decide until the tasks completed equal the tasks created."""
        clock, origin, progress = self.clock, self.origin, self.progress
        while self.n_completed < self.n_created:
            got = self.transport.recv(self._timeout())
            timers = self.timers
            while timers and timers[0][0] <= clock():
                _, _, tw, item = heapq.heappop(timers)
                self.deliver(tw, item)
            if self.info is not None and clock() - origin >= self.next_round:
                self.info_round()
            if clock() - origin >= self.next_snap and not self.snapping and not self.frozen:
                self.begin_snapshot()
            if got is None:
                if progress:
                    progress.total = self.n_created
                    progress.update(self.n_completed)
                continue
            w, msg = got
            self.counts["messages"] += 1
            if type(msg) is Died:
                self.on_died(w, msg.exitcode)
                continue
            if type(msg) not in STATED:
                raise _stopped(w, msg, self.n_created - self.n_completed)
            self.on_stated(w, msg)

    def _timeout(self) -> float | None:
        """How long to wait for a message: until the next delayed answer or information round, or
        the progress bar's refresh."""
        timeout = None
        clock = self.clock
        if self.timers:
            timeout = max(0.0, self.timers[0][0] - clock())
        if self.info is not None:
            due = max(0.0, self.origin + self.next_round - clock())
            timeout = due if timeout is None else min(timeout, due)
        if self.journal is not None and not self.snapping:
            due = max(0.0, self.origin + self.next_snap - clock())
            timeout = due if timeout is None else min(timeout, due)
        if self.progress and self.progress.enabled:
            timeout = POLL_S if timeout is None else min(timeout, POLL_S)
        return timeout

    def on_stated(self, w: int, msg: tuple) -> None:
        """A :class:`Report`, :class:`Steal`, :class:`Idle` or :class:`Give` from worker *w*: book its
        counts and load, then act on it."""
        c, d, q, idle, t, seen = msg.state
        self.n_created += c - self.created[w]
        self.n_completed += d - self.completed[w]
        self.created[w], self.completed[w] = c, d
        self.books.report(w, q, seen)
        self.view.done[w], self.view.updated_at[w] = d, t
        self.reading[w] = idle
        kind = type(msg)
        if kind is not Snapped:  # (a snapshot leaves it as it was)
            self.asleep[w] = kind is Idle
        if self.spec.branch_and_bound and msg.bound is not None and self.spec.better(msg.bound, self.best):
            self.best = msg.bound
        if kind is Report:
            self.post(w, Mail)
        elif kind is Steal:
            self.on_steal(w, msg.asks)
        elif kind is Give:
            self.on_give(w, msg.dst, msg.tasks, msg.how)
        elif kind is Snapped:
            self.on_snapped(w, msg)
        if self.reading[w] and self.mailbox[w]:
            self.asleep[w] = False
            self.post(w, Post)
        if self.wake:
            self.wake_neighbours(w)
        if self.periodic_:
            self.periodic()
        if self.progress:
            self.progress.total = self.n_created
            self.progress.update(self.n_completed)

    def on_steal(self, w: int, asks: list) -> None:
        """Relay thief *w*'s requests to its victims (checked: another worker)."""
        P = self.P
        for victim, wanted in asks:
            if not (isinstance(victim, int) and 0 <= victim < P and victim != w):
                raise DlbkitError(f"balancer {self.balancer.name!r} chose victim {victim!r} for worker "
                                  f"{w}; allowed: another worker in 0..{P - 1}")
            self.counts["steal_requests"] += 1
            self.deliver(victim, Request(w, int(wanted)))

    def on_give(self, w: int, dst: int, tasks: list, how: int) -> None:
        """Relay worker *w*'s tasks to *dst*; an empty steal answer after the thief's back-off."""
        self.counts["tasks_moved"] += len(tasks)
        self.left[w].extend(tasks)
        if how == ANSWER:
            self.asked[w][dst] -= 1
        if how == ORDER:
            self.books.order_done(w)
        if how != ANSWER:
            if tasks:
                self.deliver(dst, Pushed(w, tasks))
        elif tasks:
            self.counts["steals"] += 1
            self.failures[dst] = 0
            self.deliver(dst, Loot(w, tasks))
        else:
            self.failures[dst] += 1
            delay = steal_backoff(self.failures[dst])
            self.seq += 1
            heapq.heappush(self.timers, (self.clock() + delay, self.seq, dst, Loot(w, tasks)))

    def collect(self) -> dict[int, Final]:
        """Stop every worker and collect its :class:`Final` (late reports are moot)."""
        live = [w for w in range(self.P) if w not in self.dead]
        for w in live:
            self.send(w, Stop())
        finals: dict[int, Final] = {}
        while len(finals) < len(live):
            got = self.transport.recv(None)
            if got is None:  # pragma: no cover - recv without timeout returns a message
                continue
            w, msg = got
            self.counts["messages"] += 1
            kind = type(msg)
            if kind is Final:
                finals[w] = msg
            elif kind is Snapped and msg.has_value:  # a snapshot cut short by the end: its value still counts
                self.value = self.combined(self.value, msg.value, w)
            elif kind is Died and w not in finals:
                raise DlbkitError(f"worker {w} died (exit code {msg.exitcode}) before returning its results")
            elif kind is Fail:
                raise DlbkitError(f"worker {w} failed in dlbkit's own code:\n{msg.traceback}")
            elif kind is Error:  # its value could not be pickled
                raise _tree_error(msg)
        self.transport.stop()
        return finals

    def fold(self, finals: dict[int, Final], initial: Any) -> Any:
        """*initial* combined with every worker's value, in worker order (the best bound kept too)."""
        spec = self.spec
        value = initial
        for w in sorted(finals):
            f = finals[w]
            if spec.branch_and_bound and f.bound is not None and spec.better(f.bound, self.best):
                self.best = f.bound
            if f.has_value:
                value = self.combined(value, f.value, w)
        return value


def _stopped(w: int, msg: tuple, left: int) -> Exception:
    """The error that ends the run on worker *w*'s *msg*, one that is not a worker's state (*left*:
    tasks not completed)."""
    kind = type(msg)
    if kind is Error:
        return _tree_error(msg)
    if kind is Fail:
        if msg.message:  # dlbkit refused something (e.g. a balancer's answer): its message says what
            err = DlbkitError(f"worker {w}: {msg.message}")
            err.__cause__ = RemoteTraceback(msg.traceback)
            return err
        return DlbkitError(f"worker {w} failed in dlbkit's own code:\n{msg.traceback}")
    if kind is Final:  # pragma: no cover - a worker never ends before Stop
        return DlbkitError(f"worker {w} ended before the run did")
    return DlbkitError(f"unexpected message {kind.__name__} from worker {w}")  # pragma: no cover - a bug


def _tree_error(msg) -> TaskError:
    """The TaskError of a worker's ``Error``, naming what failed: a task (the index is its repr: expand
    raised on it, or a task it created cannot be pickled), or a worker's value or bound that cannot
    be pickled (the index is ``("value", w)`` or ``("bound", w)``)."""
    if isinstance(msg.index, tuple):
        what, w = msg.index
        return task_error(msg, what=what, index=w, label=f"worker {w}'s {what}")
    return task_error(msg, what="task", label=f"task {msg.index}")


def _trace(finals: dict, P: int, balancer, spec: TreeSpec, emulation, counts: dict, backend: str,
           best) -> Trace:
    """One chunk row per busy stretch: a run of tasks a worker expanded without going idle."""
    speeds = list(spec.speeds) or [1.0] * P
    trace = Trace(P, list(range(P)), balancer=balancer.name, seed=spec.seed, source=backend, family="tree",
                  speeds=speeds, availability=list(emulation.availability) if emulation else [Constant().realise()] * P)
    expanded = []
    work = 0.0
    max_task = 0.0
    tree: dict[str, list] = {"worker": [], "id": [], "cost": [], "children": []}
    for w in range(P):
        f = finals.get(w)
        if f is None:  # it died: what it expanded was lost and expanded again (meta["recovery"])
            expanded.append(0)
            continue
        ids, costs, n_children = f.tasks
        tree["worker"] += [w] * len(ids)
        tree["id"] += ids.tolist()
        tree["cost"] += costs.tolist()
        tree["children"] += n_children.tolist()
        expanded.append(f.expanded)
        work += f.work
        max_task = max(max_task, f.max_task)
        for first, count, t_ask, t_start, t_end in f.rows:
            trace.add_interval(w, first, count, t_ask, t_start, t_end)
    trace.messages = counts["messages"]
    trace.events = counts["messages"] + sum(expanded)
    trace.end_time = max(trace.t_end, default=0.0)
    trace.total_work = work
    trace.max_item = max_task
    trace.meta.update(mechanism="tree", backend=backend, balancer_params=balancer.get_params(),
                      tasks=sum(expanded), expanded=expanded, steal_requests=counts["steal_requests"],
                      steals=counts["steals"], tasks_moved=counts["tasks_moved"], transfers=counts["transfers"],
                      bound=best if spec.branch_and_bound else None, check_s=CHECK_S,
                      load_updates=counts["load_updates"], topology=_topology_record(spec.topology, spec.neighbours),
                      task_tree=tree)
    return trace


def _topology_record(topology, neighbours) -> Any:
    """The topology as plain data for the trace: its name or table, or a graph's edge list."""
    if topology is None or isinstance(topology, str):
        return topology or "complete"
    if isinstance(topology, dict):
        return dict(topology)
    return {"kind": "edges", "edges": [[u, v] for u, nb in enumerate(neighbours) for v in nb if u < v]}

