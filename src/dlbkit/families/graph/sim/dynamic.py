"""The task-graph family's ``dynamic`` engine: a DAG run on the kernel while node availability changes.

Tasks become ready as their inputs arrive; each processor runs one task at a time at its speed ×
availability (:func:`dlbkit.sim.costs.finish_time`, compute integrated over availability); a transfer
takes the cost model's time (:meth:`~dlbkit.families.graph.model.costs.GraphCosts.comm`). Two kinds of mapper:

* **a static plan** (any :class:`~dlbkit.families.graph.balancers.base.MappingBalancer`): the plan is asked for once,
  at time 0, and replayed: each processor runs its tasks in the plan's order (without one, in the
  order the evaluator's list rule gives on dedicated nodes), each as soon as its inputs are in and
  the processor is free, non-preemptive. With dedicated or constant availability this is exactly the
  evaluator (:mod:`dlbkit.families.graph.model.evaluate`, order mode), and under any availability it is the
  evaluator's replay of that order (``tests/families/graph/sim/test_graph_dynamic.py`` checks both);
* **an online mapper** (:class:`~dlbkit.families.graph.balancers.base.OnlineMapping`, e.g. ``pd``): the engine keeps
  002 §5.2.4's Global Scheduling Table (a :class:`~dlbkit.families.graph.model.view.GraphOnlineView`) and asks the
  mapper whenever tasks may be placed. *Holds*: a task enters the table when its program arrives (a
  root and the root's successors) or when a predecessor is placed, with one hold per predecessor; a
  predecessor releases it the first time the predecessor receives data (a root: when it is placed;
  002 §5.2.4, §5.4 Phase 2(b), Event 1). So a task is placed before its inputs are computed (one
  level of look-ahead). Each node's local scheduler runs its ready task of highest ``priority``
  (002 §5.3 rule 1: precedence level, shifted per program by §6's rule); with the mapper's
  ``preemptive`` a newly ready task of higher priority preempts a computing one (rule 2; a task
  that is transmitting is not preempted); no time slicing (rule 4). A mapper whose ``local_order``
  is ``"plan"`` (``heft-replan``) gives each placed task a key instead, and a node runs its placed
  tasks in increasing key, waiting for the next one's inputs (as a replayed static plan). Several
  programs: *workload* a list of ``(TaskGraph, arrival time)`` (002 §6).

Cost models (:mod:`dlbkit.families.graph.model.costs`):

* **standard**: a task's block is its execution time; when it ends, each successor's data arrives
  after the transfer time (0 on one machine). A successor not yet placed gets its data when it is
  placed plus the transfer time (the data waits at the sender; the processor is free).
* **thesis** (002 §2.4): a task's block on its processor is receive + compute + transmit, messages
  sent in decreasing precedence level of the receivers, a receiver's input counted as arrived when
  its message starts (as the evaluator, 002 App. A.2). If a successor is not placed when the task
  starts, its block is receive + compute; it then sends its messages in that order as transmit
  blocks queued on its processor at its priority, each up to the next receiver not yet placed,
  where it waits without holding the processor until that receiver is placed (002 §5.3 rule 3, read
  per message: read for the whole block, no message before every receiver is placed, 0 → 1, 0 → 2,
  1 → 2 deadlocks, since 2 is placed only once 1 has received 0's data).

Not built: the one-port contention option (the evaluator's); §8.3.2's neighbourhood GSTs; a decision
time (placing is instantaneous, as the thesis's "real time" PD).

Trace: one interval per stretch a task ran (``first`` = task index, ``t_ask`` = when its inputs were all
in; a preempted task has several, a thesis-model task one more per transmit block that took time);
``meta``: ``assignment``, ``start`` (first stretch), ``finish`` (when it terminated, its messages
sent), ``placed_at``, ``preemptions``, ``programs``. Seeding:
layout ``GRAPH`` (balancer, availability), as the static engine, so a static plan meets the same
availability on both engines.
"""

from __future__ import annotations

