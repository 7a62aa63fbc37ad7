"""One run of the job-stream engine (:func:`dlbkit.families.stream.sim.engine.simulate_stream`, whose docstring states
the rules): :class:`StreamRun` holds the run's state and has one method per rule, the kernel's event
handlers; the service discipline's rules are a strategy (:mod:`dlbkit.families.stream.sim._service`).

**Speed.** The handlers read the run's state as attributes where the closures they replace read
cells: the class has ``__slots__`` (CPython reads and writes a slot with one specialised
instruction, whatever the number of attributes), the handlers
call ``self.kernel.schedule`` (a method looked up on a slotted object: a specialised call, where a
bound method kept in a slot would take the generic lookup on every call), and the FIFO discipline's
two rules inline the bookkeeping they share with processor sharing (:mod:`dlbkit.families.stream.sim._service`).
The kernel path still runs a few per cent more instructions per job than the closures did (a bound
method per event, the run passed to the discipline).
"""

from __future__ import annotations

import itertools
import math
from array import array

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.families.stream.balancers import decide
from dlbkit.families.stream.model.queues import convergence_time
from dlbkit.families.stream.model.view import StreamView
from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.families.stream.sim._service import DISCIPLINES
from dlbkit.model.availability import Constant
from dlbkit.model.platform import Platform
from dlbkit.model.topology import complete_neighbours
from dlbkit.model.trace import Trace
from dlbkit.sim.costs import constant_rates
from dlbkit.sim.kernel import NORMAL, URGENT, Kernel

__all__ = ["StreamRun"]


