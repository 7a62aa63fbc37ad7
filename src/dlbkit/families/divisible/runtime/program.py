"""The map family (``dlbkit.map``): a chunking balancer hands out chunks of items to a user's function.

The coordinator is the runtime twin of the simulator's master.

It owns the same :class:`~dlbkit.families.divisible.model.view.LoopView` and writes the same
:class:`~dlbkit.model.trace.Trace` as :mod:`dlbkit.families.divisible.sim.engine`, so a chunking balancer cannot
tell a real run from a simulated one and every metric and plot works on both. Measurements arrive
with each worker's result (which doubles as its next request), exactly as in the simulator.

Faults: a worker that dies has its outstanding chunk handed, whole, to the next worker that asks
(results are kept per item and accepted once, so every item is computed and returned exactly once;
the local backend only: under MPI a dead rank ends the job). An exception in the user's function
stops every worker and is raised as :class:`TaskError` with the item's index and the worker's
traceback; so is a result that cannot be pickled (the item and the pickling problem named).

The worker (:func:`serve`) asks for work by reporting (:class:`~.messages.Ready` first, then
each :class:`~.messages.Done` doubles as the next request), times every item with
``time.perf_counter`` and, when emulating a slower node, sleeps so that the chunk takes as long as it
would there. It never decides anything: chunk sizes come from the coordinator.

Messages (:mod:`.messages`): coordinator → worker ``Work``, ``Stop()``; worker → coordinator
``Ready`` once at start, ``Done`` after each chunk, an ``Error`` (index = the item's) when the
user's function raised; the local transport adds ``Died``.

:func:`run_map` is the family's runner: a resolved balancer in, ``(results, trace)`` out, on
either backend.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import deque
from typing import Any, Callable, Sequence

from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import end_step, start_step
from dlbkit.families.divisible.balancers.decide import chunk
from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.model.availability import Constant
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import (Program, Transport, UserCode, drive, error_message, keep_finished, raised,
                                         send_or_report, short_repr, task_error, unpicklable)
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.messages import Died, Error, Stop
from dlbkit.runtime.progress import Progress
from dlbkit.runtime import status
from dlbkit.families.divisible.model.links import link_latencies
from dlbkit.families.divisible.runtime.messages import Done, Ready, Work

__all__ = ["coordinate", "coordinate_step", "Pool", "serve", "run_chunk", "MapRun", "PoolRun", "PoolStep", "RankStep",
           "run_map"]

_MISSING = object()
POLL_S = 0.2  # how often the progress bar refreshes while no message arrives


@dataclasses.dataclass
class Pool:
    """What the coordinator knows of its workers between the steps of a persistent pool
    (``dlbkit.Loop``): which are alive, which have announced themselves (Ready), and which are
    waiting for work with a request the previous step could not serve."""

    n_workers: int
    alive: set = dataclasses.field(default_factory=set)
    ready: set = dataclasses.field(default_factory=set)
    idle: list = dataclasses.field(default_factory=list)  # workers waiting for work, in worker order

    def __post_init__(self):
        self.alive = set(range(self.n_workers))


def coordinate(transport: Transport, balancer: ChunkingBalancer, items: Sequence, *, origin: float,
               emulation: Emulation | None = None, progress: Progress | None = None,
               rng=None, backend: str = "local", record_decisions: bool = False,
               return_exceptions: bool = False, on_results: Callable[[int, list], None] | None = None
               ) -> tuple[list, Trace]:
    """Drive *transport*'s workers through *items* with *balancer*, then stop them; (results, trace).
    *record_decisions*: keep every decision with a copy of its view in ``trace.decisions``;
    *return_exceptions*: a failed item's exception is its result (the workers were told so too);
    *on_results(first, results)*: called with each chunk's results as they are booked (a journal)."""
    results, trace, _ = coordinate_step(transport, balancer, items, origin=origin, emulation=emulation,
                                        progress=progress, rng=rng, backend=backend,
                                        record_decisions=record_decisions, return_exceptions=return_exceptions,
                                        on_results=on_results)
    for w in range(transport.n_workers):
        transport.send(w, Stop())
    transport.stop()
    return results, trace