import heapq
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.graph.balancers import decide
from dlbkit.families.graph.balancers.base import MappingBalancer, OnlineMapping
from dlbkit.families.graph.model.costs import costs_for, critical_path_bound, upward_rank
from dlbkit.families.graph.model.evaluate import plan_order, send_order
from dlbkit.families.graph.model.gst import Table
from dlbkit.families.graph.model.view import GraphOnlineView
from dlbkit.families.graph.model.workload import TaskGraph, recorded_makespan
from dlbkit.model import check
from dlbkit.model.platform import Platform
from dlbkit.families.graph.model.seeding import GRAPH
from dlbkit.model.seeding import streams
from dlbkit.model.trace import Trace
from dlbkit.families.graph.sim.options import GraphDynamicOptions
from dlbkit.sim.costs import finish_time
from dlbkit.sim.kernel import NORMAL, Kernel
from dlbkit.sim.progress import ticker
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_graph_dynamic", "programs_of", "MAX_PROGRAMS"]

#: the most programs one run may hold (a bound checked before any work, as the other size limits)
MAX_PROGRAMS = 10_000
#: work left under this (seconds at full availability) is none: a block is not preempted for it
_EPS = 1e-12


def programs_of(workload: Any) -> tuple[TaskGraph, list[int], list[float]]:
    """One TaskGraph for *workload* (a TaskGraph, or a list of ``(TaskGraph, arrival time)``), the
    program of each task and each program's arrival. Several programs are merged into one graph
    whose ids are ``"k.id"`` (k = the program's index). Bad input is a ConfigError naming the entry."""
    if isinstance(workload, TaskGraph):
        return workload, [0] * workload.n_tasks, [0.0]
    if not isinstance(workload, (list, tuple)) or not workload:
        raise ConfigError("workload", type(workload).__name__,
                          "a TaskGraph or a non-empty list of (TaskGraph, arrival time) pairs (002 §6)")
    if len(workload) > MAX_PROGRAMS:
        raise ConfigError("workload", f"{len(workload)} programs", f"at most {MAX_PROGRAMS}")
    graphs, arrivals = [], []
    for k, item in enumerate(workload):
        if not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], TaskGraph):
            raise ConfigError(f"workload[{k}]", repr(item)[:60], "a (TaskGraph, arrival time) pair")
        graphs.append(item[0])
        arrivals.append(check.number(item[1], f"workload[{k}] arrival time", lo=0.0))
    tables = {g.costs is not None for g in graphs}
    if len(tables) > 1:
        raise ConfigError("workload", "programs with loads and programs with cost tables",
                          "programs of one kind (all loads or all cost tables)")
    if len(graphs) == 1:
        return graphs[0], [0] * graphs[0].n_tasks, arrivals
    ids, loads, costs, edges, prog = [], [], [], [], []
    for k, g in enumerate(graphs):
        ids += [f"{k}.{x}" for x in g.ids]
        prog += [k] * g.n_tasks
        if g.costs is not None:
            costs += [list(r) for r in g.costs]
        else:
            loads += list(g.loads)
        edges += [(f"{k}.{s}", f"{k}.{d}", data) for s, d, data in g.edges]
    merged = TaskGraph(tuple(ids), loads=None if costs else tuple(loads), costs=tuple(map(tuple, costs)) if costs
                       else None, edges=tuple(edges), name="+".join(g.name for g in graphs))
    return merged, prog, arrivals


