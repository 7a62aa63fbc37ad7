"""The master–worker engine for divisible work (loops), in two mechanisms.

* ``self-scheduling``: each worker asks the master for work when idle; the master asks the chunking
  balancer how many items to send (SS, GSS, FAC2, AWF, AF, ... all run here). Requests that reach
  the master at the same instant are served in increasing worker index.
* ``rounds``: the bulk-synchronous scheme of Sánchez et al. (004 §2.2): each round the master asks
  the balancer for every worker's count, sends the chunks one after another with blocking sends, and
  waits for all results before the next round.

Cost model. A message from node a to b takes ``hops(a, b) · latency + bytes / bandwidth`` (zero
within a node); ``link_latency`` ({node name: seconds}) gives a node's own latency to and from the
master instead of ``hops · latency`` (one slow link modelled as one slow link: the replay of a real
run measures each worker's). A chunk of items with total work W, started at t0 on a worker of speed s whose node
has availability a(t), ends at the t1 with s·∫_{t0}^{t1} a = W, integrated exactly over a's pieces.
The master is one sequential process: it spends ``master_overhead`` seconds per decision, and sends
with blocking sends that occupy it for ``bytes · (master_cost_per_byte / master speed + 1/bandwidth)``
(004 §2.5 asks for blocking sends), so concurrent requests queue at the master. A worker on the
master's own node gets its data without a message. ``broadcast_bytes`` of shared read-only data (004's
INIT, e.g. the MxV vector) go to every worker, one blocking send after another, before any work.
``startup`` seconds are the master's start-up of the workers (processes or ranks, as a recorded real
run measured it): it starts them one after another, an equal share of the time each, in the same
order and with the same timing as a broadcast, but without messages.

Only master-side events (a request or result arriving) are queued: what a worker does between
receiving a chunk and its next request touches no shared state, so the engine computes that chain
directly and still counts its model events (reply delivered, chunk completed). The master's rule
(:class:`_Master`) is a handler on the :class:`~dlbkit.sim.kernel.Kernel`; each request is scheduled
with its worker index as rank, so the kernel's order (time, priority, rank, sequence) is M1's tie rule.
The same rule runs inlined on a private heap for speed (M1's loop, the default; ``fast_path=False``
selects the kernel), and both write the kernel's event log, which tests compare event for event.
"""

from __future__ import annotations

from collections.abc import Mapping
from heapq import heappop, heappush
from operator import itemgetter
from typing import Any

import numpy as np

from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import end_step, start_step
from dlbkit.families.divisible.balancers.decide import allocation, chunk
from dlbkit.families.divisible.balancers.base import chunk_count
from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.gcpause import paused_gc
from dlbkit.model.platform import Platform
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.families.divisible.model.seeding import DIVISIBLE
from dlbkit.model.seeding import streams
from dlbkit.families.divisible.model.steps import join_steps, step_trace
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.families.divisible.sim.auto import after_step
from dlbkit.families.divisible.sim.options import MAX_STEPS, MECHANISMS, DivisibleOptions
from dlbkit.sim.costs import constant_rates, finish_time, message_time
from dlbkit.sim.kernel import NORMAL, Kernel, pop_instant
from dlbkit.sim.progress import ticker
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_divisible", "DivisibleOptions", "MECHANISMS", "MAX_STEPS"]

_WORKER = itemgetter(1)  # the fast loop's heap holds (time, worker): an instant runs by worker index


