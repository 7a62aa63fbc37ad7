"""The graph family's real run (``dlbkit.graph``): a DAG of the user's Python functions, placed by a
mapping balancer, results passed along the edges through the coordinator.

The coordinator keeps the DAG's state (which tasks are done, which inputs each still waits for, where
each task runs) and asks the balancer where tasks go, as the simulator's engines do:

* a **static mapper** (``heft``, ``cpop``, ``round-robin``, …: :class:`~dlbkit.families.graph.balancers.base.MappingBalancer`)
  is asked once for a plan (:func:`~dlbkit.families.graph.balancers.decide.plan`) on a
  :class:`~dlbkit.families.graph.model.view.GraphView` built from the tasks' load estimates and the workers' speeds
  (emulated, else 1); each worker then runs its tasks in the plan's order (without one, the list
  rule's order on dedicated nodes: :func:`~dlbkit.families.graph.model.evaluate.plan_order`), each sent when its
  inputs are in and the worker's earlier tasks were sent (the static engines' replay of a plan);
* an **online mapper** (``pd``: :class:`~dlbkit.families.graph.balancers.base.OnlineMapping`) is asked
  (:func:`~dlbkit.families.graph.balancers.decide.online_place`) after each finished task and each input's arrival, with
  a :class:`~dlbkit.families.graph.model.view.GraphOnlineView` kept by the ``dynamic`` engine's GST rule
  (:class:`~dlbkit.families.graph.model.gst.Table`): its candidates are the unplaced tasks whose holds are 0
  (a placed task receives data when the first of its inputs is computed, a root when placed, which
  releases its successors, so tasks are placed one level ahead as in the simulator),
  ``load_level`` the estimated time of the tasks placed on each worker and not finished, ``active``
  those tasks, ``priority`` the precedence level (upward rank) minus its maximum. Each worker runs its
  placed tasks highest priority first (002 §5.3 rule 1), without preemption (a Python call cannot be
  preempted).

A worker holds at most :data:`DEPTH` tasks sent and not returned, so the next task is already there
when one ends. The worker (:func:`serve_graph`) calls ``fn`` with its arguments (dependencies
filled in: :func:`~dlbkit.families.graph.runtime.tasks.resolve`), times it, stretches the time when
emulating a slower node, and returns the value; it never decides.

Faults (local backend; under MPI a dead rank ends the job): the tasks a dead worker held, sent and not
returned, are recomputed. A static mapper is asked for a new plan on the living workers (its
assignment and order are used for every task not yet sent); an online mapper is restarted on a view
of the living workers and places the lost tasks again. A result is kept once (a late duplicate is
ignored). An exception in ``fn`` stops every worker and is a :class:`~dlbkit.errors.TaskError` naming
the task's key, with the worker's traceback, every result in by then (``results``) and the part's
trace; so is a result that cannot be pickled. With ``return_exceptions`` the exception is the task's
value instead, and the value of every task that depends on it, none of which runs (as Dask gives a
dependent the exception of the task it needed); the run goes on (``meta["failed"]``: the tasks that
raised, ``meta["not_run"]``: their dependents).

Messages (:mod:`.messages`): coordinator → worker ``Run`` (a task with its inputs), ``Stop()``;
worker → coordinator ``Result`` (its value and times), an ``Error`` (index = the task's); the local
transport adds ``Died``.

Trace (family ``graph``): one interval per task (``first`` = its index, ``t_ask`` = when its inputs
were all at the coordinator, ``t_start``/``t_end`` on the worker); ``meta``: ``assignment`` (worker of
each task), ``ids``, ``dag`` (the graph with its load estimates, ``TaskGraph.to_dict``), ``item_cost``
(measured busy seconds per task), ``faults`` (``(worker, task, time)`` per lost task), ``replans``,
``lower_bound`` (the critical path of the measured costs at the fastest speed).
"""

from __future__ import annotations

import heapq
import time
from typing import Any, Callable

import numpy as np