def coordinate_step(transport: Transport, balancer: ChunkingBalancer, items: Sequence, *, origin: float,
                    emulation: Emulation | None = None, progress: Progress | None = None, rng=None,
                    backend: str = "local", record_decisions: bool = False, pool: Pool | None = None,
                    state: dict | None = None, send_items: bool | None = None,
                    return_exceptions: bool = False,
                    on_results: Callable[[int, list], None] | None = None) -> tuple[list, Trace, dict | None]:
    """One run of the loop *items* on *transport*'s workers, which stay up: (results, trace, carried).

    The one coordinator of the map family: :func:`coordinate` (``dlbkit.map``) is one step and a
    stop; a persistent pool (``dlbkit.Loop``) calls it once per time step with its :class:`Pool`,
    the balancer's *state* carried from the previous step (``Balancer.carry``), and *send_items*
    True (the workers were started before these items existed). The trace's times are seconds since
    *origin* (the pool's start: one clock for every step), ``meta["step_start"]`` when this step began;
    *carried* is what the balancer carries to the next step (None: nothing).

    An item whose function raised ends the step with a :class:`~dlbkit.errors.TaskError` that keeps
    every result already in and the part's trace (:func:`~..backends.base.keep_finished`); with
    *return_exceptions* it is that item's result instead (:func:`~..backends.base.raised`), the
    item's index in ``trace.meta["failed"]``, and the step goes on.
    """
    step = _Step(transport, balancer, items, origin=origin, emulation=emulation, progress=progress, rng=rng,
                 backend=backend, record_decisions=record_decisions, pool=pool, state=state, send_items=send_items,
                 return_exceptions=return_exceptions, on_results=on_results)
    step.run()
    return step.results, step.finish(), end_step(balancer, step.view)