class _Run:
    """Everything one run needs, realised from the platform and workload with the run's seed."""

    def __init__(self, platform: Platform, workload: Divisible, balancer: ChunkingBalancer, seed,
                 master: int | str, master_computes: bool, costs: np.ndarray | None, cost_per_byte: float,
                 link_latency: Any = None):
        if not isinstance(balancer, ChunkingBalancer):
            raise ConfigError("balancer", getattr(balancer, "name", balancer),
                              "a chunking balancer for a divisible workload")
        if isinstance(master, str):
            master = platform.index(master, "engine.master")
        if not (0 <= master < platform.n_nodes):
            raise ConfigError("engine.master", master, f"a node index in [0, {platform.n_nodes - 1}]")
        self.master = master
        self.master_computes = bool(master_computes)
        self.node_names = [n.name for n in platform.nodes]
        self.node_of = platform.worker_nodes(exclude=None if master_computes else master)
        if not self.node_of:
            raise ConfigError("engine.master_computes", master_computes,
                              "true when the platform has only the master node")
        rs = streams(seed, DIVISIBLE)
        self.costs = workload.costs(rs.rng("costs")) if costs is None else np.asarray(costs, float)
        #: a time-stepping run's costs per step (K × N), when they differ between steps
        self.step_costs = self.costs if self.costs.ndim == 2 else None
        if self.step_costs is not None:
            self.costs = self.step_costs[0]
        if self.costs.ndim != 1 or len(self.costs) != workload.n_items:
            raise ConfigError("costs", self.costs.shape, f"one cost per item ({workload.n_items}), or one row "
                              "of them per time step")
        rng_avail = rs.rng("availability")
        node_avail = platform.realise_availability(rng_avail)
        self.availability = [node_avail[n] for n in self.node_of]
        self.speeds = [platform.nodes[n].speed for n in self.node_of]
        self.rates = constant_rates(self.speeds, self.availability)
        self.rng_balancer = rs.rng("balancer")
        net = platform.network
        hops = platform.hops_from(master)
        self.hops = [int(hops[n]) for n in self.node_of]
        # latency only: bytes are charged per item below (the same term, factored per item)
        self.latency = [message_time(h, 0.0, net.latency, net.bandwidth) for h in self.hops]
        if link_latency is not None:
            own = _link_latency(link_latency, platform)
            self.latency = [own.get(n, x) if n != master else x for n, x in zip(self.node_of, self.latency)]
        # seconds per byte between each worker and the master: data within a node is not sent
        self.inv_bw = [0.0 if n == master else 1.0 / platform.network.bandwidth for n in self.node_of]
        self.master_speed = platform.nodes[master].speed
        #: seconds a blocking send of one byte to each worker occupies the master
        self.send_cost = [cost_per_byte / self.master_speed + x if x else 0.0 for x in self.inv_bw]
        self.view = LoopView(workload.n_items, len(self.node_of), list(self.speeds))

    def trace(self, balancer, seed) -> Trace:
        return Trace(len(self.node_of), list(self.node_of), balancer=balancer.name, seed=seed, family="divisible",
                     speeds=list(self.speeds), availability=self.availability,
                     total_work=float(self.costs.sum()), max_item=float(self.costs.max()),
                     meta={"master": self.node_names[self.master], "master_computes": self.master_computes,
                           "node_names": list(self.node_names)})


