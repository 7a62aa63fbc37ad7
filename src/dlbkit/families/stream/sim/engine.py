"""The job-stream family's engine: jobs arrive at every node, the node places their tasks, the chosen
nodes serve them first-in, first-out, one task per slot (003's extended supermarket model on a
heterogeneous, non-dedicated platform).

Rules, as handlers on the :class:`~dlbkit.sim.kernel.Kernel`:

* **arrival** of job k at its origin o (times drawn up front by :meth:`Stream.arrivals
  <dlbkit.families.stream.model.workload.Stream.arrivals>`): the engine fills o's :class:`~dlbkit.families.stream.model.view.StreamView`
  (exact information: the true queues, read in place; an information model: what o's table holds,
  :meth:`~dlbkit.info.base.InfoModel.fill`) and asks the balancer where the job's tasks go
  (:func:`dlbkit.families.stream.balancers.decide.place`; a batch is placed on a copy of the queues that the
  balancer updates after each task unless *batch_update* is false). A task placed on another node
  reaches it after the transfer time (:func:`~dlbkit.sim.costs.message_time`: hops × latency +
  *task_bytes* / bandwidth); a task kept at its origin is there at once;
* a task that reaches node j joins its system (``queue[j]`` counts waiting and running tasks);
  if one of j's slots is free it starts, else it waits in j's FIFO queue;
* a task of demand w started at t on node j ends when j's speed × availability has done w units of
  work (:func:`~dlbkit.sim.costs.finish_time`: a constant rate divides, a varying availability is
  integrated exactly); then the slot takes the oldest waiting task. A job is done when its last task is;
* **late binding** (a balancer with ``late_binding`` true, ``batch-sampling``'s Sparrow option, FIFO
  only): the arrival sends a reservation to each node the balancer's ``probes(view, k)`` names; a
  reservation joins the node's queue as an entry; when it reaches a free slot the slot is held while
  the node asks the origin for a task (one latency each way, plus the task's bytes), or is freed by a
  cancel once the job's tasks are all sent (docs/streams.md, "Late binding").

**Hot loop.** The arrival handler inlines :func:`~dlbkit.families.stream.balancers.decide.place` for a single task
without recording (``balancer.place(view)`` and the check that the answer is a node: an answer that
is not a plain int goes to :func:`~dlbkit.families.stream.balancers.decide.checked_node`, which checks it as
:func:`~dlbkit.families.stream.balancers.decide.place` would without asking again; any other case calls the function);
``tests/families/stream/sim/test_stream.py`` compares both paths' traces.

**Fast path.** With exact information, one task per job, every node one slot of rate 1 (speed ×
constant availability) and nominal speed 1 (a job's ideal time is its demand), no transfer time, demands > 0, no queue samples, no trace intervals or
decision records, and the inlined decision, the run goes through :mod:`dlbkit.families.stream.sim._fast` (the
supermarket model's case, ``dlbkit bench supermarket``): the same balancer object places every job
on the same live view; a FIFO slot's departures follow in closed form, so one heap of departure
times replaces the kernel's queue; ties run in the kernel's order. An engine option the loop does not
know must be at its default. ``meta["path"]`` says which ran ("fast", or "kernel (why not)"); a tie
whose kernel order the loop cannot tell (exact ties of a recorded trace) starts the run again on the
kernel. ``tests/families/stream/sim/test_stream_fast.py`` proves the two paths give the same trace and placements.

**Information.** ``info`` None or "exact": deciders read the true queues (``updated_at[j]`` is when
node j's queue last changed). "gossip" and "neighbour": rounds every ``period`` seconds (URGENT
kernel events, so a decision at the instant a message lands sees it), messages delivered after their
transfer time, freshest wins; rounds stop after the last arrival. "periodic" is refused: only its
centre learns the loads, and every node decides here.

**Queue statistics.** The engine integrates the number of tasks in the system over time; the mean
per node is taken between the arrival of job ⌊warmup·J⌋ and the last arrival (the warm-up removes the
start from empty; the drain after the last arrival is excluded). With *samples* > 0 it records every
node's queue at *samples* evenly spaced times up to the last arrival (``series["queue"]``: the plot
of queue length per node over time, and the largest difference between nodes).

**Service** (option *service*). ``"fifo"`` (the default, 003's supermarket model): a node serves one
task per slot, first in, first out, at speed × availability. ``"ps"``: processor sharing, as the
seed's time-shared machines do (§6.3.2.2: a node of 4 CPUs running 7 tasks gives each 4/7 of a CPU):
k tasks on a node of c slots each progress at speed × availability × min(1, c/k), every task starting
service the moment it reaches the node. The engine keeps per node the service each present task has
received (all present tasks receive the same) and one pending departure, the task with the least work
left; a change of k moves that departure (the superseded event is skipped when it comes due).

**Initial loads** (the workload's ``initial``): tasks in each node's system at time 0, served like any
task, belonging to no job; with them the run's ``convergence_time`` is the first time at which the
largest difference between two nodes' queues is at most *converge_maxdiff* (003 §3.4.3.4's
convergence from "some over-loaded queues"; computed from the intervals, so it needs ``record=True``:
NaN if never, without initial loads, or with ``record=False``, and NaN alone does not say which).

Seeding: layout ``STREAM`` (arrivals, availability, balancer, info; the initial tasks' work is drawn
on the arrivals stream after the arrivals).
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections import deque
from typing import Any

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.families.stream.balancers import decide
from dlbkit.families.stream.balancers.base import PlacementBalancer
from dlbkit.families.stream.model.queues import convergence_time
from dlbkit.families.stream.model.view import StreamView
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.info.registry import resolve as resolve_info
from dlbkit.model import check
from dlbkit.model.platform import Platform
from dlbkit.model.seeding import STREAM, streams
from dlbkit.model.topology import complete_neighbours
from dlbkit.model.trace import Trace
from dlbkit.sim.costs import constant_rates, finish_time
from dlbkit.sim.kernel import NORMAL, URGENT, Kernel
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_stream", "INFO_REFUSED", "SERVICES", "CONVERGE_MAXDIFF", "MAX_SERVERS"]

#: the most servers a job stream given as a count (the supermarket model's) may have
MAX_SERVERS = 1_000_000

#: service disciplines of a node: name -> what it does
SERVICES = {"fifo": "one task per slot, first in, first out (the supermarket model)",
            "ps": "processor sharing: k tasks on c slots each at min(1, c/k) of a slot (time-shared machines)"}
#: default convergence threshold: largest queue difference (tasks) counted as converged (003 §3.4.3.4 sets
#: "a certain threshold" without its value; 2 is ours: at most one task each way off the mean on a pair)
CONVERGE_MAXDIFF = 2.0

#: information models that do not fit this family, and why
INFO_REFUSED = {"periodic": "only its centre learns the loads, and in a job stream every node decides "
                            "(use 'gossip' or 'neighbour')"}


def simulate_stream(platform: Platform | int, workload: Stream, balancer: PlacementBalancer, *, seed: Any = 0,
                    info: Any = None, task_bytes: float = 0.0, warmup: float = 0.1, samples: int = 200,
                    batch_update: bool = True, record: bool = True, record_decisions: bool = False,
                    inline: bool = True, service: str = "fifo", converge_maxdiff: float = CONVERGE_MAXDIFF) -> Trace:
    """Run *workload* on *platform* (a Platform, or a node count: identical nodes of speed 1 with one
    slot, full availability and no transfer time, the supermarket model's servers) with the placement
    *balancer*; return the Trace (module docstring). *info*: an information model (name, table or
    object; None: exact). *task_bytes*: bytes a task carries to another node. *warmup*: the share of
    jobs whose arrival opens the queue statistics. *samples*: queue snapshots. *batch_update*: a
    decider counts its own placements within a batch. *record*: one interval per task in the trace
    (off for benchmarks). *inline*: the hot loop's inlined decision (off: always through
    :func:`decide.place`; the two give the same trace). *service*: "fifo" or "ps" (module docstring).
    *converge_maxdiff*: the queue difference at or below which a run started with initial loads has
    converged (``convergence_time`` needs *record* true: with ``record=False`` it is NaN, as for a run
    that never converges)."""
    options = dict(locals())  # the call's arguments, for the fast loop's conditions (_stream_fast.eligible)
    if not isinstance(workload, Stream):
        raise ConfigError("workload", type(workload).__name__, "a Stream")
    if not isinstance(balancer, PlacementBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer), "a placement balancer")
    task_bytes = check.number(task_bytes, "engine.task_bytes", lo=0.0)
    warmup = check.number(warmup, "engine.warmup", lo=0.0, hi=1.0, hi_open=True)
    samples = check.integer(samples, "engine.samples", lo=0, hi=100_000)
    service = check.choice(service, "engine.service", SERVICES)
    converge_maxdiff = check.number(converge_maxdiff, "engine.converge_maxdiff", lo=0.0)
    for name, v in (("batch_update", batch_update), ("record", record), ("record_decisions", record_decisions)):
        if not isinstance(v, bool):
            raise ConfigError(f"engine.{name}", v, "true or false")
    model = resolve_info(info)
    if model.name in INFO_REFUSED:
        raise ConfigError("info.model", model.name, "a model that tells every node the loads: "
                          + INFO_REFUSED[model.name])
    st = streams(seed, STREAM)

    # --- servers -----------------------------------------------------------------------------------
    if isinstance(platform, Platform):
        n = platform.n_nodes
        names = [nd.name for nd in platform.nodes]
        speeds = [float(nd.speed) for nd in platform.nodes]
        slots = [int(nd.cores) for nd in platform.nodes]
        arng = st.rng("availability")
        profiles = platform.realise_availability(arng)
        net = platform.network
        complete = platform.complete
        latency, bandwidth = net.latency, net.bandwidth
        node_of = list(range(n))
        neighbours = platform.neighbours() if not model.exact else None
    else:
        n = check.size(platform, "platform", MAX_SERVERS, "servers of a job stream")
        names = [str(i) for i in range(n)]
        speeds, slots = [1.0] * n, [1] * n
        from dlbkit.model.availability import Constant
        profiles = [Constant().realise()] * n
        complete, latency, bandwidth = True, 0.0, math.inf  # the supermarket servers: messages take no time
        platform = None
        node_of = list(range(n))
        neighbours = complete_neighbours(n) if not model.exact else None
    rates = constant_rates(speeds, profiles)

    def hops(src: int, dst: int) -> float:
        return 1.0 if complete else float(platform.hops_from(src)[dst])

    zero_transfer = latency == 0.0 and task_bytes == 0.0

    arng_ = st.rng("arrivals")
    arr = workload.arrivals(names, arng_)
    J = arr.n_jobs
    # the kernel path's per-job and per-task state (typed arrays its handlers index) is built only when
    # the kernel runs (below, before kernel.run()); the fast loop reads the arrivals' arrays in blocks
    times = origins = widths = firsts = demand = left = done_at = jend = ideal = at_node = started = job_of = None
    launched = None
    T = arr.n_tasks
    # tasks in the nodes' systems at time 0: ids T.., each its own pseudo-job J.. (no response time)
    init_nodes, init_work = workload.initial_tasks(n, arng_)
    I = len(init_nodes)

    # --- state -------------------------------------------------------------------------------------
    q = [0] * n  # tasks in each node's system (waiting + running)
    busy = [0] * n
    waiting = [deque() for _ in range(n)]
    upd = [0.0] * n  # when each queue last changed (exact information's updated_at)
    qmax = [0] * n
    tr = Trace(n_nodes=n, node_of=node_of, balancer=balancer.name, seed=seed if isinstance(seed, int) else None,
               family="stream")
    tnode, tfirst, tcount, task, tstart, tend, tround = (tr.node, tr.first, tr.count, tr.t_ask, tr.t_start, tr.t_end,
                                                         tr.round_of)
    w_index = min(int(warmup * J), J - 1) if J else 0
    snap = {}

    view = StreamView(n, queue=q if model.exact else [0] * n, slots=slots, speeds=speeds,
                      updated_at=upd if model.exact else [0.0] * n)
    balancer.start(view, st.rng("balancer"))
    if not model.exact:
        model.start(n, neighbours, [0] * n, st.rng("info"))
    kernel = Kernel(tolerance=SIMULTANEITY_TOLERANCE)
    schedule = kernel.schedule
    place = balancer.place
    decisions = tr.decisions if record_decisions else None
    fast = inline and decisions is None
    exact_view = model.exact or not balancer.reads_loads

    N = 0  # tasks in the system, all nodes
    area = 0.0  # ∫ N dt up to tlast
    tlast = 0.0
    busy_sum = 0.0  # slot-seconds spent serving
    moved = 0
    moved_bytes = 0.0
    messages = 0  # late binding's probes, requests and replies between nodes
    late = getattr(balancer, "late_binding", False) is True
    if late and service != "fifo":
        raise ConfigError("engine.service", service, f"'fifo' with {balancer.name}'s late binding (a reservation "
                          "holds a slot while it asks for its task)")
    if late and record_decisions:
        raise ConfigError("engine.record_decisions", record_decisions, f"false with {balancer.name}'s late_binding "
                          "(its reservations are not decisions decide.place records)")

    # NOTE: start() is inlined in enqueue() and depart(), the hot loop's two other rules
    def enqueue(t: float, k: int, j: int) -> None:
        nonlocal N, area, tlast
        area += N * (t - tlast)
        tlast = t
        N += 1
        x = q[j] + 1
        q[j] = x
        upd[j] = t
        if x > qmax[j]:
            qmax[j] = x
        at_node[k] = t
        if busy[j] < slots[j]:
            busy[j] += 1
            started[k] = t
            r = rates[j]
            schedule(t + demand[k] / r if r else finish_time(profiles[j], t, demand[k], speeds[j]), depart, k, j)
        else:
            waiting[j].append(k)

    def depart(t: float, k: int, j: int) -> None:
        nonlocal N, area, tlast, busy_sum
        area += N * (t - tlast)
        tlast = t
        N -= 1
        q[j] -= 1
        upd[j] = t
        s = started[k]
        busy_sum += t - s
        if record:
            tnode.append(j)
            tfirst.append(k)
            tcount.append(1)
            task.append(at_node[k])
            tstart.append(s)
            tend.append(t)
            tround.append(-1)
        b = job_of[k]
        r = left[b] - 1
        left[b] = r
        if t > jend[b]:  # a job's tasks may end at one instant in any order within the tolerance
            jend[b] = t
        if not r:
            done_at[b] = jend[b]
        w = waiting[j]
        if w:
            k = w.popleft()
            if k < 0:  # a late-binding reservation: it holds the slot and asks its origin for a task
                claim(t, -k - 1, j)
                return
            started[k] = t
            r = rates[j]
            schedule(t + demand[k] / r if r else finish_time(profiles[j], t, demand[k], speeds[j]), depart, k, j)
        else:
            busy[j] -= 1

    # --- late binding (Sparrow §3.3): reservations queue like tasks; the first to reach a slot gets one ---
    res_job = array("q")  # per reservation: its job
    res_at = array("d")  # per reservation: when it reached its node (its task's t_ask: the wait is its)

    def reserve(t: float, r: int, j: int) -> None:
        res_at[r] = t
        x = q[j] + 1  # a reservation is an entry of the node's queue, as a probe sees it
        q[j] = x
        upd[j] = t
        if x > qmax[j]:
            qmax[j] = x
        if busy[j] < slots[j]:
            busy[j] += 1
            claim(t, r, j)
        else:
            waiting[j].append(-r - 1)

    def claim(t: float, r: int, j: int) -> None:
        nonlocal messages
        o = origins[res_job[r]]
        if o != j:  # a message between two nodes counts whether or not it takes time
            messages += 1
        if o == j or latency == 0.0:
            request(t, r, j)
        else:
            schedule(t + hops(j, o) * latency, request, r, j)

    def request(t: float, r: int, j: int) -> None:
        """At the origin: the job's next task goes to the reservation's node, or a cancel if none is left."""
        nonlocal moved, moved_bytes, messages
        b = res_job[r]
        o = origins[b]
        k = launched[b]
        if k < firsts[b] + widths[b]:
            launched[b] = k + 1
            x = demand[k] / speeds[j]
            if x > ideal[b]:
                ideal[b] = x
            if j == o or zero_transfer:
                bind(t, k, j, r)
            else:  # a task moved (counted in the trace's messages as every moved task)
                moved += 1
                moved_bytes += task_bytes
                schedule(t + hops(o, j) * latency + task_bytes / bandwidth, bind, k, j, r)
        else:
            if j != o:
                messages += 1
            if j == o or latency == 0.0:
                cancel(t, j)
            else:
                schedule(t + hops(o, j) * latency, cancel, j)

    def bind(t: float, k: int, j: int, r: int) -> None:
        """Task k starts on the slot reservation r held (the queue keeps its entry: reservation → task).
        The task counts in N (queue_mean) from its t_ask, the time its reservation reached the node, as a
        task without late binding counts from reaching its node: only now is it known which reservation
        it took, so the time since then is added to the area (and to a statistics snapshot taken since)."""
        nonlocal N, area, tlast
        a = res_at[r]
        area += N * (t - tlast) + (t - a)
        tlast = t
        N += 1
        for key, (sa, ts) in snap.items():
            if ts > a:  # taken while this task was in the system but not yet counted
                snap[key] = (sa + ts - a, ts)
        at_node[k] = a
        started[k] = t
        r = rates[j]
        schedule(t + demand[k] / r if r else finish_time(profiles[j], t, demand[k], speeds[j]), depart, k, j)

    def cancel(t: float, j: int) -> None:
        """The job had no task left: the reservation leaves the queue and frees its slot."""
        q[j] -= 1
        upd[j] = t
        w = waiting[j]
        if w:
            k = w.popleft()
            if k < 0:
                claim(t, -k - 1, j)
                return
            started[k] = t
            r = rates[j]
            schedule(t + demand[k] / r if r else finish_time(profiles[j], t, demand[k], speeds[j]), depart, k, j)
        else:
            busy[j] -= 1

    if service == "ps":  # processor sharing replaces the two FIFO rules (module docstring)
        import heapq
        got = [0.0] * n  # service each task present on node j has received (work units)
        got_at = [0.0] * n  # when got[j] was brought up to date
        ahead = [[] for _ in range(n)]  # heap of (got[j] at which the task is done, task)
        version = [0] * n  # the pending departure of node j is the one scheduled with version[j]

        def ps_catch_up(t: float, j: int) -> None:
            nonlocal busy_sum
            k = len(ahead[j])
            if k and t > got_at[j]:
                c = slots[j]
                r = rates[j]
                a0 = got_at[j]
                work = r * (t - a0) if r else speeds[j] * (profiles[j].capacity(t) - profiles[j].capacity(a0))
                got[j] += work * (c / k if k > c else 1.0)
                busy_sum += (t - got_at[j]) * (c if k > c else k)
            got_at[j] = t

        def ps_next(t: float, j: int) -> None:
            version[j] += 1
            h = ahead[j]
            if h:
                k, c = len(h), slots[j]
                left_ = max(h[0][0] - got[j], 0.0) / (c / k if k > c else 1.0)
                r = rates[j]
                schedule(t + left_ / r if r else finish_time(profiles[j], t, left_, speeds[j]), depart, j, version[j])

        def enqueue(t: float, k: int, j: int) -> None:  # noqa: F811
            nonlocal N, area, tlast
            area += N * (t - tlast)
            tlast = t
            N += 1
            x = q[j] + 1
            q[j] = x
            upd[j] = t
            if x > qmax[j]:
                qmax[j] = x
            at_node[k] = t
            started[k] = t
            ps_catch_up(t, j)
            heapq.heappush(ahead[j], (got[j] + demand[k], k))
            ps_next(t, j)

        def depart(t: float, j: int, v: int) -> None:  # noqa: F811
            nonlocal N, area, tlast
            if v != version[j]:
                return  # superseded: the node's set of tasks changed since it was scheduled
            ps_catch_up(t, j)
            _, k = heapq.heappop(ahead[j])
            area += N * (t - tlast)
            tlast = t
            N -= 1
            q[j] -= 1
            upd[j] = t
            if record:
                tnode.append(j)
                tfirst.append(k)
                tcount.append(1)
                task.append(at_node[k])
                tstart.append(started[k])
                tend.append(t)
                tround.append(-1)
            b = job_of[k]
            r = left[b] - 1
            left[b] = r
            if t > jend[b]:
                jend[b] = t
            if not r:
                done_at[b] = jend[b]
            ps_next(t, j)

    def reach(t: float, k: int, j: int) -> None:
        enqueue(t, k, j)

    def arrive(t: float, b: int) -> None:
        nonlocal moved, moved_bytes, messages
        o = origins[b]
        kw = widths[b]
        if b == w_index:
            snap["w"] = (area + N * (t - tlast), t)
        if b == J - 1:
            snap["e"] = (area + N * (t - tlast), t)
        else:
            schedule(times[b + 1], arrive, b + 1)
        view.time = t
        view.node = o
        if not exact_view:
            model.fill(o, t, q[o], view.queue, view.updated_at, integer=True)
        if late:
            for j in _probes(balancer, view, kw):
                r = len(res_job)
                res_job.append(b)
                res_at.append(t)
                if j != o:
                    messages += 1
                if j == o or latency == 0.0:
                    reserve(t, r, j)
                else:
                    schedule(t + hops(o, j) * latency, reserve, r, j)
            return
        if fast and kw == 1:
            j = place(view)
            if j.__class__ is not int or not 0 <= j < n:
                j = decide.checked_node(balancer, view, j)  # raises the checked error (or accepts a numpy int)
            nodes = (j,)
        else:
            nodes = decide.place(balancer, view, kw, batch_update, decisions)
        k = firsts[b]
        worst = ideal[b]
        for j in nodes:
            x = demand[k] / speeds[j]
            if x > worst:
                worst = x
            if j == o or zero_transfer:
                enqueue(t, k, j)
            else:
                moved += 1
                moved_bytes += task_bytes
                schedule(t + hops(o, j) * latency + task_bytes / bandwidth, reach, k, j)
            k += 1
        ideal[b] = worst

    # --- information rounds and queue samples --------------------------------------------------------
    t_last = float(arr.time[-1]) if J else 0.0
    t_first_w = float(arr.time[w_index]) if J else 0.0  # the warm-up job's arrival (the statistics' start)

    def deliver(t: float, msg) -> None:
        model.deliver(msg)

    def info_round(t: float) -> None:
        for m in model.round(t, q):
            schedule(t + hops(m.src, m.dst) * latency + m.bytes / bandwidth, deliver, m, priority=URGENT)
        model.check_budget(t)
        if t + model.interval <= t_last:
            schedule(t + model.interval, info_round, priority=URGENT)

    series: list[list[int]] = []
    sample_t: list[float] = []

    def sample(t: float, k: int) -> None:
        series.append(list(q))
        sample_t.append(t)
        if k + 1 < samples:
            schedule(t_last * (k + 1) / (samples - 1) if samples > 1 else t_last, sample, k + 1, priority=URGENT)

    # the supermarket model's case runs in a specialised loop (module docstring, "Fast path")
    # initial loads are the workload's, not an engine option, so the loop's option check cannot see them
    why = ("no jobs" if not J else "initial loads" if I else "late binding" if late else
           _stream_fast.eligible(simulate_stream, options, exact=model.exact, slots=slots, rates=rates,
                                 speeds=speeds, widths=arr.width, demands=arr.demand, zero_transfer=zero_transfer))
    fr = _stream_fast.run(balancer, view, arr.time, arr.origin, arr.demand, q, upd, qmax, kernel.tolerance,
                          w_index) if why is None else None
    if fr is not None:
        area, tlast, busy_sum, done_at = fr.area, fr.tlast, fr.busy, fr.done
        snap.update(w=(fr.snap_w, t_first_w), e=(fr.snap_e, t_last))
        ideal = np.where(arr.demand > 0.0, arr.demand, 0.0)  # the arrival rule's max(0, demand / speed 1)
        kernel.processed = fr.events
    else:
        if why is None:  # a tie the loop cannot order: start again on the kernel
            why = "a tie the fast loop cannot order"
            q[:], upd[:], qmax[:] = [0] * n, [0.0] * n, [0] * n
            balancer.start(view, st.rng("balancer"))
        # the kernel path's state, per job and per task, that its handlers index (through the closures'
        # cells): typed arrays of 8-byte numbers (array.array: an item reads back as the Python float or
        # int a list would hold, so the run is the same; a list would cost 8 bytes more per item, and
        # 24-32 more for each distinct float or int object)
        times, origins, widths, firsts, demand = (_typed(a) for a in (arr.time, arr.origin, arr.width, arr.first,
                                                                       arr.demand))
        left = widths + array("q", [1]) * I  # tasks of each job not done yet
        done_at = array("d", [math.nan]) * (J + I)
        jend = array("d", [0.0]) * (J + I)
        ideal = array("d", [0.0]) * J  # per job: its longest task's time on its node at full availability
        at_node = array("d", [0.0]) * (T + I)  # when each task reached its node
        started = array("d", [0.0]) * (T + I)
        job_of = _typed(np.repeat(np.arange(J, dtype=np.int64), arr.width))
        launched = firsts[:]  # late binding, per job: the next task not yet sent to a reservation
        if I:
            demand.extend(init_work)
            job_of.extend(range(J, J + I))
        for i, j in enumerate(init_nodes):  # already in the nodes' systems when the run starts
            enqueue(0.0, T + i, j)
        if J:
            schedule(times[0], arrive, 0, priority=NORMAL)
            if not model.exact and model.interval <= t_last:
                schedule(model.interval, info_round, priority=URGENT)
            if samples:
                schedule(0.0, sample, 0, priority=URGENT)
        kernel.run()

    # --- the trace ---------------------------------------------------------------------------------------
    end = tlast
    tr.end_time = end
    tr.events = kernel.processed
    tr.speeds = speeds
    tr.availability = profiles
    tr.total_work, tr.max_item = _sum_max(arr.demand, init_work)
    tr.messages = moved + messages
    tr.bytes = moved_bytes
    if not model.exact:
        tr.info_messages = float(model.messages_)
        tr.info_bytes = float(model.bytes_)
        tr.info_age_mean = float(model.age_mean)
    else:
        tr.info_messages, tr.info_bytes, tr.info_age_mean = 0.0, 0.0, 0.0
    tr.meta["info_freshness"] = 0.0 if model.exact else float(model.freshness_mean)  # ε, sampled at the rounds
    (aw, tw), (ae, te) = snap.get("w", (0.0, 0.0)), snap.get("e", (0.0, 0.0))
    tr.series.update({"job_time": arr.time, "job_origin": arr.origin, "job_width": arr.width, "job_first": arr.first,
                      "job_done": np.asarray(done_at[:J]), "job_ideal": np.asarray(ideal), "demand": arr.demand,
                      "queue_max": np.asarray(qmax)})
    if samples:
        tr.series["queue"] = np.asarray(series, dtype=np.int64).reshape(len(series), n)
        tr.series["queue_time"] = np.asarray(sample_t)
    tr.meta.update({"warmup_job": w_index, "queue_mean": (ae - aw) / (te - tw) / n if te > tw else math.nan,
                    "busy_time": busy_sum, "slots": list(slots), "info": model.name, "workload": workload.name,
                    "tasks_moved": moved, "path": "fast" if fr is not None else f"kernel ({why})"})
    if I or service != "fifo":
        tr.meta.update({"service": service, "initial_tasks": I, "converge_maxdiff": converge_maxdiff,
                        "convergence_time": convergence_time(tr, converge_maxdiff) if I and record else math.nan})
    # The handlers reach one another through their closure cells (arrive schedules arrive, depart
    # calls claim, claim request, ...): reference cycles that would keep every list of the run alive
    # after it returns, until the cyclic collector's next full pass. On long runs that piled up:
    # `reproduce nezha`'s four 10^7-job runs reached 14 GB. Emptying the cells that hold handlers
    # breaks the cycles, so the run's state goes when the caller drops the trace (tests/families/stream/sim/test_stream_memory.py).
    hops = enqueue = depart = reserve = claim = request = bind = cancel = reach = arrive = None
    deliver = info_round = sample = ps_catch_up = ps_next = None
    return tr


def _typed(a: np.ndarray) -> array:
    """A float64 or int64 array as an ``array.array`` ("d" or "q") of the same items (one copy)."""
    out = array("d" if a.dtype.kind == "f" else "q")
    out.frombytes(np.ascontiguousarray(a, dtype=np.float64 if a.dtype.kind == "f" else np.int64).data.cast("B"))
    return out


def _sum_max(a: np.ndarray, more: list, size: int = 1 << 15) -> tuple[float, float]:
    """``(float(sum(x)), float(max(x)))`` of the list x = ``a.tolist() + more``, bit for bit (a float
    total depends on the order of the additions, and from Python 3.12 on sum()'s compensation over the
    whole iterable: so one sum() over the same items in the same order), without that list: *a* is read
    *size* items at a time. (0.0, 0.0) for no items."""
    if not len(a) and not more:
        return 0.0, 0.0

    def items():
        return itertools.chain.from_iterable(itertools.chain((a[i:i + size].tolist() for i in range(0, len(a), size)),
                                                             [more]))
    return float(sum(items())), float(max(items()))


def _probes(balancer, view, k: int) -> list[int]:
    """The nodes a late-binding balancer reserves on for a job of *k* tasks, checked: at least *k*, each a
    node index (a reservation per entry)."""
    nodes = list(balancer.probes(view, k))
    n = view.n_nodes
    if len(nodes) < k or not all(isinstance(j, (int, np.integer)) and 0 <= j < n for j in nodes):
        raise ConfigError(f"{balancer.name}.probes' answer for a job of {k} task(s)", nodes,
                          f"at least {k} node indices in [0, {n - 1}]")
    return [int(j) for j in nodes]