class _Step:
    """The state of one step of :func:`coordinate_step` and its rules: hand out chunks, take results."""

    def __init__(self, transport: Transport, balancer: ChunkingBalancer, items: Sequence, *, origin: float,
                 emulation: Emulation | None, progress: Progress | None, rng, backend: str, record_decisions: bool,
                 pool: Pool | None, state: dict | None, send_items: bool | None, return_exceptions: bool = False,
                 on_results: Callable[[int, list], None] | None = None):
        N = len(items)
        P = transport.n_workers
        self.transport, self.balancer, self.items, self.origin = transport, balancer, items, origin
        self.progress, self.backend = progress, backend
        self.N, self.P = N, P
        self.one_shot = pool is None
        self.pool = pool if pool is not None else Pool(P)
        speeds = list(emulation.speeds) if emulation else [1.0] * P
        self.view = LoopView(N, P, speeds)
        start_step(balancer, self.view, rng, state)
        self.trace = Trace(P, list(range(P)), balancer=balancer.name, source=backend, family="divisible", speeds=speeds,
                           availability=list(emulation.availability) if emulation else [Constant().realise()] * P)
        self.results: list[Any] = [_MISSING] * N
        self.item_cost = [0.0] * N  # measured seconds per item (this machine, before emulation)
        self.outstanding: dict[int, tuple[int, int, float]] = {}  # worker -> (first, count, t_ask)
        self.requeued: deque[tuple[int, int]] = deque()
        self.waiting: list[tuple[int, float]] = []  # workers asking while nothing is left to hand out
        self.next_item = 0
        self.done = 0
        self.messages = 0
        self.faults: list[tuple[int, int, int, float]] = []  # (worker, first, count, time) of lost chunks
        self.send_items = not transport.shares_items if send_items is None else send_items
        self.clock = time.perf_counter
        self.record = self.trace.decisions if record_decisions else None
        self.step_start = 0.0 if self.one_shot else self.clock() - origin
        self.return_exceptions = return_exceptions
        self.on_results = on_results
        self.failed: list[int] = []  # items whose exception is their result (return_exceptions)

    def give(self, w: int, t_ask: float) -> None:
        """Worker *w* asked at *t_ask*: send it a lost chunk, or the balancer's next one, or keep it waiting."""
        if self.requeued:
            first, count = self.requeued.popleft()
        elif self.next_item < self.N:
            view = self.view
            view.time = self.clock() - self.origin
            view.remaining = self.N - self.next_item
            count = chunk(self.balancer, view, w, self.record)
            first = self.next_item
            self.next_item += count
        else:
            self.waiting.append((w, t_ask))
            return
        self.outstanding[w] = (first, count, t_ask)
        payload = list(self.items[first:first + count]) if self.send_items else None
        try:
            self.transport.send(w, Work(first, count, payload))
        except Exception:  # MPI pickles the items it sends: name the one that cannot be
            for j, x in enumerate(payload or ()):
                reason = unpicklable(x)
                if reason is not None:
                    # the bad input named as a field; a Loop step's items are sent, as an MPI run's
                    raise ConfigError(f"items[{first + j}]", short_repr(x, 80), "picklable: the items of a Loop "
                                      f"step (and of an MPI run) are sent to their worker: {reason}") from None
            raise
        self.messages += 1

    def run(self) -> None:
        """Hand out every item and take every result."""
        pool, progress, N = self.pool, self.progress, self.N
        # a later step: the workers that ended the previous one asking for work get it now, in worker order
        for w in sorted(pool.idle):
            if w in pool.alive and self.done < N:
                self.give(w, self.step_start)
        pool.idle = []
        # the backend stops every worker if anything here fails, and closes the progress bar (base.drive)
        while self.done < N:
            got = self.transport.recv(POLL_S if progress and progress.enabled else None)
            if got is None:
                if progress:
                    progress.update(self.done)
                continue
            w, msg = got
            self.messages += 1
            kind = type(msg)
            if kind is Done:
                self.on_done(w, msg)
            elif kind is Ready:
                pool.ready.add(w)
                self.give(w, msg.t)
            elif kind is Error:
                raise self.on_error(msg)
            elif kind is Died:
                self.on_died(w, msg.exitcode)
            else:  # pragma: no cover - a protocol error is a bug, never silent
                raise DlbkitError(f"unexpected message {kind.__name__} from worker {w}")
        # every live worker that has announced itself is now waiting for work (its last message asked)
        pool.idle = sorted(w for w in pool.ready & pool.alive if w not in self.outstanding)

    def on_done(self, w: int, msg: Done) -> None:
        """Worker *w*'s chunk: its results and measurements booked, and its next chunk sent."""
        first, count, res, t_start, t_end, times = msg
        if self.outstanding.get(w, (None,))[:2] != (first, count):
            return  # a stale copy of a chunk already reassigned: never counted twice
        t_ask = self.outstanding.pop(w)[2]
        if self.return_exceptions:
            res = self.exceptions_in(first, res)
        self.results[first:first + count] = res
        if self.on_results is not None:
            self.on_results(first, res)
        self.item_cost[first:first + count] = times
        self.done += count
        _measure(self.view, w, count, t_start, t_end, t_ask, times)
        self.trace.add_interval(w, first, count, t_ask, t_start, t_end)
        if self.progress:
            self.progress.update(self.done)
        if self.done < self.N:
            self.give(w, t_end)

    def exceptions_in(self, first: int, res: list) -> list:
        """*res* with each item that failed (an ``Error`` in its place, sent by a worker that returns
        exceptions) as its exception, booked in :attr:`failed`."""
        for j, r in enumerate(res):
            if type(r) is Error:
                res[j] = raised(r, index=first + j)
                self.failed.append(first + j)
        return res

    def on_error(self, msg: Error) -> BaseException:
        """The TaskError that ends the step, with every result in and the part's trace."""
        err = task_error(msg)
        kept = {i: r for i, r in enumerate(self.results) if r is not _MISSING}
        return keep_finished(err, kept, self.finish(), self.done, self.N, "items")

    def on_died(self, w: int, exitcode: int | None) -> None:
        """Worker *w* died: its chunk goes whole to the next worker that asks (one waiting now, first)."""
        self.pool.alive.discard(w)
        lost = self.outstanding.pop(w, None)
        if lost is not None:
            self.faults.append((w, lost[0], lost[1], self.clock() - self.origin))
            self.requeued.append(lost[:2])
            while self.requeued and self.waiting:
                self.give(*self.waiting.pop(0))
        if not self.pool.alive:
            raise DlbkitError(f"every worker died (the last, {w}, with exit code {exitcode}); "
                              f"{self.N - self.done} of {self.N} items were not computed")

    def finish(self) -> Trace:
        """The step's trace, its totals filled in."""
        trace, item_cost = self.trace, self.item_cost
        n_chunks = len(trace.node)
        trace.messages = self.messages + (self.P if self.one_shot else 0)  # one-shot: and a Stop each
        trace.end_time = max(trace.t_end, default=0.0)
        trace.total_work = float(sum(item_cost))
        trace.max_item = float(max(item_cost, default=0.0))
        trace.events = 2 * (n_chunks + self.P) + n_chunks
        trace.meta.update(mechanism="self-scheduling", backend=self.backend, item_cost=item_cost, faults=self.faults,
                          balancer_params=self.balancer.get_params())
        if self.failed:
            trace.meta["failed"] = sorted(self.failed)
        if not self.one_shot:
            trace.end_time = max(trace.end_time, self.step_start)  # an empty step ends where it began
            trace.meta.update(step_start=self.step_start, step_items=self.N)
        else:  # each worker's requests' measure of its link, kept in the recording (a Loop's: Loop.trace)
            trace.meta["link_latency"] = link_latencies(trace)
        return trace