def simulate_divisible(platform: Platform, workload: Divisible, balancer: ChunkingBalancer, *, seed=0,
                       options: DivisibleOptions | None = None, **kwargs: Any) -> Trace:
    """Run *workload* on *platform* with a chunking *balancer*; return the Trace.

    The options are a :class:`~dlbkit.families.divisible.sim.options.DivisibleOptions` (*options*), or
    its fields as keywords (over *options*, if both): *mechanism* "self-scheduling" or "rounds";
    *master* (a node name or index) hands out work and computes only with *master_computes*;
    *master_overhead*, *master_cost_per_byte*, *request_bytes* and *broadcast_bytes* (module doc).
    *costs* overrides the workload's drawn item costs (e.g. replaying measured costs). *startup*:
    seconds the master spends starting the workers before its first decision (no messages).
    Self-scheduling runs in the specialised loop unless *fast_path* is False (then on the kernel; same
    trace, tested). *log_events* keeps the kernel's event log of the requests served (the specialised
    loop writes the same one) in ``trace.meta["event_log"]``. *record_decisions* keeps every decision
    with a copy of its view in ``trace.decisions`` (self-scheduling runs on the kernel then).
    *progress* ``(done, total)``: called now and then with the items completed so far out of the
    loop's, ending with ``(n_items, n_items)`` (:mod:`dlbkit.sim.progress`; None: no calls, no cost).

    *steps* > 1 runs the loop that many times in a row, a time-stepping application
    (:mod:`dlbkit.families.divisible.model.steps`): step k + 1 starts when the master holds every result of step k (the
    workers' requests are then all waiting at the master), on the one global clock, so availability
    that changes over time changes across steps; the same item costs every step (or row k of a
    K × N *costs*); the balancer restarts each step and takes up what it carried from the previous
    one (``Balancer.carry``/``resume``: time-stepping AWF's weights, AF's μ and σ). The trace covers
    every step (``meta["time_steps"]``, ``meta["carried"]``). *state*: what the balancer carries into the
    first step (None: nothing, a fresh start). *requests_waiting*: every worker's first request is
    already at the master at time 0 (a later step of a persistent pool; self-scheduling only).
    """
    o = DivisibleOptions.of(options, kwargs, "simulate_divisible")
    steps = int(o.steps)
    tick = ticker(o.progress)
    if tick is not None:
        tick(0, workload.n_items * steps)
    run = _Run(platform, workload, balancer, seed, o.master, o.master_computes, o.costs, o.master_cost_per_byte,
               o.link_latency)
    if run.step_costs is not None and len(run.step_costs) != steps:
        raise ConfigError("costs", run.step_costs.shape, f"one row of item costs per time step ({steps})")
    ready, master_free = _broadcast(run, o.broadcast_bytes, o.startup)
    # the specialised self-scheduling loop, unless told not to or decisions are recorded (the kernel then)
    fast = o.fast_path is not False and not o.record_decisions
    if steps > 1:
        return _time_steps(run, balancer, seed, o, steps, ready, master_free, workload, fast, tick)
    start_step(balancer, run.view, run.rng_balancer, o.state)
    # The hot loop creates millions of short-lived tuples and no reference cycles: the cyclic
    # collector only costs time here (about 25% at a million events, BENCHMARKS.md).
    log: list | None = [] if o.log_events and o.mechanism != "rounds" else None
    with paused_gc():
        if o.mechanism == "rounds":
            trace = _rounds(run, balancer, seed, o, workload, master_free, tick)
        else:
            trace = _self_scheduling(run, balancer, seed, o, workload, ready, master_free, fast, log, tick,
                                     master_free if o.requests_waiting else None)
    if tick is not None:
        tick.finish(workload.n_items)
    if log is not None:
        trace.meta["event_log"] = log
    if o.broadcast_bytes:
        sent = sum(1 for x in run.inv_bw if x)
        trace.messages += sent
        trace.bytes += sent * o.broadcast_bytes
    return trace


def _broadcast(run: _Run, nbytes: float, startup: float = 0.0) -> tuple[list[float], float]:
    """Shared data to every worker by blocking sends in worker order, after (or while) starting each
    worker with an equal share of *startup*: when each worker has it, and when the master is free
    again. A worker on the master's node needs neither."""
    t = 0.0
    ready = [0.0] * len(run.node_of)
    if nbytes or startup:
        remote = sum(1 for cost in run.send_cost if cost)
        share = startup / remote if remote else 0.0
        for w, cost in enumerate(run.send_cost):
            if cost:
                t += nbytes * cost + share
                ready[w] = t + run.latency[w]
    return ready, t


def _link_latency(given: Any, platform: Platform) -> dict[int, float]:
    """``link_latency`` ({node name: seconds, one way between it and the master}) by node index."""
    if not isinstance(given, Mapping):
        raise ConfigError("engine.link_latency", type(given).__name__, "a mapping of node name to seconds")
    out = {}
    for name, value in given.items():
        if not isinstance(name, str):
            raise ConfigError("engine.link_latency", name, "node names as keys")
        out[platform.index(name, "engine.link_latency")] = check.number(value, f"engine.link_latency[{name!r}]",
                                                                         lo=0.0)
    return out