class StreamRun:
    """One run of *workload* on *platform* (a Platform, or a checked node count: the supermarket
    model's servers) with the placement *balancer* and the information *model* (resolved), drawing
    from the named random streams *st* (layout ``STREAM``); *options* are
    :func:`~dlbkit.families.stream.sim.engine.simulate_stream`'s checked options (a
    :class:`~dlbkit.families.stream.sim.options.StreamOptions`), *tolerance* the kernel's. Build it, then
    :meth:`run` returns the Trace."""

    __slots__ = (
        # the servers and the network
        "n", "names", "speeds", "slots", "rates", "profiles", "platform", "complete", "latency", "bandwidth",
        "neighbours", "task_bytes", "zero_transfer",
        # the deciders and the options
        "balancer", "model", "view", "exact_view", "inline", "batch_update", "decisions", "late",
        "record", "samples", "service", "converge_maxdiff", "st",
        # the arrivals
        "workload", "arr", "J", "T", "I", "init_nodes", "init_work", "w_index", "t_last", "t_first_w",
        # the queues and the statistics
        "q", "upd", "qmax", "N", "area", "tlast", "busy_sum", "moved", "moved_bytes", "messages", "snap",
        "queue_samples", "sample_t",
        # the kernel and the trace
        "kernel", "tr", "tnode", "tfirst", "tcount", "task", "tstart", "tend", "tround",
        # the kernel path's per-job and per-task state (built only when the kernel runs: _index)
        "times", "origins", "widths", "firsts", "demand", "left", "done_at", "jend", "ideal", "at_node", "started",
        "job_of", "launched", "res_job", "res_at",
    )

    def __init__(self, platform: Platform | int, workload, balancer, model, st, *, seed, options, tolerance: float):
        o = options
        task_bytes, warmup, samples = float(o.task_bytes), float(o.warmup), int(o.samples)
        service, record_decisions = o.service, o.record_decisions
        self.balancer, self.model, self.st, self.workload = balancer, model, st, workload
        self._servers(platform)
        n = self.n
        self.rates = constant_rates(self.speeds, self.profiles)
        self.task_bytes = task_bytes
        self.zero_transfer = self.latency == 0.0 and task_bytes == 0.0
        self._arrivals(warmup)
        if not model.exact:  # its rounds run up to the last arrival: too many is known now, not after them
            model.check_rounds_until(self.t_last)
        self.q = [0] * n  # tasks in each node's system (waiting + running)
        self.upd = [0.0] * n  # when each queue last changed (exact information's updated_at)
        self.qmax = [0] * n
        self.tr = tr = Trace(n_nodes=n, node_of=list(range(n)), balancer=balancer.name,
                             seed=seed if isinstance(seed, int) else None, family="stream")
        self.tnode, self.tfirst, self.tcount, self.task, self.tstart, self.tend, self.tround = (
            tr.node, tr.first, tr.count, tr.t_ask, tr.t_start, tr.t_end, tr.round_of)
        self.snap = {}  # "w" (the warm-up job's arrival), "e" (the last arrival): (∫ N dt so far, time)
        self.view = view = StreamView(n, queue=self.q if model.exact else [0] * n, slots=self.slots,
                                      speeds=self.speeds, updated_at=self.upd if model.exact else [0.0] * n)
        balancer.start(view, st.rng("balancer"))
        if not model.exact:
            model.start(n, self.neighbours, [0] * n, st.rng("info"))
        self.kernel = Kernel(tolerance=tolerance)
        self.decisions = tr.decisions if record_decisions else None
        self.inline = o.inline and self.decisions is None  # the arrival's inlined decision (module docstring)
        self.exact_view = model.exact or not balancer.reads_loads
        self.batch_update, self.record, self.samples = o.batch_update, o.record, samples
        self.converge_maxdiff = float(o.converge_maxdiff)
        self.N = 0  # tasks in the system, all nodes
        self.area = 0.0  # ∫ N dt up to tlast
        self.tlast = 0.0
        self.busy_sum = 0.0  # slot-seconds spent serving
        self.moved = 0
        self.moved_bytes = 0.0
        self.messages = 0  # late binding's probes, requests and replies between nodes
        self.late = getattr(balancer, "late_binding", False) is True
        if self.late and service != "fifo":
            raise ConfigError("engine.service", service, f"'fifo' with {balancer.name}'s late binding (a "
                              "reservation holds a slot while it asks for its task)")
        if self.late and record_decisions:
            raise ConfigError("engine.record_decisions", record_decisions, f"false with {balancer.name}'s "
                              "late_binding (its reservations are not decisions decide.place records)")
        self.service = DISCIPLINES[service](n)
        self.queue_samples: list[list[int]] = []  # every node's queue at each sample time
        self.sample_t: list[float] = []
        # the kernel path's state, built by _index when the kernel runs (the fast loop reads the arrays in blocks)
        self.times = self.origins = self.widths = self.firsts = self.demand = self.left = self.done_at = None
        self.jend = self.ideal = self.at_node = self.started = self.job_of = self.launched = None
        self.res_job = array("q")  # late binding, per reservation: its job
        self.res_at = array("d")  # per reservation: when it reached its node (its task's t_ask: the wait is its)

    def _servers(self, platform: Platform | int) -> None:
        """The nodes' names, speeds, slots and availability, and the network (the random stream
        ``availability`` realises a Platform's profiles)."""
        exact = self.model.exact
        if isinstance(platform, Platform):
            self.n = platform.n_nodes
            self.names = [nd.name for nd in platform.nodes]
            self.speeds = [float(nd.speed) for nd in platform.nodes]
            self.slots = [int(nd.cores) for nd in platform.nodes]
            self.profiles = platform.realise_availability(self.st.rng("availability"))
            self.complete = platform.complete
            self.latency, self.bandwidth = platform.network.latency, platform.network.bandwidth
            self.platform = platform
            self.neighbours = platform.neighbours() if not exact else None
        else:
            self.n = n = platform
            self.names = [str(i) for i in range(n)]
            self.speeds, self.slots = [1.0] * n, [1] * n
            self.profiles = [Constant().realise()] * n
            # the supermarket servers: messages take no time
            self.complete, self.latency, self.bandwidth = True, 0.0, math.inf
            self.platform = None
            self.neighbours = complete_neighbours(n) if not exact else None

    def _arrivals(self, warmup: float) -> None:
        """The jobs' arrivals (random stream ``arrivals``), then the initial tasks' work on the same stream:
        the tasks in the nodes' systems at time 0 are ids T.., each its own pseudo-job J.. (no response time)."""
        rng = self.st.rng("arrivals")
        self.arr = arr = self.workload.arrivals(self.names, rng)
        self.J = J = arr.n_jobs
        self.T = arr.n_tasks
        self.init_nodes, self.init_work = self.workload.initial_tasks(self.n, rng)
        self.I = len(self.init_nodes)
        self.w_index = min(int(warmup * J), J - 1) if J else 0
        self.t_last = float(arr.time[-1]) if J else 0.0
        self.t_first_w = float(arr.time[self.w_index]) if J else 0.0  # the warm-up job's arrival (statistics' start)

    def hops(self, src: int, dst: int) -> float:
        """Links between nodes *src* and *dst*."""
        return 1.0 if self.complete else float(self.platform.hops_from(src)[dst])

    # --- running ---------------------------------------------------------------------------------------

    def run(self, engine, options: dict) -> Trace:
        """Run on the fast loop if it implements this run (*engine* and *options*, the engine's options
        class, whose signature gives the defaults, and this call's options by name, are what
        :func:`_stream_fast.eligible` reads), else on the kernel; return the Trace."""
        why = self.why_not_fast(engine, options)
        arr = self.arr
        fr = _stream_fast.run(self.balancer, self.view, arr.time, arr.origin, arr.demand, self.q, self.upd, self.qmax,
                              self.kernel.tolerance, self.w_index) if why is None else None
        if fr is not None:
            self.area, self.tlast, self.busy_sum, self.done_at = fr.area, fr.tlast, fr.busy, fr.done
            self.snap.update(w=(fr.snap_w, self.t_first_w), e=(fr.snap_e, self.t_last))
            self.ideal = np.where(arr.demand > 0.0, arr.demand, 0.0)  # the arrival rule's max(0, demand / speed 1)
            self.kernel.processed = fr.events
        else:
            if why is None:  # a tie the loop cannot order: start again on the kernel
                why = "a tie the fast loop cannot order"
                n = self.n
                self.q[:], self.upd[:], self.qmax[:] = [0] * n, [0.0] * n, [0] * n
                self.balancer.start(self.view, self.st.rng("balancer"))
            self._index()
            self._start_kernel()
            self.kernel.run()
        return self._trace("fast" if fr is not None else f"kernel ({why})")

    def why_not_fast(self, engine, options: dict) -> str | None:
        """None if the fast loop implements this run, else why not. Initial loads are the workload's,
        not an engine option, so the loop's option check cannot see them."""
        if not self.J:
            return "no jobs"
        if self.I:
            return "initial loads"
        if self.late:
            return "late binding"
        return _stream_fast.eligible(engine, options, exact=self.model.exact, slots=self.slots, rates=self.rates,
                                     speeds=self.speeds, widths=self.arr.width, demands=self.arr.demand,
                                     zero_transfer=self.zero_transfer)

    def _index(self) -> None:
        """The kernel path's per-job and per-task state, which its handlers index: typed arrays of 8-byte
        numbers (array.array: an item reads back as the Python float or int a list would hold, so the
        run is the same; a list would cost 8 bytes more per item, and 24-32 more for each distinct
        float or int object)."""
        arr, J, T, I = self.arr, self.J, self.T, self.I
        self.times, self.origins, self.widths, self.firsts, self.demand = (
            _typed(a) for a in (arr.time, arr.origin, arr.width, arr.first, arr.demand))
        self.left = self.widths + array("q", [1]) * I  # tasks of each job not done yet
        self.done_at = array("d", [math.nan]) * (J + I)
        self.jend = array("d", [0.0]) * (J + I)
        self.ideal = array("d", [0.0]) * J  # per job: its longest task's time on its node at full availability
        self.at_node = array("d", [0.0]) * (T + I)  # when each task reached its node
        self.started = array("d", [0.0]) * (T + I)
        self.job_of = _typed(np.repeat(np.arange(J, dtype=np.int64), arr.width))
        self.launched = self.firsts[:]  # late binding, per job: the next task not yet sent to a reservation
        if I:
            self.demand.extend(self.init_work)
            self.job_of.extend(range(J, J + I))

    def _start_kernel(self) -> None:
        """The initial tasks join their nodes; the first arrival, information round and sample are scheduled."""
        T = self.T
        for i, j in enumerate(self.init_nodes):  # already in the nodes' systems when the run starts
            self.service.enqueue(0.0, self, T + i, j)
        if self.J:
            self.kernel.schedule(self.times[0], self.arrive, 0, priority=NORMAL)
            if not self.model.exact and self.model.interval <= self.t_last:
                self.kernel.schedule(self.model.interval, self.info_round, priority=URGENT)
            if self.samples:
                self.kernel.schedule(0.0, self.sample, 0, priority=URGENT)

    # --- the rules: arrival, transfer, leaving the system ----------------------------------------------

    def arrive(self, t: float, b: int) -> None:
        """Job b arrives at its origin: the next arrival is scheduled, the origin's view filled and the
        balancer asked where the job's tasks go (late binding: where its reservations go)."""
        o = self.origins[b]
        kw = self.widths[b]
        if b == self.w_index:
            self.snap["w"] = (self.area + self.N * (t - self.tlast), t)
        if b == self.J - 1:
            self.snap["e"] = (self.area + self.N * (t - self.tlast), t)
        else:
            self.kernel.schedule(self.times[b + 1], self.arrive, b + 1)
        view = self.view
        view.time = t
        view.node = o
        if not self.exact_view:
            self.model.fill(o, t, self.q[o], view.queue, view.updated_at, integer=True)
        if self.late:
            self.probe(t, b, o, kw)
            return
        if self.inline and kw == 1:
            j = self.balancer.place(view)
            if j.__class__ is not int or not 0 <= j < self.n:
                j = decide.checked_node(self.balancer, view, j)  # raises the checked error (or accepts a numpy int)
            nodes = (j,)
        else:
            nodes = decide.place(self.balancer, view, kw, self.batch_update, self.decisions)
        k = self.firsts[b]
        worst = self.ideal[b]
        demand, speeds, service = self.demand, self.speeds, self.service
        for j in nodes:
            x = demand[k] / speeds[j]
            if x > worst:
                worst = x
            if j == o or self.zero_transfer:
                service.enqueue(t, self, k, j)
            else:
                self.kernel.schedule(self.send(t, o, j), self.reach, k, j)
            k += 1
        self.ideal[b] = worst

    def send(self, t: float, o: int, j: int) -> float:
        """A task leaves node o for node j at t (a moved task, counted in the trace's messages): when it
        reaches j."""
        self.moved += 1
        self.moved_bytes += self.task_bytes
        return t + self.hops(o, j) * self.latency + self.task_bytes / self.bandwidth

    def reach(self, t: float, k: int, j: int) -> None:
        """Task k, sent by its origin, reaches node j."""
        self.service.enqueue(t, self, k, j)

    def join(self, t: float, k: int, j: int) -> None:
        """Task k joins node j's system (``queue[j]`` counts waiting and running tasks)."""
        self.area += self.N * (t - self.tlast)
        self.tlast = t
        self.N += 1
        q = self.q
        x = q[j] + 1
        q[j] = x
        self.upd[j] = t
        qmax = self.qmax
        if x > qmax[j]:
            qmax[j] = x
        self.at_node[k] = t

    def leave(self, t: float, k: int, j: int) -> None:
        """Task k, served, leaves node j's system: its interval is recorded, and its job is done if it
        was the job's last task."""
        self.area += self.N * (t - self.tlast)
        self.tlast = t
        self.N -= 1
        self.q[j] -= 1
        self.upd[j] = t
        if self.record:
            self.tnode.append(j)
            self.tfirst.append(k)
            self.tcount.append(1)
            self.task.append(self.at_node[k])
            self.tstart.append(self.started[k])
            self.tend.append(t)
            self.tround.append(-1)
        b = self.job_of[k]
        left = self.left
        r = left[b] - 1
        left[b] = r
        jend = self.jend
        if t > jend[b]:  # a job's tasks may end at one instant in any order within the tolerance
            jend[b] = t
        if not r:
            self.done_at[b] = jend[b]

    # --- late binding (Sparrow §3.3): reservations queue like tasks; the first to reach a slot gets one ---

    def probe(self, t: float, b: int, o: int, kw: int) -> None:
        """Job b (of *kw* tasks, at origin o) sends a reservation to each node its balancer probes."""
        for j in _probes(self.balancer, self.view, kw):
            r = len(self.res_job)
            self.res_job.append(b)
            self.res_at.append(t)
            if j != o:
                self.messages += 1
            if j == o or self.latency == 0.0:
                self.reserve(t, r, j)
            else:
                self.kernel.schedule(t + self.hops(o, j) * self.latency, self.reserve, r, j)

    def reserve(self, t: float, r: int, j: int) -> None:
        """Reservation r reaches node j: an entry of its queue, as a probe sees it."""
        self.res_at[r] = t
        q = self.q
        x = q[j] + 1
        q[j] = x
        self.upd[j] = t
        if x > self.qmax[j]:
            self.qmax[j] = x
        self.service.seat(t, self, r, j)

    def claim(self, t: float, r: int, j: int) -> None:
        """Reservation r holds a slot of node j: it asks its job's origin for a task."""
        o = self.origins[self.res_job[r]]
        if o != j:  # a message between two nodes counts whether or not it takes time
            self.messages += 1
        if o == j or self.latency == 0.0:
            self.request(t, r, j)
        else:
            self.kernel.schedule(t + self.hops(j, o) * self.latency, self.request, r, j)

    def request(self, t: float, r: int, j: int) -> None:
        """At the origin: the job's next task goes to the reservation's node, or a cancel if none is left."""
        b = self.res_job[r]
        o = self.origins[b]
        k = self.launched[b]
        if k < self.firsts[b] + self.widths[b]:
            self.launched[b] = k + 1
            x = self.demand[k] / self.speeds[j]
            if x > self.ideal[b]:
                self.ideal[b] = x
            if j == o or self.zero_transfer:
                self.bind(t, k, j, r)
            else:
                self.kernel.schedule(self.send(t, o, j), self.bind, k, j, r)
        else:
            if j != o:
                self.messages += 1
            if j == o or self.latency == 0.0:
                self.cancel(t, j)
            else:
                self.kernel.schedule(t + self.hops(o, j) * self.latency, self.cancel, j)

    def bind(self, t: float, k: int, j: int, r: int) -> None:
        """Task k starts on the slot reservation r held (the queue keeps its entry: reservation → task).
        The task counts in N (queue_mean) from its t_ask, the time its reservation reached the node, as a
        task without late binding counts from reaching its node: only now is it known which reservation
        it took, so the time since then is added to the area (and to a statistics snapshot taken since)."""
        a = self.res_at[r]
        self.area += self.N * (t - self.tlast) + (t - a)
        self.tlast = t
        self.N += 1
        snap = self.snap
        for key, (sa, ts) in snap.items():
            if ts > a:  # taken while this task was in the system but not yet counted
                snap[key] = (sa + ts - a, ts)
        self.at_node[k] = a
        self.service.start(t, self, k, j)

    def cancel(self, t: float, j: int) -> None:
        """The job had no task left: the reservation leaves the queue and frees its slot."""
        self.q[j] -= 1
        self.upd[j] = t
        self.service.free(t, self, j)

    # --- information rounds and queue samples ------------------------------------------------------------

    def deliver(self, t: float, msg) -> None:
        """An information message lands."""
        self.model.deliver(msg)

    def info_round(self, t: float) -> None:
        """The information model's round: its messages are sent; the next round is scheduled up to the
        last arrival."""
        model = self.model
        for m in model.round(t, self.q):
            self.kernel.schedule(t + self.hops(m.src, m.dst) * self.latency + m.bytes / self.bandwidth, self.deliver, m,
                          priority=URGENT)
        model.check_budget(t)
        if t + model.interval <= self.t_last:
            self.kernel.schedule(t + model.interval, self.info_round, priority=URGENT)

    def sample(self, t: float, k: int) -> None:
        """Queue snapshot k of every node; the next one is scheduled."""
        self.queue_samples.append(list(self.q))
        self.sample_t.append(t)
        samples = self.samples
        if k + 1 < samples:
            self.kernel.schedule(self.t_last * (k + 1) / (samples - 1) if samples > 1 else self.t_last, self.sample,
                                 k + 1, priority=URGENT)

    # --- the trace -------------------------------------------------------------------------------------

    def _trace(self, path: str) -> Trace:
        """The Trace of the finished run; *path*: which path ran ("fast", or "kernel (why not)")."""
        tr, model, arr, J, n = self.tr, self.model, self.arr, self.J, self.n
        tr.end_time = self.tlast
        tr.events = self.kernel.processed
        tr.speeds = self.speeds
        tr.availability = self.profiles
        tr.total_work, tr.max_item = _sum_max(arr.demand, self.init_work)
        tr.messages = self.moved + self.messages
        tr.bytes = self.moved_bytes
        if not model.exact:
            tr.info_messages = float(model.messages_)
            tr.info_bytes = float(model.bytes_)
            tr.info_age_mean = float(model.age_mean)
        else:
            tr.info_messages, tr.info_bytes, tr.info_age_mean = 0.0, 0.0, 0.0
        tr.meta["info_freshness"] = 0.0 if model.exact else float(model.freshness_mean)  # ε, sampled at the rounds
        (aw, tw), (ae, te) = self.snap.get("w", (0.0, 0.0)), self.snap.get("e", (0.0, 0.0))
        tr.series.update({"job_time": arr.time, "job_origin": arr.origin, "job_width": arr.width,
                          "job_first": arr.first, "job_done": np.asarray(self.done_at[:J]),
                          "job_ideal": np.asarray(self.ideal), "demand": arr.demand,
                          "queue_max": np.asarray(self.qmax)})
        if self.samples:
            rows = self.queue_samples
            tr.series["queue"] = np.asarray(rows, dtype=np.int64).reshape(len(rows), n)
            tr.series["queue_time"] = np.asarray(self.sample_t)
        tr.meta.update({"warmup_job": self.w_index, "queue_mean": (ae - aw) / (te - tw) / n if te > tw else math.nan,
                        "busy_time": self.busy_sum, "slots": list(self.slots), "info": model.name,
                        "workload": self.workload.name, "tasks_moved": self.moved, "path": path})
        service = self.service.name
        if self.I or service != "fifo":
            cm = self.converge_maxdiff
            tr.meta.update({"service": service, "initial_tasks": self.I, "converge_maxdiff": cm,
                            "convergence_time": convergence_time(tr, cm) if self.I and self.record else math.nan})
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
