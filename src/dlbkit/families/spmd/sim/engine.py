"""The pipelined-SPMD engine on a non-dedicated HNOW (Osman 2003, 000): repartition balancers at work.

Every workstation owns a contiguous block of the domain's datapoints (DP) and, every loop, computes
it and exchanges boundaries with its neighbours. Its *loop time* (000's L_i, T_actual) is its own
busy time in that loop, after eqs 4.1–4.4 and the note §3.4::

    t_i = W_i / (PP_i · u_i(k) · a_i(k))                 compute, u ~ U(1 ± noise), a = availability
        + max(0, W_i − M_i·m_i(k)) / swap_rate_i         swap, plus swap_latency in a loop that swaps
        + Σ_{j ∈ N(i)} (latency_ij + B / BW_ij)          boundaries (B per neighbour, eq 4.4)
        + K · W_i / BW_i                                 000's K (eq 7.9; 0 by default)
        + Σ over its transfers of (latency_ij + dp / BW_ij)   in the loop after a transfer

where a link's bandwidth is the slower end's and its latency the larger one. Idle time waiting for a
neighbour's boundary is not busy time: 000's plotted loop times differ between neighbours (note §5.6);
the wall clock follows from the pipeline recurrence in :func:`~dlbkit.families.spmd.model.trace.pipeline_finish_times`.

Balancing (000 §7.3, note §6.2): a workstation measures ``window`` loops; its mean loop time becomes
its ``loop_time`` in the :class:`~dlbkit.families.spmd.model.view.SpmdView` (with its measured effective power
W·window/Σcompute, free memory, swap cost and bandwidth), and it is *due*. Due workstations decide
in node order once every neighbour holds a valid measurement (a status exchange: a node waits for
its neighbours' statuses); a central balancer decides once (node −1) when every workstation is valid.
A transfer moves DP between neighbours (a contiguous slab from the side facing the receiver), costs
both ends time in the next loop, and resets both ends' measurement: the loop that pays the transfer is
discarded and a fresh window starts after it (the note's concurrency fix (b)); until then they are
not valid, so a neighbour cannot act on their stale status. Engines clamp a transfer so that a sender
keeps at least one DP. A window that ends with the last loop is not decided: no loop would carry its
moves out (the real runtime, ``dlbkit.spmd``, does not balance after its last iteration either).

Round-based and vectorised: between two decision points nothing changes a workstation's DP, so all
loop times of the segment (segment × P) come from one array expression. Deterministic: every draw
comes from Generators spawned from *seed* (CPU noise, background load, the balancer).
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any

import numpy as np

from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.families.spmd.balancers.decide import repartition
from dlbkit.errors import ConfigError
from dlbkit.families.spmd.model.hnow import Hnow, check_loops, levels_on_loops
from dlbkit.families.spmd.model.view import SpmdView
from dlbkit.families.spmd.model.seeding import SPMD
from dlbkit.model.seeding import streams
from dlbkit.families.spmd.model.trace import spmd_trace
from dlbkit.model.trace import Trace
from dlbkit.sim.costs import message_time
from dlbkit.sim.progress import ticker

__all__ = ["simulate_spmd", "DEFAULT_WINDOW"]

#: loops per measurement window (000's "predefined number of iterations", never given; note §7.1).
#: With ±10% uniform CPU noise one loop's time has a 5.8% standard deviation; ten loops bring it to
#: 1.8%, far inside the default 30% threshold, so noise alone never triggers a transfer (note E8).
DEFAULT_WINDOW = 10


class _Realised:
    """One run's fixed arrays, drawn from the HNOW and the seed."""

    def __init__(self, hnow: Hnow, loops: int, noise: float, seed):
        ws = hnow.workstations
        P = self.P = hnow.n
        rs = streams(seed, SPMD)
        self.rng_balancer = rs.rng("balancer")
        pp = np.array([w.speed for w in ws])
        rng_noise = rs.rng("noise")
        eff = np.broadcast_to(pp, (loops, P)).copy()
        if noise > 0:
            eff *= rng_noise.uniform(1.0 - noise, 1.0 + noise, size=(loops, P))
        rng_avail = rs.rng("availability")
        mem = np.array([w.memory for w in ws])
        self.ram = np.broadcast_to(mem, (loops, P)).copy()
        for i, w in enumerate(ws):
            a = w.availability.realise(rng_avail, f"workstations[{i}].availability")
            if a.constant != 1.0:
                eff[:, i] *= levels_on_loops(a, loops)
            m = w.memory_availability.realise(rng_avail, f"workstations[{i}].memory_availability")
            if m.constant != 1.0:
                self.ram[:, i] *= levels_on_loops(m, loops)
        self.inv_speed = 1.0 / eff
        self.swap_cost = np.array([1.0 / w.swap_rate for w in ws])
        self.swap_latency = np.array([w.swap_latency for w in ws])
        self.bandwidth = np.array([w.bandwidth for w in ws])
        self.latency = np.array([w.latency for w in ws])
        self.neighbours = [hnow.neighbours(i) for i in range(P)]
        self.ring = hnow.layout == "ring" and P > 2
        self.comm = np.zeros(P)
        for i, nb in enumerate(self.neighbours):
            for j in nb:
                self.comm[i] += message_time(1, hnow.boundary, *self.link(i, j))
        self.k_over_bw = hnow.boundary_k / self.bandwidth

    def link(self, i: int, j: int) -> tuple[float, float]:
        """(latency, bandwidth) of the link between i and j: the larger latency, the slower end."""
        return max(self.latency[i], self.latency[j]), min(self.bandwidth[i], self.bandwidth[j])


