"""The SPMD family (``dlbkit.spmd``): 1-D decomposed iterations, balanced by repartition.

The coordinator relays halos, measures loop times and moves slabs; the worker (:func:`serve_spmd`)
owns a contiguous block of rows, steps it and ships slabs; :func:`run_spmd` is the family's runner
(a resolved repartition balancer, or None, in; ``(domain, trace)`` out, on either backend).

Each worker owns a contiguous block of the domain's interior rows (worker order = row order). The
coordinator holds each worker's edge rows (its first and last ``halo`` rows) after its latest
iteration and sends worker *j* iteration *it* as soon as *j* and both its neighbours have finished
iteration it − 1: neighbours are at most one iteration apart, as with direct neighbour exchange
(two edge versions per worker suffice), and a worker's measured busy time is its own, never the
time it waited for a slower neighbour (000 §5.6).

Every ``window`` iterations (before iterations window, 2·window, …) all workers wait; the
coordinator fills the :class:`~dlbkit.families.spmd.model.view.SpmdView` from the window's measurements and asks
the repartition balancer for transfers (a distributed rule once per node, on the same snapshot; a
central rule once with node = −1). Each transfer ``Transfer(i, j, k)`` with |i − j| = 1 ships the
k rows of *i* that touch *j* (contiguity kept), clamped so that *i* keeps at least ``halo`` rows;
then the next window's measurement starts afresh (000 §6.2: reset after a transfer).

**A worker that dies** is survived from a checkpoint. At a checkpoint's iteration *c* each worker sends
its whole block with the step's reply; once every worker's block of *c* is in, *c* is the last iteration
every worker agrees on, and the coordinator keeps the field after it (one copy of the domain; the next
one's blocks as they come). The domain as given is the first. A checkpoint is taken every ``checkpoint``
iterations, or, by default, at the first iteration not yet sent to any worker once :data:`CHECKPOINT_S`
seconds have passed since the last one (a checkpoint costs about the domain's bytes at the pipe's speed,
~1 GB/s here: every 10 iterations of a cheap stencil that was +20–90%, every 30 s it is well under 1%). When a worker dies (the
transport's ``Died``), the coordinator waits for the replies the others owe, then starts every survivor
again from the field after *c*: the dead worker's rows join its lower neighbour's block (the upper one's
if it was first), each survivor gets its block (``Init``), and the run carries on from iteration c + 1
with one worker fewer (the balancer started again on the new line; the iterations after *c* are dropped
from the trace and computed again, so every row's result is the serial one). With ``checkpoint=0`` no
block is sent and a death ends the run with a :class:`~dlbkit.errors.DlbkitError`, as does the death of
the last worker.

A worker holds its block between iterations and does only what the coordinator asks; it decides
nothing. Messages (:mod:`.messages`): coordinator → worker ``Init`` (its first rows), ``Step``
(an iteration, with the halo rows), ``Ship`` and ``Take`` (a transfer's two halves), ``Gather`` and
``Stop()``; worker → coordinator ``Stepped`` (an iteration done, with the block's new edges and its
measured time), ``Shipped``, ``Took``, ``Block``, and an ``Error`` (index = the iteration) when
*step* raised (or returned a block of the wrong shape).
"""

from __future__ import annotations

import dataclasses

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.families.spmd.balancers.decide import repartition
from dlbkit.errors import ConfigError, DlbkitError, TaskError
from dlbkit.model.availability import Constant
from dlbkit.families.spmd.model.trace import finish_times, series_from_intervals
from dlbkit.model.trace import Trace
from dlbkit.families.spmd.model.view import SpmdView
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import Program, Transport, UserCode, error_message, task_error
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Died, Error, Stop
from dlbkit.runtime.progress import Progress
from dlbkit.runtime import status
from dlbkit.families.spmd.runtime.messages import Block, Gather, Init, Ship, Shipped, Step, Stepped, Take, Took

__all__ = ["CHECKPOINT_S", "LARGE", "SpmdSpec", "SpmdRun", "coordinate_spmd", "partition", "rows_problem", "run_spmd",
           "serve_spmd"]

