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

A worker that dies cannot be recovered from (its tasks are lost): the run stops with a
:class:`~dlbkit.errors.DlbkitError`. An exception in the user's code stops every worker and is
raised as :class:`~dlbkit.errors.TaskError`.
"""

from __future__ import annotations

import heapq
import math
import time
import traceback
from typing import Any

import numpy as np

from dlbkit.errors import DlbkitError, RemoteTraceback, TaskError
from dlbkit.model.availability import Constant
from dlbkit.families.tree.model.backoff import backoff_delay
from dlbkit.model.trace import Trace
from dlbkit.families.tree.model.view import TreeView
from dlbkit.families.tree.balancers.decide import transfers
from dlbkit.runtime.backends.base import Transport, short_repr, task_error
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import DIED, ERROR, Stop
from dlbkit.runtime.progress import Progress
from dlbkit.families.tree.runtime.loads import InFlightLoads
from dlbkit.families.tree.runtime.worker import ANSWER, FAIL, FINAL, GIVE, IDLE, MAIL, ORDER, POST, REPORT, STEAL, CHECK_S, TreeSpec

__all__ = ["coordinate_tree", "STEAL_BACKOFF_S", "steal_backoff"]

#: (first, longest) delay before an empty steal answer reaches its thief, in seconds; the delay
#: doubles with each consecutive empty answer and resets when a steal succeeds
STEAL_BACKOFF_S = (1e-4, 5e-3)
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives


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
                    backend: str = "local") -> tuple[Any, Any, Trace]:
    """Run the tree of *spec* on *transport*'s workers; return (combined value, best bound, trace).

    The backend stops every worker if anything here fails and closes the progress bar (base.drive).
    """
    return _coordinate(transport, spec, initial, emulation, progress, backend)


def _coordinate(transport, spec, initial, emulation, progress, backend):
    P = transport.n_workers
    origin = spec.origin
    clock = time.perf_counter
    balancer = spec.balancer.clone()
    speeds = list(spec.speeds) or [1.0] * P
    neighbours = [list(nb) for nb in spec.neighbours] or [[j for j in range(P) if j != i] for i in range(P)]
    view = TreeView(P, speeds=speeds, neighbours=neighbours, colours=list(spec.colours))
    balancer.start(view, np.random.default_rng(spec.seeds()[0]))
    better = spec.better
    record: list | None = [] if spec.record_decisions else None  # the periodic decisions and their views
    bnb = spec.branch_and_bound
    best = spec.bound
    created = [0] * P
    completed = [0] * P
    n_created = 1  # the root, plus every child the workers report
    n_completed = 0
    reading = [w != 0 for w in range(P)]  # every worker but 0 starts idle, blocked in recv
    mailbox: list[list] = [[] for _ in range(P)]
    failures = [0] * P
    timers: list[tuple[float, int, int, tuple]] = []  # (due, seq, worker, item): delayed answers
    seq = 0
    counts = {"messages": 0, "steal_requests": 0, "steals": 0, "tasks_moved": 0, "transfers": 0,
              "load_updates": 0}
    at_last = [0] * P  # tasks each worker had completed at the last periodic point
    reads_loads = balancer.reads_loads
    books = InFlightLoads(view)
    # receiver-initiated rules that read loads (RID) decide whether to ask from their neighbours'
    # loads: a worker that asked nobody sleeps in recv, so it is sent fresh loads (an empty POST)
    # when a neighbour's load rises above what it last saw (W&R's periodic neighbour updates)
    wake = balancer.receiver_initiated and reads_loads
    asleep = [False] * P
    shown: list[list[int]] = [[0] * P for _ in range(P)]  # the loads each worker last received

    # --- an information model (dlbkit.info): the coordinator is the star's relay, so it keeps every
    # worker's table; a round's messages are merged into their receivers' tables as they pass it, and
    # a worker reads its table in the next loads it is sent (MAIL/POST). A node's own entry is what it
    # last reported of itself. Without a model, deciders read the coordinator's view (reports).
    info = spec.info if spec.info is not None and not spec.info.exact else None
    next_round = math.inf
    if info is not None:
        info.start(P, neighbours, [1 if w == 0 else 0 for w in range(P)],
                   np.random.default_rng(np.random.SeedSequence(spec.seed).spawn(4)[3]))
        next_round = info.interval
        seen_view = TreeView(P, speeds=speeds, neighbours=neighbours, colours=list(spec.colours))

    def knowledge(node: int) -> TreeView:
        """What *node* (-1: the coordinator, deciding centrally) knows now, as a view."""
        if info is None:
            return view
        v = seen_view
        v.time, v.node, v.done = clock() - origin, node, view.done
        c = info.centre if node < 0 else node
        info.fill(c, v.time, books.reported[c], v.queue, v.updated_at, integer=True)
        if node < 0:  # the coordinator adds what it sent or ordered that no report covers yet
            for j in range(P):
                if j != c:
                    v.queue[j] = max(0, v.queue[j] + books.flight_sum[j] + books.mail[j] + books.promised[j])
        return v

    def info_round() -> None:
        nonlocal next_round
        now = clock() - origin
        for m in info.round(now, list(books.reported)):
            info.deliver(m)
        while next_round <= now:
            next_round += info.interval
        if wake:  # every sleeping worker's knowledge changed: it reconsiders
            for u in range(P):
                if asleep[u]:
                    counts["load_updates"] += 1
                    asleep[u] = False
                    post(u, POST)

    def loads(w: int):
        if not reads_loads:
            return None
        k = knowledge(w)
        return list(k.queue), list(k.done), list(k.updated_at)

    def send(w: int, msg: tuple) -> None:
        transport.send(w, msg)
        counts["messages"] += 1

    def post(w: int, kind: str) -> None:
        items, mailbox[w] = mailbox[w], []
        books.posted(w)
        if wake:
            shown[w] = list(view.queue)
        send(w, (kind, best, loads(w), items))

    def deliver(w: int, item: tuple) -> None:
        mailbox[w].append(item)
        books.queued(w, item)
        if reading[w]:
            asleep[w] = False
            post(w, POST)

    def periodic() -> None:
        nonlocal at_last
        interval = float(balancer.interval)  # re-read: an adaptive rule may change it
        # 001 §2.9: i tasks per worker between invocations; the first worker to get there calls it
        if interval > 0 and max(c - a for c, a in zip(completed, at_last)) < interval:
            return
        at_last = list(completed)
        view.time = clock() - origin
        view.node = -1
        if balancer.observes:
            balancer.observe(view)
        if balancer.acting() is None:
            return
        for t in transfers(balancer, knowledge(-1), record):
            src, dst, n = t.src, t.dst, t.n
            if n > 0:
                counts["transfers"] += 1
                books.order(src, dst, n)
                deliver(src, ("give", dst, n))

    def wake_neighbours(v: int) -> None:
        """Fresh loads to every sleeping neighbour of *v* that has not seen v's load this high (with an
        information model, workers hear of loads in its rounds instead)."""
        if info is not None:
            return
        for u in neighbours[v]:
            if asleep[u] and view.queue[v] > shown[u][v]:
                counts["load_updates"] += 1
                asleep[u] = False
                post(u, POST)

    finals: dict[int, tuple] = {}
    periodic_ = balancer.periodic
    while n_completed < n_created:
        timeout = None
        if timers:
            timeout = max(0.0, timers[0][0] - clock())
        if info is not None:
            due = max(0.0, origin + next_round - clock())
            timeout = due if timeout is None else min(timeout, due)
        if progress and progress.enabled:
            timeout = POLL_S if timeout is None else min(timeout, POLL_S)
        got = transport.recv(timeout)
        while timers and timers[0][0] <= clock():
            _, _, tw, item = heapq.heappop(timers)
            deliver(tw, item)
        if info is not None and clock() - origin >= next_round:
            info_round()
        if got is None:
            if progress:
                progress.total = n_created
                progress.update(n_completed)
            continue
        w, msg = got
        counts["messages"] += 1
        kind = msg[0]
        if kind in (REPORT, STEAL, IDLE, GIVE):
            c, d, q, idle, t, seen = msg[1]
            n_created += c - created[w]
            n_completed += d - completed[w]
            created[w], completed[w] = c, d
            books.report(w, q, seen)
            view.done[w], view.updated_at[w] = d, t
            reading[w] = idle
            asleep[w] = kind == IDLE
            if bnb and msg[2] is not None and better(msg[2], best):
                best = msg[2]
            if kind == REPORT:
                post(w, MAIL)
            elif kind == STEAL:
                for victim, wanted in msg[3]:
                    if not (isinstance(victim, int) and 0 <= victim < P and victim != w):
                        raise DlbkitError(f"balancer {balancer.name!r} chose victim {victim!r} for worker "
                                          f"{w}; allowed: another worker in 0..{P - 1}")
                    counts["steal_requests"] += 1
                    deliver(victim, ("req", w, int(wanted)))
            elif kind == GIVE:
                dst, tasks, how = msg[3], msg[4], msg[5]
                counts["tasks_moved"] += len(tasks)
                if how == ORDER:
                    books.order_done(w)
                if how != ANSWER:
                    if tasks:
                        deliver(dst, ("tasks", w, tasks))
                elif tasks:
                    counts["steals"] += 1
                    failures[dst] = 0
                    deliver(dst, ("loot", w, tasks))
                else:
                    failures[dst] += 1
                    delay = steal_backoff(failures[dst])
                    seq += 1
                    heapq.heappush(timers, (clock() + delay, seq, dst, ("loot", w, tasks)))
            if reading[w] and mailbox[w]:
                asleep[w] = False
                post(w, POST)
            if wake:
                wake_neighbours(w)
            if periodic_:
                periodic()
            if progress:
                progress.total = n_created
                progress.update(n_completed)
        elif kind == ERROR:
            raise _tree_error(msg)
        elif kind == FAIL:
            if msg[2]:  # dlbkit refused something (e.g. a balancer's answer): its message says what
                raise DlbkitError(f"worker {w}: {msg[2]}") from RemoteTraceback(msg[1])
            raise DlbkitError(f"worker {w} failed in dlbkit's own code:\n{msg[1]}")
        elif kind == DIED:
            raise DlbkitError(f"worker {w} died (exit code {msg.exitcode}); the tasks it held are lost, "
                              f"{n_created - n_completed} tasks were not completed")
        elif kind == FINAL:  # pragma: no cover - a worker never ends before STOP
            raise DlbkitError(f"worker {w} ended before the run did")
        else:  # pragma: no cover - a protocol error is a bug, never silent
            raise DlbkitError(f"unexpected message {kind!r} from worker {w}")
    for w in range(P):
        send(w, Stop())
    while len(finals) < P:  # collect every worker's partial result; late reports are moot
        got = transport.recv(None)
        if got is None:  # pragma: no cover - recv without timeout returns a message
            continue
        w, msg = got
        counts["messages"] += 1
        if msg[0] == FINAL:
            finals[w] = msg
        elif msg[0] == DIED and w not in finals:
            raise DlbkitError(f"worker {w} died (exit code {msg.exitcode}) before returning its results")
        elif msg[0] == FAIL:
            raise DlbkitError(f"worker {w} failed in dlbkit's own code:\n{msg[1]}")
        elif msg[0] == ERROR:  # its value could not be pickled
            raise _tree_error(msg)
    transport.stop()

    value = initial
    for w in range(P):
        _, has, acc, bound, *_ = finals[w]
        if bnb and bound is not None and better(bound, best):
            best = bound
        if has:
            try:
                value = spec.combine(value, acc)
            except Exception as e:  # noqa: BLE001 - the user's combine, on two workers' results
                name = getattr(spec.combine, "__qualname__", None) or short_repr(spec.combine, 60)
                err = TaskError(w, f"{type(e).__name__}: {e}", traceback.format_exc(), what="combine",
                                label=f"combine ({name}) of worker {w}'s value")
                err.__cause__ = e
                raise err from e
    trace = _trace(finals, P, balancer, spec, emulation, counts, backend, best)
    trace.decisions = record or []
    if info is not None:
        trace.info_messages, trace.info_bytes, trace.info_age_mean = info.messages_, info.bytes_, info.age_mean
        trace.meta["info"] = {"model": info.name, **info.get_params(), "rounds": info.rounds_}
    return value, best if bnb else None, trace


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
    for w in range(P):
        _, _, _, _, rows, n, wk, mx = finals[w]
        expanded.append(n)
        work += wk
        max_task = max(max_task, mx)
        for first, count, t_ask, t_start, t_end in rows:
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
                      load_updates=counts["load_updates"], topology=_topology_record(spec.topology, spec.neighbours))
    return trace


def _topology_record(topology, neighbours) -> Any:
    """The topology as plain data for the trace: its name or table, or a graph's edge list."""
    if topology is None or isinstance(topology, str):
        return topology or "complete"
    if isinstance(topology, dict):
        return dict(topology)
    return {"kind": "edges", "edges": [[u, v] for u, nb in enumerate(neighbours) for v in nb if u < v]}