def _measure(view: LoopView, w: int, count: int, t_start: float, t_end: float, t_ask: float,
             times: Sequence[float]) -> None:
    """Book a chunk's measurements in the view, as the simulator does when a result arrives."""
    dt = t_end - t_start
    busy = sum(times)
    scale = dt / busy if busy > 0 else 0.0  # emulation stretches every item alike
    view.items_done[w] += count
    view.chunks_done[w] += 1
    view.compute_time[w] += dt
    view.sq_item_time[w] += scale * scale * math.fsum(t * t for t in times)
    view.overhead_time[w] += max(t_start - t_ask, 0.0)
    view.last_chunk[w] = count
    view.last_time[w] = dt
    view.updated_at[w] = t_end


# --- the worker ------------------------------------------------------------------------------------
def run_chunk(fn: Callable, items: Sequence | None, payload: Sequence | None, first: int, count: int,
              w: int, emulation: Emulation | None, origin: float, conn_send: Callable,
              user: UserCode, keep_going: bool = False) -> bool:
    """Compute one chunk and report it; False if the user's function raised (reported as an Error).
    *user* marks the computing of the chunk's items (:class:`~..backends.base.UserCode`). *keep_going*
    (``return_exceptions``): an item whose function raises, or whose result cannot be pickled, has
    its ``Error`` as its result, and the chunk goes on; only a ``BaseException`` that is not an
    ``Exception`` (Ctrl-C, an exit) still ends it."""
    if status.ON:  # a launched MPI job: the launcher names this chunk if the rank dies
        status.doing("computing items %d–%d", first, first + count - 1) if count > 1 else \
            status.doing("computing item %d", first)
    source, offset = (payload, 0) if payload is not None else (items, first)
    results = [None] * count
    item_time = [0.0] * count
    clock = time.perf_counter
    j = 0
    t_start = t_prev = clock()
    try:
        with user:
            for j in range(count):
                try:
                    results[j] = fn(source[offset + j])
                except Exception as e:  # noqa: BLE001 - kept in place, or ends the chunk (below)
                    if not keep_going:
                        raise
                    results[j] = error_message(first + j, e)
                t = clock()  # one clock read per item: the end of one item starts the next
                item_time[j] = t - t_prev
                t_prev = t
    except BaseException as e:  # noqa: BLE001 - every failure of user code goes to the caller
        conn_send(error_message(first + j, e))
        return False
    if emulation is not None:
        emulation.stretch(w, origin, t_start, t_prev)
    name = getattr(fn, "__qualname__", None) or short_repr(fn, 60)
    return send_or_report(conn_send, Done(first, count, results, t_start - origin, clock() - origin, item_time),
                          lambda: ((first + j, f"the result of {name}", r) for j, r in enumerate(results)),
                          _in_place if keep_going else None)


def _in_place(done: Done, index: int, error: Error) -> Done:
    done.results[index - done.first] = error  # the list the message holds
    return done


def serve(conn, w: int, fn: Callable, items: Sequence | None, emulation: Emulation | None,
          origin: float, keep_going: bool = False, interruptible: UserCode | None = None) -> None:
    """The worker loop: serve chunks until Stop or the coordinator goes away (*keep_going*: :func:`run_chunk`'s)."""
    send = conn.send
    user = interruptible or UserCode()
    try:
        send(Ready(time.perf_counter() - origin))
        while True:
            msg = conn.recv()
            if type(msg) is Stop:
                return
            first, count, payload = msg  # a Work
            if not run_chunk(fn, items, payload, first, count, w, emulation, origin, send, user, keep_going):
                return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        return  # the coordinator ended the run


def answer(send: Callable, msg: Work | None, w: int, origin: float, fn: Callable, emulation: Emulation | None,
           keep_going: bool = False) -> None:
    """The worker as one answer per message (:attr:`~..backends.base.Program.answer`, the Dask
    backend): at start a ``Ready``, then for each ``Work`` its chunk computed and reported, as
    :func:`serve` does (the items travel with the chunk)."""
    if msg is None:
        send(Ready(time.perf_counter() - origin))
        return
    first, count, payload = msg
    run_chunk(fn, None, payload, first, count, w, emulation, origin, send, UserCode(), keep_going)