from dlbkit.families.graph.balancers import decide
from dlbkit.families.graph.balancers.base import MappingBalancer, OnlineMapping
from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.model.availability import Constant
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.costs import costs_for, critical_path_bound, upward_rank
from dlbkit.families.graph.model.evaluate import plan_order
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace
from dlbkit.families.graph.model.gst import Table
from dlbkit.families.graph.model.view import GraphOnlineView, GraphView
from dlbkit.runtime import status
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import (Program, Transport, UserCode, error_message, keep_finished, raised,
                                         send_or_report, short_repr, task_error, unpicklable)
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Died, Error, Stop
from dlbkit.runtime.progress import Progress
from dlbkit.families.graph.runtime.messages import Result, Run
from dlbkit.families.graph.runtime.tasks import GraphTasks, resolve

#: what the coordinator runs: a static mapper's plan or an online mapper (the two graph kinds)
Mapper = MappingBalancer | OnlineMapping

__all__ = ["coordinate_graph", "serve_graph", "answer_graph", "run_task", "GraphRun", "run_graph", "DEPTH"]

#: tasks a worker holds, sent and not returned: one computing and one waiting, so that the coordinator's
#: round trip (about 0.1 ms locally) hides behind the work; more would commit tasks to a worker early
DEPTH = 2
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives
_MISSING = object()


def nodes_for(speeds: list[float]):
    """The processors a plan is made for: a count (identical, speed 1) or a platform of one node per
    worker with its speed; a transfer takes its data (latency 0, one data unit per second), as with
    a processor count."""
    if all(s == 1.0 for s in speeds):
        return len(speeds)
    return Platform([Node(f"w{k}", speed=s) for k, s in enumerate(speeds)], Network(latency=0.0, bandwidth=1.0),
                    name="dlbkit.graph")