class _Master:
    """The self-scheduling master's rule and state: a request from a worker reaches the master, which
    takes the measurements that travel with it, asks the balancer for a chunk, sends it, and (the
    worker's chain touches no shared state) computes when the worker's next request arrives."""

    def __init__(self, run: _Run, balancer, trace: Trace, overhead, request_bytes, workload, ready, master_free):
        view = run.view
        self.trace, self.view, self.balancer, self.decide = trace, view, balancer, balancer.chunk
        self.record: list | None = None  # the trace's decisions, when they are recorded
        self.measure = balancer.reads_measurements
        self.P = P = view.n_nodes
        self.N = workload.n_items
        self.costs = run.costs.tolist()
        self.cum = np.concatenate(([0.0], np.cumsum(run.costs))).tolist()
        # squared item costs only feed measurements (a rule that reads none skips them)
        self.cum_sq = np.concatenate(([0.0], np.cumsum(run.costs * run.costs))).tolist() if self.measure else []
        self.speeds, self.avail, self.latency, self.rates = run.speeds, run.availability, run.latency, run.rates
        self.send_in = [workload.bytes_in * c for c in run.send_cost]  # master busy per item sent to w
        self.b_out = [workload.bytes_out * x for x in run.inv_bw]  # result transfer per item from w
        self.req = [request_bytes * x for x in run.inv_bw]
        self.serial = overhead > 0 or any(self.send_in)
        self.overhead = overhead
        self.pending = [-1] * P  # trace row whose result travels with the worker's next request
        self.asked = [0.0] * P  # when the worker last asked for work (for its scheduling overhead)
        #: (arrival, worker) of every worker's first request, in worker order
        self.first = [(ready[w] + self.latency[w] + self.req[w], w) for w in range(P)]
        self.next_item = 0
        self.remaining = self.N
        self.served = 0
        self.master_free = master_free
        self.tick = None  # the progress Ticker (dlbkit.sim.progress), if any
        self.items_done = 0  # items of the chunks completed so far (counted only for the ticker)
        self.countdown = 1  # completions until the ticker is asked again

    def measured(self, w: int) -> None:
        """Worker *w*'s measurements of its last chunk arrive with its request."""
        k = self.pending[w]
        if k < 0:
            return
        tr, v, cum = self.trace, self.view, self.cum
        n = tr.count[k]
        f = tr.first[k]
        dt = tr.t_end[k] - tr.t_start[k]
        v.items_done[w] += n
        v.chunks_done[w] += 1
        v.compute_time[w] += dt
        work = cum[f + n] - cum[f]
        if work > 0:
            scale = dt / work
            v.sq_item_time[w] += scale * scale * (self.cum_sq[f + n] - self.cum_sq[f])
        v.overhead_time[w] += tr.t_start[k] - self.asked[w]
        self.asked[w] = tr.t_end[k]
        v.last_chunk[w] = n
        v.last_time[w] = dt
        v.updated_at[w] = tr.t_end[k]

    def completed(self, w: int) -> None:
        """Worker *w*'s request tells that its last chunk is complete: count it for the ticker."""
        k = self.pending[w]
        if k >= 0:
            self.items_done += self.trace.count[k]
        self.countdown -= 1
        if not self.countdown:
            self.countdown = self.tick(self.items_done, self.N)

    def serve(self, t: float, w: int):
        """A request from worker *w* reached the master at *t*; return when *w*'s next request
        arrives, or None when no work was left (the reply was STOP)."""
        self.served += 1
        if self.measure:
            self.measured(w)
        if self.tick is not None:
            self.completed(w)
        remaining = self.remaining
        if remaining == 0:
            return None
        ts = max(t, self.master_free) + self.overhead
        view = self.view
        view.time = ts
        view.remaining = remaining
        n = chunk(self.balancer, view, w, self.record)
        first = self.next_item
        self.next_item += n
        self.remaining = remaining - n
        if self.serial:
            self.master_free = ts = ts + n * self.send_in[w]  # the blocking send ends
        t_start = ts + self.latency[w]
        work = self.costs[first] if n == 1 else self.cum[first + n] - self.cum[first]
        t_end = finish_time(self.avail[w], t_start, work, self.speeds[w], self.rates[w])
        tr = self.trace
        self.pending[w] = len(tr.node)
        tr.node.append(w)
        tr.first.append(first)
        tr.count.append(n)
        tr.t_start.append(t_start)
        tr.t_end.append(t_end)
        return t_end + self.latency[w] + n * self.b_out[w] + self.req[w]