def simulate_graph_dynamic(platform: Platform | int, workload: Any, balancer: MappingBalancer | OnlineMapping, *,
                           seed: Any = 0, options: GraphDynamicOptions | None = None, **kwargs: Any) -> Trace:
    """Run *workload* (a TaskGraph, or a list of ``(TaskGraph, arrival)`` for an online mapper) on
    *platform* (a Platform, or a processor count) under *balancer*: a static plan replayed, or an
    online mapper asked as tasks become placeable (module docstring). Returns the run's Trace.
    *progress* ``(done, total)``: tasks finished of all tasks, reported on completions
    (:mod:`dlbkit.sim.progress`). The options are a
    :class:`~dlbkit.families.graph.sim.options.GraphDynamicOptions` (*options*), or its fields as keywords
    (*cost_model*, *record_decisions*, *progress*)."""
    o = GraphDynamicOptions.of(options, kwargs, "simulate_graph_dynamic")
    cost_model = o.cost_model
    if not isinstance(balancer, (MappingBalancer, OnlineMapping)):
        raise ConfigError("balancer", type(balancer).__name__, "a mapping balancer (static plan or online)")
    graph, prog, arrivals = programs_of(workload)
    online = isinstance(balancer, OnlineMapping)
    if not online and len(arrivals) > 1:
        raise ConfigError("workload", f"{len(arrivals)} programs", f"one TaskGraph for the static mapper "
                          f"{balancer.name!r} (staggered programs need an online mapper such as 'pd')")
    tick = ticker(o.progress)
    costs = costs_for(graph, platform, cost_model)
    st = streams(seed, GRAPH)
    return _Run(platform, graph, prog, arrivals, costs, balancer, online, st, seed, o.record_decisions, tick).run()