class _Coordinator:
    """One run's DAG state and rules (the coordinator side of :class:`GraphRun`)."""

    def __init__(self, transport: Transport, spec: GraphTasks, balancer: Mapper, *, origin: float,
                 emulation: Emulation | None, progress: Progress | None, rng, backend: str, record: bool,
                 send_jobs: bool, return_exceptions: bool = False,
                 on_value: Callable[[int, Any], None] | None = None):
        self.tp, self.spec, self.b = transport, spec, balancer
        self.g: TaskGraph = spec.graph
        self.n, self.P = spec.n_tasks, transport.n_workers
        self.origin, self.progress, self.rng, self.backend = origin, progress, rng, backend
        self.send_jobs = send_jobs
        self.speeds = list(emulation.speeds) if emulation else [1.0] * self.P
        self.online = isinstance(balancer, OnlineMapping)
        self.trace = Trace(self.P, list(range(self.P)), balancer=balancer.name, source=backend,
                           speeds=list(self.speeds), family="graph",
                           availability=list(emulation.availability) if emulation else
                           [Constant().realise() for _ in range(self.P)])
        self.record = self.trace.decisions if record else None
        n = self.n
        self.values: list[Any] = [_MISSING] * n
        self.missing = [len(d) for d in spec.deps]
        self.ready_at = [0.0] * n
        self.worker_of = [-1] * n
        self.cost = [0.0] * n
        self.out: list[set] = [set() for _ in range(self.P)]  # tasks sent and not returned, per worker
        self.alive = list(range(self.P))
        self.done = 0
        self.messages = 0
        self.faults: list[tuple[int, int, float]] = []
        self.replans = 0
        # static: per worker its tasks in the plan's order, and the next to send
        self.seq: list[list[int]] = [[] for _ in range(self.P)]
        self.nxt = [0] * self.P
        # online: per worker its placed tasks whose inputs are all in, highest priority first; the GST
        self.heap: list[list] = [[] for _ in range(self.P)]
        self.table: Table | None = None
        self.joining: list[int] = []  # placed with every input in during a decision round (decide)
        self.rate: dict[int, float] = {}  # per worker: estimated load ÷ measured seconds, its last task
        self.sent = [False] * n
        self.return_exceptions = return_exceptions
        self.on_value = on_value  # called with each task's value as it is kept (a journal)
        self.failed: list[int] = []  # tasks that raised (return_exceptions)
        self.not_run: list[int] = []  # and the tasks that needed them

    def now(self) -> float:
        return time.perf_counter() - self.origin

    # ---- asking the balancer ----------------------------------------------------------------------
    def _costs(self):
        return costs_for(self.g, nodes_for([self.speeds[w] for w in self.alive]))

    def plan(self) -> None:
        """Ask the static mapper for a plan on the living workers; every task not yet sent follows it."""
        costs = self._costs()
        view = GraphView(len(self.alive), costs)
        self.b.start(view, self.rng)
        p = decide.plan(self.b, view, self.record)
        self.trace.meta.setdefault("plan_info", dict(p.info or {}))
        self.seq = [[] for _ in range(self.P)]
        self.nxt = [0] * self.P
        for i in plan_order(costs, p.assignment, p.order):
            if not self.sent[i]:
                w = self.alive[p.assignment[i]]
                self.worker_of[i] = w
                self.seq[w].append(i)

    def start_online(self) -> None:
        """A fresh view of the living workers and its Global Scheduling Table (at the start, and after
        a worker died), the balancer started on it. At the start the roots arrive (the simulator's
        rule, :class:`~dlbkit.families.graph.model.gst.Table`); after a death the table is rebuilt: a task has
        received data if it finished or a predecessor's result is in, holds count the predecessors
        that have not, and the unplaced unfinished tasks with none are candidates (the lost first)."""
        costs = self._costs()
        prec = upward_rank(costs)
        top = max(prec)
        self.exec_ = costs.exec
        pos = {w: k for k, w in enumerate(self.alive)}
        v = GraphOnlineView(len(self.alive), costs, priority=[x - top for x in prec])
        old = self.table
        table = Table(v)
        g = self.g
        for i in range(self.n):
            if self.values[i] is not _MISSING:
                v.finish[i] = 0.0 if old is None else old.view.finish[i]
                v.start[i] = None if old is None else old.view.start[i]
                v.n_finished += 1
            w = self.worker_of[i]
            if w >= 0 and w in pos:
                v.placed[i] = pos[w]
                if self.values[i] is _MISSING:
                    if self.missing[i] == 0:
                        table.activate(i)
                    v.load_level[pos[w]] += costs.exec[i][pos[w]]
        self.view, self.pos, self.table = v, pos, table
        self._measured()
        if old is None:
            table.arrive([i for i in g.topo if self.missing[i] == 0])
        else:
            lost = list(old.cand) + [i for i in range(self.n) if i not in old.cand and self.worker_of[i] < 0
                                     and self.values[i] is _MISSING]
            for i in range(self.n):
                if self.values[i] is not _MISSING or (v.placed[i] >= 0 and any(
                        self.values[j] is not _MISSING for j, _ in g.preds[i])) or (v.placed[i] >= 0 and not g.preds[i]):
                    table.got_data[i] = True
            for i in range(self.n):
                v.holds[i] = sum(not table.got_data[j] for j, _ in g.preds[i])
                if v.placed[i] < 0 and self.values[i] is _MISSING and (
                        v.holds[i] == 0 or any(v.placed[j] >= 0 for j, _ in g.preds[i])):
                    table.enter(i)
            for i in lost:
                if v.holds[i] == 0 and i not in table.cand:
                    table.readmit(i)
        self.b.start(v, self.rng)

    def _measured(self) -> None:
        """The view's ``measured_speed``: per living worker, its nominal speed × how fast its last task
        ran against its estimate (estimated load ÷ measured seconds, over the same ratio's mean for the
        measured workers, so that a worker not yet measured keeps its nominal speed and the loads'
        unit cancels: only how the workers compare is measured, not how good the estimates are)."""
        v = self.view
        got = [self.rate[w] / self.speeds[w] for w in self.alive if w in self.rate]
        if not got:
            return
        mean = sum(got) / len(got)
        for k, w in enumerate(self.alive):
            v.measured_speed[k] = self.speeds[w] * (self.rate[w] / self.speeds[w] / mean if w in self.rate else 1.0)

    def decide(self) -> None:
        """Ask the online mapper until it places nothing more. A task placed with its inputs all in
        joins ``active`` after the round, as in the engine, where its inputs' arrival is an event
        after the decisions of the moment."""
        v = self.view
        cand = self.table.cand
        try:
            while cand:
                v.time = self.now()  # v.candidates is the table's own, kept as it changes
                pairs = decide.online_place(self.b, v, self.record)
                if not pairs:
                    if not any(self.out[w] or self.heap[w] for w in self.alive):
                        raise ConfigError(f"balancer {self.b.name!r}", f"no placement of {len(cand)} placeable "
                                          "tasks while nothing runs", "a mapper that places the tasks it is offered")
                    return
                for i, k, *_ in pairs:  # a key (local_order "plan") is not followed here: workers run by priority
                    self._place(i, k)
        finally:
            for i in self.joining:
                self.table.activate(i)
            self.joining.clear()

    def _place(self, i: int, k: int) -> None:
        v, g = self.view, self.g
        w = self.alive[k]
        self.table.place(i, k, self.exec_[i][k])  # the simulator's GST rule (a root releases at once)
        self.worker_of[i] = w
        if any(self.values[j] is not _MISSING for j, _ in g.preds[i]):
            self.table.first_data(i)  # an input is already in: the task has received data
        if self.missing[i] == 0:
            self.joining.append(i)
            heapq.heappush(self.heap[w], (-v.priority[i], i))
            self.dispatch(w)

    # ---- moving tasks -------------------------------------------------------------------------------
    def dispatch(self, w: int) -> None:
        """Send worker *w* its next tasks, up to :data:`DEPTH` held."""
        out = self.out[w]
        if self.online:
            h = self.heap[w]
            while h and len(out) < DEPTH:
                self._send(w, heapq.heappop(h)[1])
            return
        seq, k = self.seq[w], self.nxt[w]
        values = self.values
        while k < len(seq) and len(out) < DEPTH:
            i = seq[k]
            if values[i] is _MISSING:  # else it will not run: a task it needs raised (on_failed)
                if self.missing[i]:
                    break
                self._send(w, i)
            k += 1
        self.nxt[w] = k

    def _send(self, w: int, i: int) -> None:
        spec = self.spec
        inputs = tuple(self.values[j] for j in spec.deps[i])
        job = (spec.fns[i], spec.args[i]) if self.send_jobs else None
        try:
            self.tp.send(w, Run(i, inputs, job))
        except Exception:  # MPI pickles what it sends: name what cannot be
            key = short_repr(spec.keys[i], 80)
            for what, obj in [("its function", spec.fns[i]), ("its arguments", spec.args[i])] + [
                    (f"the result of task {short_repr(spec.keys[j], 80)}", self.values[j]) for j in spec.deps[i]]:
                reason = unpicklable(obj)
                if reason is not None:
                    raise DlbkitError(f"task {key}: {what} cannot be pickled to send it to a worker: {reason}") from None
            raise
        self.sent[i] = True
        self.out[w].add(i)
        self.messages += 1

    # ---- messages -----------------------------------------------------------------------------------
    def on_result(self, w: int, i: int, value: Any, t_start: float, t_end: float, busy: float) -> None:
        self.out[w].discard(i)
        if self.values[i] is not _MISSING:
            return  # a late duplicate: each result is kept once
        self.values[i] = value
        if self.on_value is not None:
            self.on_value(i, value)
        self.cost[i] = busy
        self.done += 1
        self.trace.add_interval(w, i, 1, self.ready_at[i], t_start, t_end)
        if self.online:
            v = self.view
            self.table.deactivate(i)
            v.start[i], v.finish[i] = t_start, t_end
            v.n_finished += 1
            if w in self.pos:
                k = self.pos[w]
                v.load_level[k] = max(v.load_level[k] - self.exec_[i][k], 0.0)
                if t_end > t_start:
                    self.rate[w] = self.g.weight(i) / (t_end - t_start)
                    self._measured()
        t = self.now()
        if self.online:
            # as the dynamic engine orders it: the worker's next task and a decision, then each
            # successor's input arrives, each arrival followed by a decision
            self.dispatch(w)
            self.decide()
            for j, _ in self.g.succs[i]:
                self.missing[j] -= 1
                wj = self.worker_of[j]
                if self.missing[j] == 0:
                    self.ready_at[j] = t
                if wj >= 0:
                    self.table.first_data(j)  # its first input is in (a no-op after the first)
                    if self.missing[j] == 0:
                        self.table.activate(j)
                        heapq.heappush(self.heap[wj], (-self.view.priority[j], j))
                        self.dispatch(wj)
                self.decide()
            return
        for j, _ in self.g.succs[i]:
            self.missing[j] -= 1
            if self.missing[j] == 0:
                self.ready_at[j] = t
                if self.worker_of[j] != w:
                    self.dispatch(self.worker_of[j])
        self.dispatch(w)

    def on_error(self, msg: Error) -> BaseException:
        """The TaskError that ends the run, with every result in (by key) and the part's trace."""
        keys = self.spec.keys
        err = task_error(msg, what="task", index=keys[msg.index])
        kept = {keys[i]: v for i, v in enumerate(self.values) if v is not _MISSING}
        return keep_finished(err, kept, self._finish(), self.done, self.n, "tasks")

    def on_failed(self, w: int, msg: Error) -> None:
        """*return_exceptions*: task ``msg.index`` raised on worker *w*. Its exception is its value and
        the value of every task that depends on it, none of which will run; *w* gets its next task."""
        i = msg.index
        self.out[w].discard(i)
        if self.values[i] is not _MISSING:
            return  # a late duplicate
        exc = raised(msg, what="task", index=self.spec.keys[i])
        t = self.now()
        stack = [i]
        while stack:
            j = stack.pop()
            if self.values[j] is not _MISSING:
                continue
            self.values[j] = exc
            (self.failed if j == i else self.not_run).append(j)
            self.done += 1
            if self.online:
                self._drop(j, t)
            stack.extend(k for k, _ in self.g.succs[j])
        for x in self.alive:  # a static worker's sequence may wait on a task that will not run now
            self.dispatch(x)
        if self.online:
            self.decide()

    def _drop(self, j: int, t: float) -> None:
        """An online run's view after task *j* will not run (or raised): out of the table, its work off
        its worker's load, counted finished."""
        v = self.view
        self.table.drop(j)
        v.finish[j] = t
        v.n_finished += 1
        wj = self.worker_of[j]
        if wj in self.pos and v.placed[j] >= 0:
            k = self.pos[wj]
            v.load_level[k] = max(v.load_level[k] - self.exec_[j][k], 0.0)

    def on_died(self, w: int, exitcode) -> None:
        self.alive.remove(w)
        t = self.now()
        held = set(self.out[w]) | {i for _, i in self.heap[w]}
        lost = sorted(held) + [i for i in range(self.n) if self.worker_of[i] == w and i not in held
                               and self.values[i] is _MISSING]  # online: placed there, inputs not all in
        self.out[w] = set()
        self.heap[w] = []
        for i in lost:
            self.faults.append((w, i, t))
            self.sent[i] = False
            self.worker_of[i] = -1
        if not self.alive:
            raise DlbkitError(f"every worker died (the last, {w}, with exit code {exitcode}); "
                              f"{self.n - self.done} of {self.n} tasks were not computed")
        self.replans += 1
        if self.online:
            self.start_online()
            self.decide()
        else:
            self.plan()
        for x in self.alive:
            self.dispatch(x)

    def run(self) -> tuple[list, Trace]:
        tp, progress = self.tp, self.progress
        for i in range(self.n):
            if self.missing[i] == 0:
                self.ready_at[i] = 0.0
        if self.online:
            self.start_online()
            self.decide()
        else:
            self.plan()
            for w in range(self.P):
                self.dispatch(w)
        # the backend stops every worker if anything here fails, and closes the progress bar (base.drive)
        while self.done < self.n:
            got = tp.recv(POLL_S if progress and progress.enabled else None)
            if got is None:
                if progress:
                    progress.update(self.done, force=True)
                continue
            w, msg = got
            kind = type(msg)
            if kind is Result:
                self.on_result(w, *msg)
                if progress:
                    progress.update(self.done)
            elif kind is Error:
                if not self.return_exceptions:
                    raise self.on_error(msg)
                self.on_failed(w, msg)
                if progress:
                    progress.update(self.done)
            elif kind is Died:
                self.on_died(w, msg.exitcode)
            else:  # pragma: no cover - a protocol error is a bug, never silent
                raise DlbkitError(f"unexpected message {kind.__name__} from worker {w}")
        for w in range(self.P):
            tp.send(w, Stop())
        tp.stop()
        return self.values, self._finish()

    def _finish(self) -> Trace:
        tr, g = self.trace, self.g
        measured = TaskGraph(g.ids, loads=tuple(self.cost), edges=g.edges, name=g.name)
        tr.messages = self.messages * 2 + self.P
        tr.end_time = max(tr.t_end, default=0.0)
        tr.total_work = float(sum(self.cost))
        tr.max_item = float(max(self.cost, default=0.0))
        tr.events = 2 * self.n
        tr.meta.update(mechanism="graph", backend=self.backend, item_cost=list(self.cost), faults=self.faults,
                       balancer_params=self.b.get_params(), assignment=list(self.worker_of), ids=list(g.ids),
                       dag=g.to_dict(), replans=self.replans, graph=g.name,
                       lower_bound=critical_path_bound(costs_for(measured, nodes_for(self.speeds))))
        if self.failed:
            tr.meta.update(failed=sorted(self.failed), not_run=sorted(self.not_run))
        return tr