def _self_scheduling(run: _Run, balancer, seed, o: DivisibleOptions, workload, ready, master_free, fast: bool,
                     log: list | None, tick=None, waiting_at: float | None = None) -> Trace:
    trace = run.trace(balancer, seed)
    request_bytes = o.request_bytes
    m = _Master(run, balancer, trace, o.master_overhead, request_bytes, workload, ready, master_free)
    if waiting_at is not None:  # a later time step: every worker's request is already at the master
        m.first = [(waiting_at, w) for w in range(m.P)]
    m.record = trace.decisions if o.record_decisions else None
    m.tick = tick
    if fast:
        _fast_self_scheduling(m, log)
    else:
        _kernel_self_scheduling(m, log)
    n_chunks = len(trace.node)
    w_arr, end_arr = np.asarray(trace.node, dtype=np.intp), np.asarray(trace.t_end, dtype=float)
    trace.round_of = np.full(n_chunks, -1, dtype=np.int64)
    trace.t_ask = _ask_times(w_arr, end_arr)
    # model events: requests delivered, replies delivered (work or STOP), chunks completed
    trace.events = 2 * m.served + n_chunks
    # balancing messages: a request and a reply per chunk, plus each worker's last request and STOP
    trace.messages = 2 * m.served
    trace.bytes = m.N * (workload.bytes_in + workload.bytes_out) + m.served * request_bytes
    if n_chunks:
        back = end_arr + np.asarray(m.latency)[w_arr] + np.asarray(trace.count) * np.asarray(m.b_out)[w_arr]
        trace.end_time = float(back.max())
    trace.meta["mechanism"] = "self-scheduling"
    return trace


def _kernel_self_scheduling(m: _Master, log: list | None) -> None:
    """The master's rule as a kernel handler: requests at one instant are served in increasing worker
    index because each is ranked by its worker (docs/reference-models.md M1's tie rule as the kernel's order)."""
    k = Kernel(tolerance=SIMULTANEITY_TOLERANCE, log=log is not None)
    serve, schedule = m.serve, k.schedule

    def on_request(t, w):
        nxt = serve(t, w)
        if nxt is not None:
            schedule(nxt, on_request, w, priority=NORMAL, rank=w)

    for t, w in m.first:
        schedule(t, on_request, w, priority=NORMAL, rank=w)
    k.run()
    if log is not None:
        log.extend(k.log)