def _check_run(hnow, balancer, loops, window) -> None:
    if not isinstance(hnow, Hnow):
        raise ConfigError("hnow", type(hnow).__name__, "an Hnow (dlbkit.families.spmd.model.hnow)")
    if balancer is not None and not isinstance(balancer, RepartitionBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer), "a repartition balancer or None")
    for name, v in (("loops", loops), ("window", window)):
        if isinstance(v, bool) or not isinstance(v, Integral) or v < 1:
            raise ConfigError(name, v, "an integer >= 1")
    check_loops(loops, "loops", len(hnow.workstations))  # before the loops × P tables are allocated


def simulate_spmd(hnow: Hnow, balancer: RepartitionBalancer | None, *, loops: int,
                  window: int = DEFAULT_WINDOW, seed=0, noise: float | None = None,
                  record_decisions: bool = False, progress: Any = None) -> Trace:
    """Run *loops* loops of a pipelined SPMD application on *hnow*, balanced by *balancer*.

    *balancer*: a :class:`~dlbkit.families.spmd.balancers.base.RepartitionBalancer` (e.g.
    ``registry.make("dlah")``) or None for no balancing. *window*: loops per measurement window
    (:data:`DEFAULT_WINDOW`). *seed*: anything :class:`numpy.random.SeedSequence` accepts; the same
    seed gives the same trace. *noise* overrides ``hnow.noise`` (0: deterministic loop times).
    *record_decisions* keeps every decision with a copy of its view in ``trace.decisions``.
    *progress* ``(done, total)``: called now and then with the loops done out of *loops*, ending with
    ``(loops, loops)`` (:mod:`dlbkit.sim.progress`; None: no calls, no cost).
    Returns the run's :class:`~dlbkit.model.trace.Trace` (:func:`~dlbkit.families.spmd.model.trace.spmd_trace`).
    Raise :exc:`~dlbkit.errors.ConfigError` for bad arguments or a balancer's transfer between
    non-neighbours or of a negative amount.
    """
    _check_run(hnow, balancer, loops, window)
    tick = ticker(progress)
    if tick is not None:
        tick(0, loops)
    if noise is None:
        noise = hnow.noise
    elif isinstance(noise, bool) or not isinstance(noise, (int, float)) or not 0 <= noise < 1:
        raise ConfigError("noise", noise, "a number in [0, 1)")
    m = _Realised(hnow, loops, float(noise), seed)
    engine = _Engine(hnow, m, balancer, loops, window, seed)
    engine.record = [] if record_decisions else None
    engine.tick = tick
    trace = engine.run()
    if tick is not None:
        tick.finish(loops)
    return trace