def coordinate_graph(transport: Transport, spec: GraphTasks, balancer: Mapper, *, origin: float,
                     emulation: Emulation | None = None, progress: Progress | None = None, rng=None,
                     backend: str = "local", record_decisions: bool = False,
                     return_exceptions: bool = False,
                     on_value: Callable[[int, Any], None] | None = None) -> tuple[list, Trace]:
    """Drive *transport*'s workers through *spec*'s DAG with *balancer*; return (values by task index, trace).
    *on_value(i, value)*: each task's value as it is kept (a journal's)."""
    return _Coordinator(transport, spec, balancer, origin=origin, emulation=emulation, progress=progress, rng=rng,
                        backend=backend, record=record_decisions, send_jobs=backend == "mpi",
                        return_exceptions=return_exceptions, on_value=on_value).run()


# --- the worker ------------------------------------------------------------------------------------
def run_task(msg: Run, spec: GraphTasks | None, w: int, emulation: Emulation | None, origin: float, send,
             user: UserCode, keep_going: bool = False) -> bool:
    """Run one task and report it; False if the user's function raised (reported as an Error) or its
    result cannot be pickled (reported so), unless *keep_going* (``return_exceptions``: the worker
    goes on after an ``Exception``)."""
    i, inputs, job = msg
    fn, templates = job if job is not None else (spec.fns[i], spec.args[i])
    if status.ON:  # a launched MPI job: the launcher names this task if the rank dies
        status.doing("computing task %d", i)
    clock = time.perf_counter
    t0 = clock()
    try:
        with user:  # a template's nested Call is the user's function too (Dask's task in a task)
            value = fn(*[resolve(a, inputs) for a in templates])
    except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the caller
        send(error_message(i, e))
        return keep_going and isinstance(e, Exception)
    t1 = clock()
    if emulation is not None:
        emulation.stretch(w, origin, t0, t1)
    name = getattr(fn, "__qualname__", None) or short_repr(fn, 60)
    return send_or_report(send, Result(i, value, t0 - origin, clock() - origin, t1 - t0),
                          lambda: ((i, f"the result of {name}", value),), _as_error if keep_going else None)