def _fast_self_scheduling(m: _Master, log: list | None) -> None:
    """:meth:`_Master.serve` on a private heap of (time, worker): the same order as the kernel path
    (a worker has at most one request queued, so its rank alone orders an instant) with the rule
    inlined (M1's loop: a function call per request is a tenth of its time). Writes the kernel's log."""
    view = m.view
    P = m.P
    costs, cum = m.costs, m.cum
    speeds, avail, latency, rates = m.speeds, m.avail, m.latency, m.rates
    send_in, b_out, req, serial, overhead = m.send_in, m.b_out, m.req, m.serial, m.overhead
    decide = m.decide
    tol = SIMULTANEITY_TOLERANCE
    trace = m.trace
    # columns of the trace, bound locally for the hot loop
    T_w, T_first, T_count, T_start, T_end = trace.node, trace.first, trace.count, trace.t_start, trace.t_end
    measure = m.measure
    tick = m.tick
    # one test per request for the three (M1 does none of them: no cost when progress is None)
    extra = measure or log is not None or tick is not None
    pending = m.pending
    heap = sorted(m.first)
    next_item = 0
    remaining = m.N
    master_free = m.master_free
    batch: list = []
    while heap or batch:
        if batch:
            t, w = batch.pop()
        else:
            t, w = heappop(heap)
            if heap and heap[0][0] <= t + tol:
                # same instant up to round-off: the kernel's order (rank = worker index)
                batch = pop_instant(heap, tol, _WORKER, (t, w))
                t, w = batch.pop()
        if extra:
            if log is not None:
                log.append((t, NORMAL, w, w if pending[w] < 0 else P + pending[w], "on_request", (w,)))
            if measure:
                m.measured(w)
            if tick is not None:  # a request means the worker's last chunk is complete
                m.completed(w)
        if remaining == 0:
            continue
        ts = t if t >= master_free else master_free
        ts += overhead
        view.time = ts
        view.remaining = remaining
        # NOTE: balancers.decide.chunk inlined for speed (M1: a call per request is a tenth of the
        # loop); the kernel path calls it, and tests/sim/test_fast_paths.py checks the two agree
        n = decide(view, w)
        if n.__class__ is not int:
            n = chunk_count(m.balancer, n)
        if n < 1:
            n = 1
        elif n > remaining:
            n = remaining
        first = next_item
        next_item += n
        remaining -= n
        if serial:
            master_free = ts = ts + n * send_in[w]  # the blocking send ends
        t_start = ts + latency[w]
        work = costs[first] if n == 1 else cum[first + n] - cum[first]
        rate = rates[w]
        # NOTE: costs.finish_time inlined for its constant-rate case
        t_end = t_start + work / rate if rate else finish_time(avail[w], t_start, work, speeds[w])
        if extra:
            pending[w] = len(T_w)  # the row whose measurements travel with w's next request
        T_w.append(w)
        T_first.append(first)
        T_count.append(n)
        T_start.append(t_start)
        T_end.append(t_end)
        heappush(heap, (t_end + latency[w] + n * b_out[w] + req[w], w))
    # requests delivered (each with its reply, work or STOP): one per chunk, and each worker's last
    m.served = len(T_w) + P


def _ask_times(w: np.ndarray, e: np.ndarray) -> np.ndarray:
    """When each chunk was asked for: the worker's previous completion (0 for its first chunk);
    *w*, *e*: each chunk's worker and end time."""
    if not len(w):
        return np.empty(0)
    order = np.argsort(w, kind="stable")  # each worker's chunks, in the order it did them
    ws, es = w[order], e[order]
    prev = np.concatenate(([0.0], es[:-1]))
    prev[np.concatenate(([True], ws[1:] != ws[:-1]))] = 0.0
    out = np.empty_like(e)
    out[order] = prev
    return out