def chunk_name(fn: Callable, msg: Work) -> str:
    """A chunk in words, for a Dask dashboard: ``"square items 0–99"``."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    first, count = msg.first, msg.count
    return f"{name} item {first}" if count == 1 else f"{name} items {first}–{first + count - 1}"


# --- the family, as the backends run it ------------------------------------------------------------
def empty_trace(balancer: ChunkingBalancer, n: int, backend: str) -> Trace:
    """The trace of a run with no items: *n* workers that did nothing."""
    return Trace(n, list(range(n)), balancer=balancer.name, source=backend, family="divisible", speeds=[1.0] * n,
                 availability=[Constant().realise()] * n)


class MapRun(Program):
    """``fn`` over ``items``, chunked by a chunking balancer; the outcome is ``(results, trace)``."""

    serve = staticmethod(serve)
    answer = staticmethod(answer)
    interruptible = True  # under MPI, Ctrl-C and the user's signal handlers interrupt the user's function

    def __init__(self, fn: Callable, items: Sequence, balancer: ChunkingBalancer, *,
                 emulation: Emulation | None, progress: bool | None, rng, record_decisions: bool = False,
                 return_exceptions: bool = False, on_results: Callable[[int, list], None] | None = None):
        self.fn, self.items, self.balancer, self.rng = fn, items, balancer, rng
        self.record_decisions = record_decisions
        self.return_exceptions = return_exceptions
        self.on_results = on_results  # rank 0's (the process that coordinates), None elsewhere
        self.emulation = emulation
        self.n_items = len(items)
        self.progress = Progress(len(items), progress)
        self.origin = 0.0

    def empty(self, n_workers, backend):
        if self.n_items:
            return None
        return [], empty_trace(self.balancer, n_workers or 1, backend)

    def shared(self):
        return self.n_items, self.emulation  # rank 0's items decide; the others' may be None

    def setup(self, n_workers, origin, shared):
        self.n_items, self.emulation = shared
        self.origin = origin

    def worker_args(self, backend):
        # under MPI the items travel with each work order: only rank 0's items matter
        return (self.fn, self.items if backend == "local" else None, self.emulation, self.origin,
                self.return_exceptions)

    def answer_args(self, backend):
        return (self.fn, self.emulation, self.return_exceptions)

    def task_name(self, msg):
        return chunk_name(self.fn, msg)

    def coordinate(self, transport, backend):
        return coordinate(transport, self.balancer, self.items, origin=self.origin, emulation=self.emulation,
                          progress=self.progress, rng=self.rng, backend=backend,
                          record_decisions=self.record_decisions, return_exceptions=self.return_exceptions,
                          on_results=self.on_results)

    def sent_to_workers(self):
        return [("fn", self.fn), ("items", self.items)]

    def for_workers(self, outcome):
        """The worker ranks get all of the trace but the per-item costs, the bulk of it, which only a
        recording needs (and rank 0 writes recordings)."""
        results, trace = outcome
        return results, dataclasses.replace(trace, meta={k: v for k, v in trace.meta.items() if k != "item_cost"})


def run_map(fn: Callable[[Any], Any], items: Sequence, balancer: ChunkingBalancer, *, backend: str = "local",
            workers: int | None = None, emulation: Emulation | None = None, progress: bool | None = None,
            rng=None, start_method: str | None = None, record_decisions: bool = False,
            client=None, return_exceptions: bool = False,
            on_results: Callable[[int, list], None] | None = None) -> tuple[list, Trace]:
    """The map family's runner: ``[fn(x) for x in items]`` on *backend*; ``(results, trace)``.

    *balancer* is a resolved, validated chunking balancer; *workers* None means the usable CPUs
    (local), the job's worker ranks (MPI) or the Dask cluster's workers (*client*'s);
    *return_exceptions*: a failed item's exception is its result (:func:`coordinate_step`);
    *on_results(first, results)*: each chunk's results as they are booked (a journal's)."""
    run = MapRun(fn, items, balancer, emulation=emulation, progress=progress, rng=rng,
                 record_decisions=record_decisions, return_exceptions=return_exceptions, on_results=on_results)
    return execute(run, backend, workers=workers, start_method=start_method, client=client)


class PoolRun(MapRun):
    """The family of a persistent pool (``dlbkit.Loop``): the workers run :func:`serve` with *fn* and
    no items (each chunk's items travel with its work order, since the workers were started before
    any step's items existed); the coordinator runs :func:`coordinate_step` once per step (the pool
    only starts its workers with this family: ``local.open_pool``, which never calls ``coordinate``)."""

    def __init__(self, fn: Callable, *, emulation: Emulation | None):
        super().__init__(fn, (), None, emulation=emulation, progress=False, rng=None)

    def worker_args(self, backend):
        return (self.fn, None, self.emulation, self.origin)

    def sent_to_workers(self):
        return [("fn", self.fn)]


class PoolStep(Program):
    """One time step of a local (or Dask) ``dlbkit.Loop`` on its pool's running workers (*pool_run*'s): the
    coordinator of every step (:func:`coordinate_step`), which leaves the workers up; its outcome is
    ``(results, trace, carried)``. :meth:`run` goes through the backends' one failure path
    (:func:`~..backends.base.drive`), as ``dlbkit.map`` does: whatever fails, every worker is killed and
    the bar closed, and the user's code that raised in the coordinator (a balancer's rule) is noted."""

    serve = staticmethod(serve)

    def __init__(self, pool_run: PoolRun, pool: Pool, items: Sequence, balancer: ChunkingBalancer, *,
                 progress: Progress, rng, record_decisions: bool, state: dict | None,
                 on_results: Callable[[int, list], None] | None = None):
        self.pool_run, self.pool, self.items, self.balancer = pool_run, pool, items, balancer
        self.emulation, self.progress, self.rng = pool_run.emulation, progress, rng
        self.record_decisions, self.state, self.on_results = record_decisions, state, on_results

    def worker_args(self, backend):
        return self.pool_run.worker_args(backend)

    def coordinate(self, transport, backend):
        return coordinate_step(transport, self.balancer, self.items, origin=self.pool_run.origin,
                               emulation=self.emulation, progress=self.progress, rng=self.rng, backend=backend,
                               record_decisions=self.record_decisions, pool=self.pool, state=self.state,
                               send_items=True, on_results=self.on_results)

    def run(self, transport: Transport, backend: str = "local") -> tuple:
        return drive(self, transport, backend)


class RankStep(MapRun):
    """One time step of a ``dlbkit.Loop`` under MPI: the job's ranks are its persistent workers (mpiexec
    started them once), and each step is one run of the backend on them, as ``dlbkit.map`` is, with
    the coordinator of every step (:func:`coordinate_step`) and one clock: every rank keeps the run
    time 0 of the first step (its own ``perf_counter`` reading), so times and a time-varying emulation
    run on across steps. The balancer's *state* goes in; what it carries out is :attr:`carried`
    (rank 0)."""

    def __init__(self, fn: Callable, items: Sequence, balancer: ChunkingBalancer, *, emulation: Emulation | None,
                 progress: bool | None, rng, record_decisions: bool, first_origin: float | None, state: dict | None,
                 on_results: Callable[[int, list], None] | None = None):
        super().__init__(fn, items, balancer, emulation=emulation, progress=progress, rng=rng,
                         record_decisions=record_decisions, on_results=on_results)
        self.first_origin, self.state, self.carried = first_origin, state, None
        self.transport = None  # rank 0's, while the coordinator runs
        self.interrupted: BaseException | None = None

    def interrupt(self, error: BaseException) -> None:
        """End this step on rank 0 with *error* (the Loop was closed by a signal handler during it):
        at the coordinator's next wait, or at its start if it has not started yet; nothing on a worker
        rank, whose step ends when rank 0 stops it."""
        self.interrupted = error
        if self.transport is not None:
            self.transport.interrupt(error)

    def setup(self, n_workers, origin, shared):
        super().setup(n_workers, origin, shared)
        if self.first_origin is None:
            self.first_origin = origin
        self.origin = self.first_origin

    def coordinate(self, transport, backend):
        self.transport = transport
        if self.interrupted is not None:
            transport.interrupt(self.interrupted)
        results, trace, self.carried = coordinate_step(
            transport, self.balancer, self.items, origin=self.origin, emulation=self.emulation,
            progress=self.progress, rng=self.rng, backend=backend, record_decisions=self.record_decisions,
            pool=Pool(transport.n_workers), state=self.state, on_results=self.on_results)
        for w in range(transport.n_workers):
            transport.send(w, Stop())
        transport.stop()
        return results, trace