def _as_error(result: Result, index: int, error: Error) -> Error:
    return error  # a result that cannot be pickled: the task failed


def serve_graph(conn, w: int, spec: GraphTasks | None, emulation: Emulation | None, origin: float,
                keep_going: bool = False, interruptible: UserCode | None = None) -> None:
    """The worker loop: run the tasks sent, in the order they arrive, until Stop or the coordinator goes away
    (*interruptible*: :attr:`~..backends.base.Program.interruptible`; *keep_going*: :func:`run_task`'s)."""
    send = conn.send
    user = interruptible or UserCode()
    try:
        while True:
            msg = conn.recv()
            if type(msg) is Stop or not run_task(msg, spec, w, emulation, origin, send, user, keep_going):
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run


def answer_graph(send, msg: Run | None, w: int, origin: float, spec: GraphTasks, emulation: Emulation | None,
                 keep_going: bool = False) -> None:
    """The worker as one answer per message (:attr:`~..backends.base.Program.answer`, the Dask
    backend): each ``Run`` as :func:`serve_graph` runs it; nothing to say at start."""
    if msg is not None:
        run_task(msg, spec, w, emulation, origin, send, UserCode(), keep_going)


# --- the family, as the backends run it ------------------------------------------------------------
class GraphRun(Program):
    """*spec*'s DAG placed by a mapping balancer; the outcome is ``(values by task index, trace)``."""

    serve = staticmethod(serve_graph)
    answer = staticmethod(answer_graph)
    interruptible = True  # under MPI, Ctrl-C and the user's signal handlers interrupt the task's function

    def __init__(self, spec: GraphTasks, balancer: Mapper, *, emulation: Emulation | None,
                 progress: bool | None, rng, record_decisions: bool = False, return_exceptions: bool = False,
                 on_value: Callable[[int, Any], None] | None = None):
        self.spec, self.balancer, self.rng = spec, balancer, rng
        self.on_value = on_value
        self.record_decisions = record_decisions
        self.return_exceptions = return_exceptions
        self.emulation = emulation
        self.progress = Progress(spec.n_tasks, progress, unit="tasks")
        self.origin = 0.0

    def setup(self, n_workers, origin, shared):
        self.emulation = shared
        self.origin = origin

    def worker_args(self, backend):
        # under MPI each task's function and arguments travel with it: only rank 0's tasks matter
        return (self.spec if backend == "local" else None, self.emulation, self.origin, self.return_exceptions)

    def answer_args(self, backend):
        return (self.spec, self.emulation, self.return_exceptions)  # sent once to every Dask worker: each Run carries only its inputs

    def task_name(self, msg):
        return short_repr(self.spec.keys[msg.task], 60)

    def coordinate(self, transport, backend):
        return coordinate_graph(transport, self.spec, self.balancer, origin=self.origin, emulation=self.emulation,
                                progress=self.progress, rng=self.rng, backend=backend,
                                record_decisions=self.record_decisions, return_exceptions=self.return_exceptions,
                                on_value=self.on_value)

    def sent_to_workers(self):
        s = self.spec
        return [(f"tasks[{short_repr(k, 60)}]", (f, a)) for k, f, a in zip(s.keys, s.fns, s.args)]


def run_graph(spec: GraphTasks, balancer: Mapper, *, backend: str = "local", workers: int | None = None,
              emulation: Emulation | None = None, progress: bool | None = None, rng=None,
              start_method: str | None = None, record_decisions: bool = False, client=None,
              return_exceptions: bool = False,
              on_value: Callable[[int, Any], None] | None = None) -> tuple[list, Trace]:
    """The graph family's runner: every task of *spec* on *backend*; ``(values by task index, trace)``.

    *balancer* is a resolved mapping balancer (static or online); *workers* None means the usable
    CPUs (local), the job's worker ranks (MPI) or the Dask cluster's workers (*client*'s);
    *return_exceptions*: a failed task's exception is its value (the module's docstring); *on_value*:
    :func:`coordinate_graph`'s."""
    if rng is None:
        rng = np.random.default_rng(0)
    run = GraphRun(spec, balancer, emulation=emulation, progress=progress, rng=rng,
                   record_decisions=record_decisions, return_exceptions=return_exceptions, on_value=on_value)
    return execute(run, backend, workers=workers, start_method=start_method, client=client)