class _Run:
    """One run's state and its kernel handlers (one instance per call)."""

    def __init__(self, platform, graph, prog, arrivals, costs, balancer, online, st, seed, record, tick=None):
        self.g, self.costs, self.b, self.online = graph, costs, balancer, online
        n, m = graph.n_tasks, costs.n_nodes
        self.n, self.m = n, m
        self.prog, self.arrivals = prog, arrivals
        self.thesis = costs.kind == "thesis"
        self.prec = upward_rank(costs)
        mp = [float("-inf")] * len(arrivals)
        for i in range(n):
            mp[prog[i]] = max(mp[prog[i]], self.prec[i])
        # 002 §6: P1's precedence factors shifted by (t2 + mp_P2 − r) when P2 arrives: net prec − mp − arrival
        self.priority = [self.prec[i] - mp[prog[i]] - arrivals[prog[i]] for i in range(n)]
        self.sends = send_order(costs, self.prec)  # ascending prec: accumulated from the last message
        self.tr = Trace(n_nodes=m, node_of=list(costs.host), balancer=balancer.name,
                        seed=seed if isinstance(seed, int) else None, family="graph")
        self.record = self.tr.decisions if record else None
        self.prof = None
        if isinstance(platform, Platform):
            rng = st.rng("availability")
            per_node = platform.realise_availability(rng)
            prof = [per_node[h] for h in costs.host]
            self.tr.availability = prof
            if not all(pr.constant == 1.0 for pr in prof):
                self.prof = prof
                self.rate = [pr.constant or 0.0 for pr in prof]
        self.view = GraphOnlineView(m, costs, priority=self.priority) if online else None
        self.table = Table(self.view) if online else None  # the GST's holds rule, shared with real runs
        if online:
            self._measure(0.0)
        from dlbkit.families.graph.model.view import GraphView
        balancer.start(self.view if online else GraphView(m, costs), st.rng("balancer"))
        self.k = Kernel(tolerance=SIMULTANEITY_TOLERANCE)
        self.placed = self.view.placed if online else [-1] * n
        self.missing = [len(p) for p in graph.preds]
        self.ready_t = [0.0] * n
        self.done_run = [False] * n  # its compute block ended
        self.wait_send = [False] * n  # thesis: waiting for its next message's receiver to be placed
        self.n_unplaced_succ = [len(s) for s in graph.succs]
        # thesis: each task's messages in the order they are sent, decreasing precedence of the
        # receivers (`sends` reversed); next_msg[i] counts those sent, batch[i] the (first, end) of
        # the ones in i's transmit block now queued or running
        self.outbox = [s[::-1] for s in self.sends]
        self.next_msg = [0] * n
        self.batch: list = [None] * n
        self.start = self.view.start if online else [None] * n  # the view reads the engine's lists
        self.finish = self.view.finish if online else [None] * n
        self.placed_at = [None] * n
        self.free_at = [0.0] * m
        self.running: list = [None] * m  # (block id, task, kind, work, t_resume, send part, priority)
        self.cancelled: set = set()  # ids of preempted blocks (their pending events are void)
        self.block_ids = 0
        self.queue = [[] for _ in range(m)]  # online: (−priority, seq, task, kind, work, send part)
        self.seq = 0
        self.preemptions = 0
        self.finished = 0
        self.tick = tick
        self.next_tick = 1  # completions until the ticker is asked again
        self.load_level = self.view.load_level if online else [0.0] * m
        self.cand = self.table.cand if online else ()
        # local_order "plan": each node runs its placed tasks in the mapper's key order, waiting for the next
        self.plan_mode = online and getattr(balancer, "local_order", "priority") == "plan"
        if self.plan_mode and balancer.preemptive:
            raise ConfigError(f"balancer {balancer.name!r}", "preemptive with local_order 'plan'",
                              "one of the two (a node follows the keys, or preempts by priority)")
        self.waiting = [[] for _ in range(m)]  # plan mode: (key, task) of placed tasks not started, a heap
        self.ready_run = [{} for _ in range(m)]  # plan mode: task → (work, send) of its ready run block
        self.stalls = 0  # plan mode: times every node waited for a task that could not come (see _unstall)

    # ---- time and work ----------------------------------------------------------------------
    def _finish(self, p: int, t: float, work: float) -> float:
        if self.prof is None:
            return t + work
        return finish_time(self.prof[p], t, work, 1.0, self.rate[p])

    def _done_work(self, p: int, t0: float, t1: float) -> float:
        if self.prof is None:
            return t1 - t0
        return self.prof[p].capacity(t1) - self.prof[p].capacity(t0)

    def _send_part(self, i: int, p: int) -> float:
        c, a = self.costs, self.placed
        return sum(d * c.per[p][a[j]] for j, d in self.g.succs[i] if c.host[a[j]] != c.host[p])

    def _full_work(self, i: int, p: int) -> float:
        """Thesis model: receive + compute + transmit, summed in the evaluator's order (same last bit)."""
        c, a, hp = self.costs, self.placed, self.costs.host[p]
        w = c.exec[i][p]
        for j, d in self.g.preds[i]:
            if c.host[a[j]] != hp:
                w += d * c.per[a[j]][p]
        for j, d in self.sends[i]:
            if c.host[a[j]] != hp:
                w += d * c.per[p][a[j]]
        return w

    def _recv_part(self, i: int, p: int) -> float:
        c, a = self.costs, self.placed
        return sum(d * c.per[a[j]][p] for j, d in self.g.preds[i] if c.host[a[j]] != c.host[p])

    # ---- the run --------------------------------------------------------------------------------
    def run(self) -> Trace:
        if self.tick is not None:
            self.tick(0, self.n)
        if self.online:
            for x, t in enumerate(self.arrivals):
                self.k.schedule(t, self.on_arrival, x, priority=NORMAL, rank=x)
        else:
            self._replay_plan()
        self.k.run()
        while self.plan_mode and self.finished != self.n and self._unstall(self.k.now):
            self.k.run()
        if self.finished != self.n:
            left = [self.g.ids[i] for i in range(self.n) if self.finish[i] is None][:5]
            raise ConfigError(f"balancer {self.b.name!r}", f"{self.n - self.finished} tasks never finished "
                              f"(e.g. {left})", "a mapper that places every task it is offered")
        tr = self._trace()
        if self.tick is not None:
            self.tick.finish(self.n)
        return tr

    def _replay_plan(self) -> None:
        from dlbkit.families.graph.model.view import GraphView
        view = GraphView(self.m, self.costs)
        plan = decide.plan(self.b, view, self.record)
        order = plan_order(self.costs, plan.assignment, plan.order)
        self.seqs = [[] for _ in range(self.m)]
        for i in order:
            self.seqs[plan.assignment[i]].append(i)
        self.nxt = [0] * self.m
        self.n_unplaced_succ = [0] * self.n
        for i in range(self.n):
            self.placed[i] = plan.assignment[i]
            self.placed_at[i] = 0.0
            self.load_level[plan.assignment[i]] += self.costs.exec[i][plan.assignment[i]]
        self.tr.meta["order"] = list(order)
        self.tr.meta["plan_info"] = dict(plan.info or {})
        for i in range(self.n):
            if not self.g.preds[i]:
                self.k.schedule(0.0, self.on_data, i, 0.0, -1)

    def on_arrival(self, t: float, x: int) -> None:
        """A program arrives: its roots (zero holds) and their successors enter the table (Phase 1)."""
        g = self.g
        self.table.arrive([i for i in range(self.n) if self.prog[i] == x and not g.preds[i]])
        self._decide(t)

    def _measure(self, t: float) -> None:
        """The view's ``measured_speed``: each processor's speed × its availability now (a monitor's
        reading at *t*; never a later value)."""
        if self.prof is not None:
            sp = self.costs.speeds
            self.view.measured_speed = [sp[p] * self.prof[p].level(t) for p in range(self.m)]

    def _decide(self, t: float) -> None:
        v = self.view
        if self.cand:
            self._measure(t)
        while self.cand:  # the view's candidates: the table's own, kept as it changes
            v.time = t
            pairs = decide.online_place(self.b, v, self.record)
            if not pairs:
                return
            for i, p, *key in pairs:
                if key:
                    heapq.heappush(self.waiting[p], (key[0], i))
                self._place(t, i, p)

    def _place(self, t: float, i: int, p: int) -> None:
        g, c = self.g, self.costs
        self.placed_at[i] = t
        self.table.place(i, p, c.exec[i][p])  # Phase 3(a); a root releases its successors (Phase 2(b))
        self.tr.meta.setdefault("placements", []).append((t, i, p))
        for q, d in g.preds[i]:
            self.n_unplaced_succ[q] -= 1
            if self.thesis:
                if self.wait_send[q]:  # it transmits now if i was the receiver it waited for
                    self.wait_send[q] = False
                    self._transmit(t, q, self.placed[q])
            elif self.done_run[q]:  # its data waited at the sender
                self.k.schedule(t + c.comm(d, self.placed[q], p), self.on_data, i, t + c.comm(d, self.placed[q], p), -1)
        if not g.preds[i]:
            self.k.schedule(t, self.on_data, i, t, -1)

    def on_data(self, t: float, i: int, when: float, block: int) -> None:
        """An input of task i is in (or, for a root, the task itself is placed)."""
        if block in self.cancelled:
            return
        if when > self.ready_t[i]:
            self.ready_t[i] = when
        if self.g.preds[i]:
            self.missing[i] -= 1
            if self.online:
                self.table.first_data(i)  # Event 1: the first message received releases the successors
        if self.missing[i] > 0:
            if self.online:
                self._decide(t)
            return
        p = self.placed[i]
        if self.online:
            self.table.activate(i)
            work = self.costs.exec[i][p] + (self._recv_part(i, p) if self.thesis else 0.0)
            self._enqueue(t, p, i, "run", work, 0.0)
            self._decide(t)
        else:
            self._dispatch(t, p)

    # ---- local schedulers -----------------------------------------------------------------------
    def _enqueue(self, t: float, p: int, i: int, kind: str, work: float, send: float) -> None:
        """Task i's block is ready on p: queue it at i's priority; preempt a computing block of lower
        priority if the mapper is preemptive (002 §5.3 rule 2). Plan mode: a run block waits for its key's turn."""
        if self.plan_mode and kind == "run":
            self.ready_run[p][i] = (work, send)
            self._dispatch(t, p)
            return
        self.seq += 1
        heapq.heappush(self.queue[p], (-self.priority[i], self.seq, i, kind, work, send))
        r = self.running[p]
        if r is not None and self.b.preemptive and self.priority[i] > r[6]:
            bid, j, rkind, rwork, t0, rsend, _ = r
            left = rwork - self._done_work(p, t0, t)
            if left > rsend + _EPS:  # computing, not transmitting
                self.cancelled.add(bid)
                self.running[p] = None
                self.free_at[p] = t
                if t > t0:
                    self.preemptions += 1
                    self._stretch(p, j, t0, t)
                elif self.start[j] == t0:
                    # displaced at the instant it started (placements at one instant come one at a
                    # time): it did nothing, so it has not started and was not preempted — no empty
                    # stretch, no count; the timing is the same either way
                    self.start[j] = None
                self.seq += 1
                heapq.heappush(self.queue[p], (-self.priority[j], self.seq, j, rkind, left, rsend))
        self._dispatch(t, p)

    def _dispatch(self, t: float, p: int) -> None:
        """Start p's next block if p is free: the ready block of highest priority (online), or the
        plan's next task once its inputs are in (a static plan; an online mapper's ``local_order``
        "plan": its placed task of least key, a started task's transmit block first)."""
        if self.running[p] is not None:
            return
        if self.online:
            if self.queue[p]:
                _, _, i, kind, work, send = heapq.heappop(self.queue[p])
            elif self.plan_mode and self.waiting[p] and self.waiting[p][0][1] in self.ready_run[p]:
                _, i = heapq.heappop(self.waiting[p])
                kind = "run"
                work, send = self.ready_run[p].pop(i)
            else:
                return
        else:
            k = self.nxt[p]
            if k >= len(self.seqs[p]):
                return
            i = self.seqs[p][k]
            if self.missing[i] > 0:
                return
            self.nxt[p] = k + 1
            kind, work, send = "run", self.costs.exec[i][p] + (self._recv_part(i, p) if self.thesis else 0.0), 0.0
        self._begin(t, p, i, kind, work, send)

    def _begin(self, t: float, p: int, i: int, kind: str, work: float, send: float) -> None:
        t0 = max(t, self.free_at[p], self.ready_t[i])
        if self.thesis and kind == "run" and self.n_unplaced_succ[i] == 0:
            send = self._send_part(i, p)  # every receiver placed: the block transmits too
            work = self._full_work(i, p) if self.start[i] is None else work + send
            kind = "full"
            self.batch[i] = (0, len(self.sends[i]))
        self._start_block(t0, p, i, kind, work, send)

    def _transmit(self, t: float, i: int, p: int) -> None:
        """Thesis, 002 §5.3 rule 3 read per message: task i, computed, sends its next messages in
        decreasing precedence of the receivers, as one transmit block queued at its priority, up to
        the first receiver not yet placed, where it waits without holding the processor; it
        terminates with its last message. (Waiting for every receiver before sending any deadlocks:
        0 → 1, 0 → 2, 1 → 2 on one node, where 2 is placed only once 1 has received 0's data.)"""
        out, k = self.outbox[i], self.next_msg[i]
        n_out = len(out)
        if k == n_out:
            self._terminate(t, i, p)
            return
        h = k
        while h < n_out and self.placed[out[h][0]] >= 0:
            h += 1
        if h == k:
            self.wait_send[i] = True  # rule 3: wait, the processor free, until the receiver is placed
            return
        self.batch[i] = (k, h)
        if k == 0 and h == n_out:  # every message: the sum as the evaluator's (same last bit)
            send = self._send_part(i, p)
        else:
            c, a, hp = self.costs, self.placed, self.costs.host[p]
            send = sum(d * c.per[p][a[j]] for j, d in out[k:h] if c.host[a[j]] != hp)
        self._enqueue(t, p, i, "send", send, send)

    def _unstall(self, t: float) -> bool:
        """Plan mode, nothing left to happen and tasks unfinished: every node waits for its next planned
        task, which waits (under the thesis model, 002 §5.3 rule 3) for a transmission that waits for
        a placement that waits for a task queued behind it. Each idle node then runs its ready task of
        least key now (the wait is kept as long as anything else can happen). False if none is ready."""
        started = False
        for p in range(self.m):
            if self.running[p] is None and self.ready_run[p]:
                heap = self.waiting[p]
                k = min((n for n, (_, i) in enumerate(heap) if i in self.ready_run[p]), key=heap.__getitem__)
                _, i = heap.pop(k)
                heapq.heapify(heap)
                work, send = self.ready_run[p].pop(i)
                self._begin(t, p, i, "run", work, send)
                started = True
        self.stalls += started
        return started

    def _start_block(self, t0: float, p: int, i: int, kind: str, work: float, send: float) -> None:
        self.block_ids += 1
        bid = self.block_ids
        f = self._finish(p, t0, work)
        self.running[p] = (bid, i, kind, work, t0, send, self.priority[i])
        if self.start[i] is None:
            self.start[i] = t0
        self.k.schedule(f, self.on_end, p, bid)
        if kind in ("full", "send"):  # thesis: each receiver's input counts from its message's start
            c, a, hp = self.costs, self.placed, self.costs.host[p]
            csum = 0.0
            k, h = self.batch[i]
            for j, d in reversed(self.outbox[i][k:h]):  # the block's messages, the last sent first
                if c.host[a[j]] != hp:
                    csum += d * c.per[p][a[j]]
                when = f - csum
                self.k.schedule(max(when, t0), self.on_data, j, when, bid)

    def _stretch(self, p: int, i: int, t0: float, t1: float) -> None:
        self.tr.add_interval(p, i, 1, self.ready_t[i], t0, t1)

    def on_end(self, t: float, p: int, bid: int) -> None:
        r = self.running[p]
        if r is None or r[0] != bid:
            return  # a preempted block's old end
        _, i, kind, work, t0, send, _ = r
        self.running[p] = None
        self.free_at[p] = t
        if t > t0 or kind != "send":  # a transmit block of no time (data 0, or receivers on this machine) did no work
            self._stretch(p, i, t0, t)
        c = self.costs
        self.done_run[i] = True
        if self.thesis and kind in ("run", "send"):
            if kind == "send":
                self.next_msg[i] = self.batch[i][1]
            self._transmit(t, i, p)  # the next messages, or wait for a receiver, or terminate
        else:
            if kind == "run":  # standard model: data leaves now for every placed successor
                for j, d in self.g.succs[i]:
                    q = self.placed[j]
                    if q >= 0:  # the evaluator's expression, so that times agree to the last bit
                        arr = t if c.host[q] == c.host[p] else t + c.lat[p][q] + d * c.per[p][q]
                        self.k.schedule(arr, self.on_data, j, arr, -1)
            self._terminate(t, i, p)
        self._dispatch(t, p)
        if self.online:
            self._decide(t)

    def _terminate(self, t: float, i: int, p: int) -> None:
        self.finish[i] = t
        self.finished += 1
        if self.tick is not None:
            self.next_tick -= 1
            if self.next_tick == 0:
                self.next_tick = self.tick(self.finished, self.n)
        self.load_level[p] -= self.costs.exec[i][p]
        if self.online:
            self.table.deactivate(i)
            self.view.n_finished = self.finished

    def _trace(self) -> Trace:
        tr, g, c = self.tr, self.g, self.costs
        a = self.placed
        host = c.host
        off = [(i, j, d) for i in range(self.n) for j, d in g.succs[i] if host[a[i]] != host[a[j]]]
        tr.messages = len(off)
        tr.bytes = float(sum(d for _, _, d in off))
        tr.speeds = list(c.speeds)
        tr.end_time = max(self.finish)
        tr.events = self.k.processed
        tr.meta.update({"assignment": list(a), "start": list(self.start), "finish": list(self.finish),
                        "placed_at": list(self.placed_at), "preemptions": self.preemptions,
                        **({"stalls": self.stalls} if self.plan_mode else {}),
                        "cost_model": c.kind, "ids": list(g.ids), "graph": g.name, "engine": "dynamic",
                        "programs": {"program_of": list(self.prog), "arrivals": list(self.arrivals)},
                        "lower_bound": critical_path_bound(c), **recorded_makespan(g)})
        tr.meta.setdefault("order", None)
        return tr