def _rounds(run: _Run, balancer, seed, o: DivisibleOptions, workload, t0, tick=None) -> Trace:
    trace = run.trace(balancer, seed)
    overhead, request_bytes = o.master_overhead, o.request_bytes
    record = trace.decisions if o.record_decisions else None
    view = run.view
    P = view.n_nodes
    cum = np.concatenate(([0.0], np.cumsum(run.costs)))
    cum_sq = np.concatenate(([0.0], np.cumsum(run.costs * run.costs)))
    t = t0
    next_item = 0
    remaining = workload.n_items
    rnd = 0
    events = 0
    messages = 0
    while remaining > 0:
        t += overhead
        view.time = t
        view.remaining = remaining
        counts, order = allocation(balancer, view, record)
        t_send = t
        round_end = t
        exe, calc, send = [0.0] * P, [0.0] * P, [0.0] * P
        for w in order:
            n = counts[w]
            if n == 0:
                continue
            nbytes = n * workload.bytes_in + request_bytes
            s = t_send
            e = s + nbytes * run.send_cost[w]  # blocking send: the master is busy until it ends
            t_send = e
            arrive = e + run.latency[w]
            first = next_item
            next_item += n
            work = float(cum[first + n] - cum[first])
            # integrated even at a constant level, as this mechanism always did (same round-off)
            t_end = finish_time(run.availability[w], arrive, work, run.speeds[w])
            back = t_end + run.latency[w] + n * workload.bytes_out * run.inv_bw[w]
            exe[w], calc[w], send[w] = back - s, t_end - arrive, e - s
            round_end = max(round_end, back)
            trace.add_interval(w, first, n, t, arrive, t_end, rnd)
            trace.rounds.append((rnd, w, n, s, e - s, t_end - arrive, back - s))
            # measurements as the master learns them at the end of the round
            view.items_done[w] += n
            view.chunks_done[w] += 1
            view.compute_time[w] += t_end - arrive
            if work > 0:
                scale = (t_end - arrive) / work
                view.sq_item_time[w] += scale * scale * float(cum_sq[first + n] - cum_sq[first])
            view.overhead_time[w] += arrive - t
            view.last_time[w] = t_end - arrive
            view.updated_at[w] = t_end
            events += 3
            messages += 2
        view.last_chunk = counts
        view.exe_time, view.calc_time, view.send_time = exe, calc, send
        view.order = order
        remaining -= sum(counts)
        rnd += 1
        view.round = rnd
        t = round_end
        if tick is not None:  # the round's results are all in
            tick(workload.n_items - remaining, workload.n_items)
    events += P  # STOP delivered to every worker
    messages += P
    trace.events = events
    trace.messages = messages
    trace.bytes = workload.n_items * (workload.bytes_in + workload.bytes_out) + (messages - P) / 2 * request_bytes
    trace.end_time = t
    trace.meta["mechanism"] = "rounds"
    trace.meta["n_rounds"] = rnd
    return trace


def _time_steps(run: _Run, balancer, seed, o: DivisibleOptions, steps: int, ready, master_free, workload, fast,
                tick) -> Trace:
    """*steps* runs of the loop in a row on the global clock (see :func:`simulate_divisible`)."""
    state = o.state
    N, P = workload.n_items, len(run.node_of)
    parts, carried = [], []
    t = master_free
    with paused_gc():
        for k in range(steps):
            if run.step_costs is not None:
                run.costs = run.step_costs[k]
            run.view = LoopView(N, P, list(run.speeds))
            start_step(balancer, run.view, run.rng_balancer, state)
            if o.mechanism == "rounds":
                tr = _rounds(run, balancer, seed, o, workload, t)
            else:
                tr = _self_scheduling(run, balancer, seed, o, workload, ready, master_free, fast, None, None,
                                      None if k == 0 else t)
            start = 0.0 if k == 0 else t
            if k:  # a worker's first chunk of the step was asked for when the step began
                tr.t_ask = [a if a > start else start for a in tr.t_ask]
            tr.meta["step_start"] = start
            tr.meta["step_items"] = N
            state = end_step(balancer, run.view)
            if balancer.predicts_between_steps:  # the engine predicts the next step, the balancer chooses
                one = step_trace(join_steps([tr]), 0)  # the step on its own: items from 0
                state = after_step(balancer, state, one, run.costs, run.speeds, list(run.latency),
                                   tr.end_time - start, evaluate=k + 1 < steps, simulate=simulate_divisible)
                tr.meta["auto"] = one.meta["auto"]
            carried.append(state)
            parts.append(tr)
            t = max(tr.end_time, t)
            if tick is not None:
                tick(N * (k + 1), N * steps)
    if tick is not None:
        tick.finish(N * steps)
    trace = join_steps(parts, carried=carried)
    if o.broadcast_bytes:
        sent = sum(1 for x in run.inv_bw if x)
        trace.messages += sent
        trace.bytes += sent * o.broadcast_bytes
    return trace