class _Engine:
    def __init__(self, hnow: Hnow, m: _Realised, balancer, loops: int, window: int, seed):
        self.hnow, self.m, self.balancer, self.loops, self.window, self.seed = hnow, m, balancer, loops, window, seed
        self.record: list | None = None  # the decisions with their views, when asked to record them
        self.tick = None  # the progress Ticker (dlbkit.sim.progress), if any
        P = m.P
        self.W = np.array([w.points for w in hnow.workstations], dtype=np.int64)
        self.total = int(self.W.sum())
        self.starts = np.concatenate(([0], np.cumsum(self.W)[:-1])).astype(np.int64)
        self.loop_time = np.empty((loops, P))
        self.compute = np.empty((loops, P))
        self.points = np.empty((loops, P), dtype=np.int64)
        self.starts_rec = np.empty((loops, P), dtype=np.int64)
        self.first = np.zeros(P, dtype=np.int64)  # first loop of each node's current window
        self.valid = np.zeros(P, dtype=bool)  # holds a measurement of its current DP
        self.pending = np.zeros(P, dtype=bool)  # measured and waiting to decide
        self.extra = np.zeros(P)  # transfer seconds paid in the next loop
        self.steps = np.zeros(P, dtype=np.int64)
        self.decisions = np.zeros(P, dtype=np.int64)
        self.transfers: list[tuple[int, int, int, int]] = []
        self.clock = 0.0  # Σ of per-loop maxima so far (eq 4.1): the view's time
        self.view = SpmdView(n_nodes=P, points=self.W.tolist(), loop_time=[math.nan] * P,
                             measured_speeds=[w.speed for w in hnow.workstations],
                             free_memory=(m.ram[0] - self.W).tolist(), swap_cost=m.swap_cost.tolist(),
                             bandwidth=m.bandwidth.tolist(), layout=hnow.layout, boundary=hnow.boundary_k,
                             speeds=[w.speed for w in hnow.workstations])

    # --- the loop ---------------------------------------------------------------------------------
    def run(self) -> Trace:
        b = self.balancer
        if b is not None:
            b.start(self.view, self.m.rng_balancer)
        a, w = 0, self.window
        while a < self.loops:
            nxt = int(self.first.min()) + w - 1  # the loop at whose end the earliest window completes
            end = min(nxt + 1, self.loops)
            self._segment(a, end)
            if end - 1 == nxt and end < self.loops:  # none after the last loop: no loop would carry its moves
                self._decision_point(nxt)
            a = end
            if self.tick is not None:  # once per segment of loops (a window at most)
                self.tick(a, self.loops)
        tr = spmd_trace(layout=self.hnow.layout, window=w, loop_time=self.loop_time, points=self.points,
                        starts=self.starts_rec, transfers=self.transfers, steps=self.steps, decided=self.decisions,
                        balancer=getattr(b, "name", "none") if b else "none", seed=self.seed,
                        total_points=self.total, hnow=self.hnow.name)
        tr.decisions = self.record or []
        return tr

    def _segment(self, a: int, b: int) -> None:
        """Loop times of loops [a, b), during which no workstation's DP change."""
        m, W = self.m, self.W
        comp = W * m.inv_speed[a:b]
        over = np.maximum(W - m.ram[a:b], 0.0)
        t = comp + over * m.swap_cost + (over > 0) * m.swap_latency + (m.comm + m.k_over_bw * W)
        t[0] += self.extra
        self.extra[:] = 0.0
        self.loop_time[a:b] = t
        self.compute[a:b] = comp
        self.points[a:b] = W
        self.starts_rec[a:b] = self.starts
        self.clock += float(t.max(axis=1).sum())

    def _decision_point(self, k: int) -> None:
        w = self.window
        due = np.flatnonzero(self.first + w - 1 == k)
        lo = k - w + 1
        v = self.view
        T = self.loop_time[lo:k + 1, due].mean(axis=0)
        F = self.W[due] * w / self.compute[lo:k + 1, due].sum(axis=0)
        for n, i in enumerate(due.tolist()):
            v.loop_time[i] = float(T[n])
            v.measured_speeds[i] = float(F[n])
            v.updated_at[i] = self.clock
        self.valid[due] = True
        self.pending[due] = True
        self.first[due] = k + 1
        if self.balancer is None:
            self.pending[:] = False
            return
        v.loop, v.time = k + 1, self.clock
        v.points[:] = self.W.tolist()
        v.free_memory[:] = (self.m.ram[k] - self.W).tolist()
        if self.balancer.central:
            if self.valid.all():
                self.pending[:] = False
                moved = self._apply(repartition(self.balancer, v, -1, self.m.neighbours, self.record), k, -1)
                for src in sorted(moved):
                    self.steps[src] += 1
            return
        nbs = self.m.neighbours
        valid = self.valid
        for i in np.flatnonzero(self.pending).tolist():
            if not self.pending[i] or not all(valid[j] for j in nbs[i]):
                continue  # reset by an earlier transfer, or waiting for a neighbour's status
            self.pending[i] = False
            self.decisions[i] += 1
            if self._apply(repartition(self.balancer, v, i, self.m.neighbours, self.record), k, i):
                self.steps[i] += 1

    def _apply(self, transfers, k: int, node: int) -> set[int]:
        """Move DP as decided at the end of loop *k*; return the senders that moved any."""
        m, W, P = self.m, self.W, self.m.P
        senders: set[int] = set()
        for t in transfers:  # checked by balancers.decide.repartition
            src, dst, n = t.src, t.dst, t.n
            n = min(n, int(W[src]) - 1)  # a sender keeps at least one DP
            if n <= 0:
                continue
            W[src] -= n
            W[dst] += n
            if dst == src + 1 or (m.ring and src == P - 1 and dst == 0):
                self.starts[dst] = (self.starts[dst] - n) % self.total  # slab from src's end
            else:
                self.starts[src] = (self.starts[src] + n) % self.total  # slab from src's start
            self.transfers.append((k, src, dst, n))
            cost = message_time(1, n, *m.link(src, dst))
            self.extra[src] += cost
            self.extra[dst] += cost
            for x in (src, dst):
                self.valid[x] = False
                self.pending[x] = False
                self.first[x] = k + 2  # the loop paying the transfer is not measured
                self.view.points[x] = int(W[x])
                self.view.free_memory[x] = float(m.ram[k, x] - W[x])
            senders.add(src)
        return senders