#: free memory (DP) and bandwidth (DP/s) reported while unknown: large and finite, so that the
#: balancers' cost terms (e.g. DLAH's M_f·M_a with M_a = 0) stay exact zeros instead of NaN
LARGE = 1e18
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives
#: seconds of run between two checkpoints by default: what a death may cost in work done again, against
#: a checkpoint's cost (the domain sent to the coordinator) paid once per this many seconds
CHECKPOINT_S = 30.0


def partition(rows: int, n: int) -> list[int]:
    """Rows per worker of an even split (the first ``rows % n`` workers get one more)."""
    q, r = divmod(rows, n)
    return [q + (1 if i < r else 0) for i in range(n)]


class _Lost(Exception):
    """Worker *w* (the transport's) died."""

    def __init__(self, w: int, exitcode: Any):
        super().__init__(w, exitcode)
        self.w, self.exitcode = w, exitcode


#: what a worker answers (a reply is owed until it comes: a death waits for every survivor's)
_ANSWERED = (Step, Ship, Take, Gather)


class _Run:
    """State of one run (kept together so that the helpers stay small). Workers are addressed by their
    *position* on the line (row order); ``ids[pos]`` is the transport's worker there (the two differ
    once a worker has died)."""

    def __init__(self, transport: Transport, balancer: RepartitionBalancer | None, domain: np.ndarray, *,
                 iterations: int, halo: int, window: int, bandwidth: float | None, origin: float,
                 emulation: Emulation | None, progress: Progress | None, rng, backend: str,
                 record_decisions: bool = False, checkpoint: int | None = None):
        P = transport.n_workers
        h = halo
        self.t, self.balancer, self.P, self.h = transport, balancer, P, h
        self.P0 = P  # the workers the run started with (the trace's nodes)
        self.ids = list(range(P))
        self.pos_of = {w: w for w in range(P)}
        self.iterations, self.window, self.origin = iterations, window, origin
        self.progress = progress
        self.rng = rng
        self.every = checkpoint  # iterations between checkpoints (None: every CHECKPOINT_S seconds; 0: none)
        self.due = CHECKPOINT_S  # run time of the next timed checkpoint
        self.at: int | None = None  # the iteration a timed checkpoint was set for, until it is whole
        self.lo_bc, self.hi_bc = domain[:h].copy(), domain[-h:].copy()
        self.work = 0.0  # measured seconds of step, before emulation
        self.messages = 0
        self.moved_bytes = 0.0
        self.row_bytes = float(domain[0].nbytes)
        self.next_balance = window if balancer is not None and window < iterations else None
        self.fixed_bw = bandwidth
        speeds = list(emulation.speeds) if emulation else [1.0] * P
        self.trace = Trace(P, list(range(P)), balancer=balancer.name if balancer else "none", source=backend,
                           family="spmd",
                           speeds=speeds,
                           availability=list(emulation.availability) if emulation else [Constant().realise()] * P)
        self.windows: list[dict] = []
        self.decided = 0  # windows at whose end every node's rule was asked (distributed rules)
        self.record = self.trace.decisions if record_decisions else None
        self.transfers: list[tuple] = []
        self.owed: set[int] = set()  # positions whose reply to a Step, Ship, Take or Gather has not come
        self.dead: list[int] = []
        self.recovery: list[dict] = []
        self.kept: dict[int, dict[int, np.ndarray]] = {}  # iteration → position → block (a checkpoint coming)
        interior = domain[h:-h]
        blocks, first = [], 0
        for c in partition(len(interior), P):
            blocks.append(interior[first:first + c])
            first += c
        self.checkpoint = (-1, blocks)  # the last iteration every worker agrees on, and the blocks after it
        self.start_from(-1, blocks)

    def start_from(self, it: int, blocks: list[np.ndarray]) -> None:
        """Every worker (position) starts from *blocks* as they were after iteration *it*."""
        P, h = self.P, self.h
        self.counts = [len(b) for b in blocks]
        self.done = [it] * P  # last iteration finished per worker
        self.running = [False] * P
        self.edges: list[list] = [[None, None] for _ in range(P)]  # [worker][iteration % 2] = (top, bottom)
        self.sent_at = [0.0] * P
        self.win_busy = [0.0] * P
        self.win_loops = [0] * P
        bw = LARGE if self.fixed_bw is None else float(self.fixed_bw)
        self.view = SpmdView(P, list(self.counts), [0.0] * P, [0.0] * P, [LARGE] * P, [0.0] * P, [bw] * P)
        if self.balancer is not None:
            self.balancer.start(self.view, self.rng)
        for w, block in enumerate(blocks):
            self.send(w, Init(block))
            self.edges[w][it % 2] = (block[:h].copy(), block[-h:].copy())

    # --- messages ----------------------------------------------------------------------------------
    def now(self) -> float:
        return time.perf_counter() - self.origin

    def send(self, pos: int, msg: tuple) -> None:
        self.t.send(self.ids[pos], msg)
        self.messages += 1
        if type(msg) in _ANSWERED:
            self.owed.add(pos)

    def recv(self) -> tuple[int, tuple]:
        """The next message and its sender's position; an Error ends the run, a death is :class:`_Lost`
        (both raised here)."""
        while True:
            got = self.t.recv(POLL_S if self.progress and self.progress.enabled else None)
            if got is None:
                if self.progress:
                    self.progress.update(max(min(self.done) + 1, 0))
                continue
            w, msg = got
            self.messages += 1
            if type(msg) is Error:
                raise _step_error(w, msg)
            if type(msg) is Died:
                raise _Lost(w, msg.exitcode)
            pos = self.pos_of[w]
            self.owed.discard(pos)
            return pos, msg

    def expect(self, w: int, kind: type) -> tuple:
        """The next message, which must be a *kind* from worker *w*."""
        got, msg = self.recv()
        if got != w or type(msg) is not kind:  # pragma: no cover - a protocol error is a bug, never silent
            raise DlbkitError(f"unexpected message {type(msg).__name__} from worker {got} (waiting for "
                              f"{kind.__name__} from {w})")
        return msg

    # --- iterations --------------------------------------------------------------------------------
    def dispatch(self, j: int) -> None:
        """Send worker *j* its next iteration if it and its neighbours are ready for it."""
        if j < 0 or j >= self.P or self.running[j]:
            return
        d = self.done[j]
        it = d + 1
        if it >= self.iterations or it == self.next_balance:
            return
        if (j > 0 and self.done[j - 1] < d) or (j < self.P - 1 and self.done[j + 1] < d):
            return
        lo = self.lo_bc if j == 0 else self.edges[j - 1][d % 2][1]
        hi = self.hi_bc if j == self.P - 1 else self.edges[j + 1][d % 2][0]
        self.running[j] = True
        self.sent_at[j] = self.now()
        self.send(j, Step(it, lo, hi, self.keeps(it)))

    def keeps(self, it: int) -> bool:
        """Whether iteration *it* is a checkpoint's (its blocks sent whole)."""
        if self.every is not None:
            return self.every > 0 and (it + 1) % self.every == 0
        if self.at is None and self.now() >= self.due:  # time for one: at an iteration nobody has begun
            self.at = max(d + r for d, r in zip(self.done, self.running)) + 1
        return it == self.at

    def stepped(self, w: int, msg: Stepped) -> None:
        it, top, bottom, work, t_start, t_end, block = msg
        self.running[w] = False
        self.done[w] = it
        self.edges[w][it % 2] = (top, bottom)
        self.work += work
        self.win_busy[w] += t_end - t_start
        self.win_loops[w] += 1
        self.trace.add_interval(self.ids[w], self.first_row(w), self.counts[w], self.sent_at[w], t_start, t_end, it)
        if block is not None:  # a checkpoint's: whole once every worker's block of iteration `it` is in
            got = self.kept.setdefault(it, {})
            got[w] = block
            if len(got) == self.P:
                self.checkpoint = (it, [got[k] for k in range(self.P)])
                del self.kept[it]
                if it == self.at:
                    self.at, self.due = None, self.now() + CHECKPOINT_S

    def first_row(self, w: int) -> int:
        """Index of worker *w*'s first row among the interior rows."""
        return sum(self.counts[:w])

    def run(self) -> np.ndarray:
        while True:
            try:
                return self._iterate()
            except _Lost as e:
                self.recover(e.w, e.exitcode)

    def _iterate(self) -> np.ndarray:
        for w in range(self.P):
            self.dispatch(w)
        last = self.iterations - 1
        while min(self.done) < last:
            w, msg = self.recv()
            if type(msg) is not Stepped:  # pragma: no cover - ditto
                raise DlbkitError(f"unexpected message {type(msg).__name__} from worker {w}")
            self.stepped(w, msg)
            if self.progress:
                self.progress.update(min(self.done) + 1)
            if not self.at_window():
                for j in (w - 1, w, w + 1):
                    self.dispatch(j)
        blocks = []
        for w in range(self.P):
            self.send(w, Gather())
            blocks.append(self.expect(w, Block).block)
        return np.concatenate([self.lo_bc, *blocks, self.hi_bc])

    def at_window(self) -> bool:
        """At the end of a measurement window (every worker has finished the iteration before the next
        balancing): balance, move on to the next window and send every worker its iteration; True."""
        if self.next_balance is None or not all(d == self.next_balance - 1 for d in self.done):
            return False
        self.rebalance()
        nb = self.next_balance + self.window
        self.next_balance = nb if nb < self.iterations else None
        for j in range(self.P):
            self.dispatch(j)
        return True

    # --- a worker that dies --------------------------------------------------------------------------
    def recover(self, w: int, exitcode: Any) -> None:
        """Worker *w* died: once every survivor has answered what it was asked, start them all again from
        the checkpoint, the dead worker's rows joined to a neighbour's block (the module docstring)."""
        lost = {self.pos_of[w]: (w, exitcode)}
        self.owed.discard(self.pos_of[w])
        if self.every == 0:
            raise DlbkitError(f"SPMD worker {w} died (exit code {exitcode}) after iteration {self.done[self.pos_of[w]]}: "
                              "its rows are lost and checkpoint=0 keeps none, so the run cannot continue")
        while self.owed - set(lost):  # the replies the survivors owe, dropped (another may die meanwhile)
            try:
                self.recv()
            except _Lost as e:
                lost[self.pos_of[e.w]] = (e.w, e.exitcode)
                self.owed.discard(self.pos_of[e.w])
        self.owed.clear()
        if len(lost) >= self.P:
            raise DlbkitError(f"SPMD worker {w} died (exit code {exitcode}) and no worker is left")
        it, blocks = self.checkpoint
        ids, kept, early = [], [], []
        for pos, block in enumerate(blocks):
            if pos in lost:  # its rows join the block below (above, if none is left below)
                if kept:
                    kept[-1] = np.concatenate([kept[-1], block])
                else:
                    early.append(block)
                continue
            if early:
                block, early = np.concatenate([*early, block]), []
            ids.append(self.ids[pos])
            kept.append(block)
        for pos, (v, code) in sorted(lost.items()):
            self.dead.append(v)
            self.recovery.append({"worker": v, "exit": code, "time": self.now(), "after": self.done[pos],
                                  "from": it})
        self.ids, self.P = ids, len(ids)
        self.pos_of = {v: pos for pos, v in enumerate(ids)}
        self.kept.clear()
        self.at = None
        # what happened after the checkpoint is done again: dropped from the trace and the books
        self.trace.keep_rows(np.asarray(self.trace.round_of, dtype=np.int64) <= it)
        self.transfers = [t for t in self.transfers if t[0] <= it]
        self.windows = [x for x in self.windows if x["loop"] <= it]
        if self.balancer is not None and not self.balancer.central:
            self.decided = len(self.windows)
        if self.balancer is not None and self.window < self.iterations:
            # the first window end past the checkpoint's iteration: the window it ends was cut by the death
            # (its measurements are gone), so it is not balanced at once
            nb = ((it + 1) // self.window + 1) * self.window
            self.next_balance = nb if nb < self.iterations else None
        self.start_from(it, kept)
        self.checkpoint = (it, kept)

    # --- balancing ---------------------------------------------------------------------------------
    def rebalance(self) -> None:
        v = self.view
        now = self.now()
        v.loop, v.time = self.next_balance, now
        for w in range(self.P):
            n = self.win_loops[w]
            v.points[w] = self.counts[w]
            v.loop_time[w] = self.win_busy[w] / n if n else 0.0
            v.measured_speeds[w] = self.counts[w] / v.loop_time[w] if v.loop_time[w] > 0 else LARGE
            v.updated_at[w] = now
        self.windows.append({"loop": v.loop, "time": now, "points": list(v.points),
                             "loop_time": list(v.loop_time)})
        b = self.balancer
        if not b.central:
            self.decided += 1  # every node's rule is asked once per window
        # rows move only between neighbours on the line (the view's neighbours: the runtime's layout)
        decided = repartition(b, v, -1, v.neighbours, self.record) if b.central else \
            [t for i in range(self.P) for t in repartition(b, v, i, v.neighbours, self.record)]
        for tr in decided:
            self.move(tr)
        self.win_busy = [0.0] * self.P
        self.win_loops = [0] * self.P

    def move(self, tr: Transfer) -> None:
        src, dst, asked = tr.src, tr.dst, tr.n  # checked by balancers.decide.repartition
        k = max(0, min(asked, self.counts[src] - self.h))  # the sender keeps at least `halo` rows
        if k == 0:
            self.transfers.append((self.next_balance, self.ids[src], self.ids[dst], asked, 0))
            return
        toward = "hi" if dst == src + 1 else "lo"  # the sender's side that touches the receiver
        t0 = time.perf_counter()
        self.send(src, Ship(toward, k))
        rows, top, bottom = self.expect(src, Shipped)
        self.send(dst, Take("lo" if toward == "hi" else "hi", rows))
        dtop, dbottom = self.expect(dst, Took)
        dt = time.perf_counter() - t0
        p = (self.next_balance - 1) % 2  # everyone has finished iteration next_balance - 1
        self.edges[src][p] = (top, bottom)
        self.edges[dst][p] = (dtop, dbottom)
        self.counts[src] -= k
        self.counts[dst] += k
        self.moved_bytes += k * self.row_bytes
        if self.fixed_bw is None and dt > 0:  # measured: rows per second of the last transfer
            self.view.bandwidth[src] = self.view.bandwidth[dst] = k / dt
        self.transfers.append((self.next_balance, self.ids[src], self.ids[dst], asked, k))

    def finish(self, domain_out: np.ndarray) -> Trace:
        for w in range(self.P):
            self.send(w, Stop())
        self.t.stop()
        tr = self.trace
        tr.messages = self.messages
        tr.bytes = self.moved_bytes
        tr.end_time = self.now()
        tr.total_work = self.work
        tr.max_item = 0.0
        tr.events = len(tr.node)
        # the SPMD family's per-loop series, as the simulator records them (dlbkit.families.spmd.model.trace)
        series_from_intervals(tr, self.iterations)
        # a move recorded before iteration `it` was decided at the end of loop it - 1 (the simulator's
        # convention, dlbkit.families.spmd.model.trace); its time: when that loop ended on the sender
        ends = finish_times(tr) if self.iterations else None
        moved = [(it - 1, src, dst, k) for it, src, dst, _asked, k in self.transfers if k > 0]
        tr.transfers = [(k_loop, float(ends[k_loop, src]) if k_loop >= 0 else 0.0, src, dst, k)
                        for k_loop, src, dst, k in moved]
        steps = np.zeros(self.P0, dtype=np.int64)
        for _it, src in {(it, src) for it, src, _dst, _k in moved}:
            steps[src] += 1
        final_rows = [0] * self.P0  # per worker of the start (a dead one's: 0)
        for pos, w in enumerate(self.ids):
            final_rows[w] = self.counts[pos]
        tr.meta.update(mechanism="spmd", backend=tr.source, iterations=self.iterations, halo=self.h,
                       window=self.window, layout="line", steps=steps, decided=np.full(self.P0, self.decided),
                       rows=int(len(domain_out) - 2 * self.h), final_rows=final_rows,
                       dead=sorted(self.dead), recovery=self.recovery, checkpoint=self.every,
                       windows=self.windows, transfers=self.transfers,
                       balancer_params=self.balancer.get_params() if self.balancer else {})
        return tr


def coordinate_spmd(transport: Transport, balancer: RepartitionBalancer | None, domain: np.ndarray, *,
                    iterations: int, halo: int, window: int, origin: float, bandwidth: float | None = None,
                    emulation: Emulation | None = None, progress: Progress | None = None, rng=None,
                    backend: str = "local", record_decisions: bool = False,
                    checkpoint: int | None = None) -> tuple[np.ndarray, Trace]:
    """Drive *transport*'s workers through *iterations* steps of *domain*; return (final domain, trace).
    *record_decisions*: keep every decision with a copy of its view in ``trace.decisions``;
    *checkpoint*: iterations between checkpoints (None: one every :data:`CHECKPOINT_S` seconds; 0: none, a
    death ends the run).

    The backend stops every worker if anything here fails and closes the progress bar (base.drive).
    """
    run = _Run(transport, balancer, domain, iterations=iterations, halo=halo, window=window,
               bandwidth=bandwidth, origin=origin, emulation=emulation, progress=progress, rng=rng,
               record_decisions=record_decisions, checkpoint=checkpoint,
               backend=backend)
    out = run.run()
    return out, run.finish(out)


def _step_error(w: int, msg: Error):
    """A TaskError whose ``index`` is the iteration, with ``worker`` and ``iteration`` attributes."""
    it = msg.index
    err = task_error(msg)
    what = str(err).split(" failed: ", 1)[-1]
    err.args = (f"step failed on worker {w} at iteration {it}: {what}",)
    err.worker, err.iteration = w, it
    return err


# --- the worker ------------------------------------------------------------------------------------
@dataclass
class SpmdSpec:
    """What every worker needs (sent once, with the process or broadcast under MPI)."""

    step: Callable[[np.ndarray], Any]
    halo: int
    emulation: Emulation | None = None
    origin: float = 0.0  # perf_counter reading that is run time 0 on this process


def _step(spec: SpmdSpec, w: int, it: int, block: np.ndarray, lo, hi, send, user: UserCode,
          keep: bool = False) -> tuple | None:
    """One iteration: (new block, message to send), or None after reporting an Error."""
    if status.ON:  # a launched MPI job: the launcher names this iteration if the rank dies
        status.doing("iteration %d (worker %d, %d rows)", it, w, len(block))
    clock = time.perf_counter
    t_start = clock()
    try:
        ext = np.concatenate([lo, block, hi])
        with user:
            new = spec.step(ext)
        new = np.asarray(new)
        if new.shape != block.shape:
            raise ValueError(f"step returned an array of shape {new.shape}; expected {block.shape} "
                             f"(its input without the {spec.halo} halo rows at each end)")
        block[...] = new  # the cast the serial loop's ``domain[h:-h] = step(domain)`` makes
    except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the coordinator
        send(error_message(it, e))
        return None
    t_done = clock()
    work = t_done - t_start
    if spec.emulation is not None:
        spec.emulation.stretch(w, spec.origin, t_start, t_done)
    h = spec.halo
    return block, Stepped(it, block[:h], block[-h:], work, t_start - spec.origin, clock() - spec.origin,
                          block.copy() if keep else None)  # the whole block for a checkpoint


def serve_spmd(conn, w: int, spec: SpmdSpec, interruptible: UserCode | None = None) -> None:
    """Process entry point of an SPMD worker: follow the coordinator's orders until Stop
    (*interruptible*: :attr:`~..backends.base.Program.interruptible`)."""
    send = conn.send
    user = interruptible or UserCode()
    h = spec.halo
    block = np.empty(0)
    try:
        while True:
            msg = conn.recv()
            kind = type(msg)
            if kind is Step:
                out = _step(spec, w, msg.it, block, msg.lo, msg.hi, send, user, msg.keep)
                if out is None:
                    return
                block, reply = out
                send(reply)
            elif kind is Ship:
                side, k = msg
                if side == "lo":
                    rows, block = block[:k].copy(), block[k:].copy()
                else:
                    rows, block = block[-k:].copy(), block[:-k].copy()
                send(Shipped(rows, block[:h], block[-h:]))
            elif kind is Take:
                side, rows = msg
                block = np.concatenate([rows, block] if side == "lo" else [block, rows])
                send(Took(block[:h], block[-h:]))
            elif kind is Init:
                block = np.array(msg.block)  # a private, writable copy
            elif kind is Gather:
                send(Block(block))
            elif kind is Stop:
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run


# --- the family, as the backends run it ------------------------------------------------------------
def rows_problem(rows: int, halo: int, n: int, backend: str = "local", field: str = "domain") -> ConfigError | None:
    """A domain of *rows* rows must give every one of *n* workers at least *halo* interior rows."""
    need = 2 * halo + n * halo
    if rows >= need:
        return None
    if backend == "mpi":
        return ConfigError(field, f"{rows} rows", f"at least 2·halo + workers·halo = {need} rows for {n} worker "
                           f"ranks and halo {halo}")
    return ConfigError(field, f"{rows} rows", f"at least 2·halo + workers·halo = {need} rows ({halo} fixed "
                       f"boundary rows at each end, then ≥ {halo} rows per worker for {n} workers)")


class SpmdRun(Program):
    """*iterations* steps of *domain*; the outcome is ``(final domain, trace)``."""

    serve = staticmethod(serve_spmd)
    interruptible = True  # under MPI, Ctrl-C and the user's signal handlers interrupt the step

    def __init__(self, spec: SpmdSpec, balancer: RepartitionBalancer | None, domain: np.ndarray, *,
                 iterations: int, window: int, bandwidth: float | None, progress: bool | None, rng,
                 record_decisions: bool = False, checkpoint: int | None = None):
        self.spec, self.balancer, self.domain = spec, balancer, domain
        self.checkpoint = checkpoint
        self.record_decisions = record_decisions
        self.iterations, self.window, self.bandwidth, self.rng = iterations, window, bandwidth, rng
        self.emulation = spec.emulation
        self.progress = Progress(iterations, progress)

    def default_workers(self, cpus):
        return max(1, min(cpus, (len(self.domain) - 2 * self.spec.halo) // self.spec.halo))

    def sent_to_workers(self):
        return [("step", self.spec.step)]

    def problem(self, n_workers, backend):
        return rows_problem(len(self.domain), self.spec.halo, n_workers, backend)

    def shared(self):
        # rank 0's halo with its emulation: a worker rank checks and cuts its blocks by the halo, and
        # its own (a script passing halo per rank) failed every step ("step returned an array of shape")
        return self.emulation, self.spec.halo

    def setup(self, n_workers, origin, shared):
        self.spec.origin = origin
        self.spec.emulation = self.emulation = shared[0]
        self.spec.halo = shared[1]

    def worker_args(self, backend):
        return (self.spec,)

    def worker_args_at(self, backend, origin):
        return (dataclasses.replace(self.spec, origin=origin),)

    def coordinate(self, transport, backend):
        return coordinate_spmd(transport, self.balancer, self.domain, iterations=self.iterations, halo=self.spec.halo,
                               window=self.window, origin=self.spec.origin, bandwidth=self.bandwidth,
                               emulation=self.spec.emulation, progress=self.progress, rng=self.rng, backend=backend,
                               record_decisions=self.record_decisions, checkpoint=self.checkpoint)

    def failure_reason(self, e):
        if isinstance(e, TaskError) and hasattr(e, "worker"):
            return (f"step failed on worker {e.worker} (rank {e.worker + 1}) at iteration {e.iteration} "
                    "(traceback on rank 0)")
        return None


def run_spmd(spec: SpmdSpec, balancer: RepartitionBalancer | None, domain: np.ndarray, *, iterations: int,
             window: int, bandwidth: float | None = None, backend: str = "local", workers: int | None = None,
             progress: bool | None = None, rng=None, start_method: str | None = None,
             record_decisions: bool = False, client: Any = None,
             checkpoint: int | None = None) -> tuple[np.ndarray, Trace]:
    """The SPMD family's runner: *iterations* steps of *domain* on *backend*; ``(domain, trace)``.

    *balancer* is a resolved, validated repartition balancer or None (no balancing); *workers* None
    means the usable CPUs, at most one per *halo* interior rows (local), or the job's worker ranks (MPI)."""
    run = SpmdRun(spec, balancer, domain, iterations=iterations, window=window, bandwidth=bandwidth,
                  progress=progress, rng=rng, record_decisions=record_decisions, checkpoint=checkpoint)
    return execute(run, backend, workers=workers, start_method=start_method, client=client)
