"""``dlbkit.Loop``: a persistent pool of workers for a time-stepping application, the same parallel
loop run once per time step (:mod:`dlbkit.families.divisible.model.steps`).

The workers start once, with the user's function, and serve every step; each ``loop.map(items)`` is
one run of the map family's coordinator (:func:`dlbkit.families.divisible.runtime.program.coordinate_step`, the
one ``dlbkit.map`` runs too) on the same workers, and gives the same Trace and metrics a
``dlbkit.map`` call would. Between steps the balancer carries what it learned, when it declares it
(``Balancer.carries_state``: time-stepping AWF's weights, AF's μ and σ); under ``balancer="auto"``
the face predicts every candidate's next step on the simulator (:mod:`dlbkit.families.divisible.sim.auto`) and the
balancer chooses.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError, DlbkitError, TaskError
from dlbkit.families.divisible.model.seeding import DIVISIBLE
from dlbkit.model.seeding import streams
from dlbkit.families.divisible.model.links import link_latencies
from dlbkit.families.divisible.model.steps import join_steps, step_trace
from dlbkit.model.trace import Trace
from dlbkit.families.result import Result
from dlbkit.families.divisible.face.run import DEFAULT_BALANCER, auto_after_step, check_items, in_whole, map_setup, \
    merged
from dlbkit.families.run import RunResult, agreed, check_record, coordinates, on_every_rank, open_journal
from dlbkit.runtime.journal import Journal, fingerprint, function_name
from dlbkit.runtime.backends.local import default_workers, open_pool
from dlbkit.families.divisible.runtime.program import Pool, PoolRun, PoolStep
from dlbkit.runtime.progress import Progress, check_progress

__all__ = ["Loop"]

_CLOSED_DURING = "this Loop was closed during the step (close() from a signal handler)"


class Loop:
    """A pool of worker processes that runs ``fn`` over a loop's items once per time step.

    ``Loop(fn, balancer=..., workers=..., backend="local", emulate=..., params=..., seed=...)`` starts
    the workers (as :func:`dlbkit.map` would: *emulate* a Platform, a platform TOML path or a list of
    speed factors, which also sets the worker count; *workers* default: the usable CPUs); then
    ``loop.map(items)`` returns ``[fn(x) for x in items]`` in item order, and ``loop.run(items)`` the
    step's :class:`~dlbkit.families.run.RunResult` (its trace and metrics, as ``dlbkit.run_map`` gives).
    ``loop.steps`` holds every step's result, ``loop.trace`` the trace of all steps on one clock
    (its metrics over all steps: ``loop.result()``), ``loop.save(path)`` records it for
    :func:`dlbkit.replay` and ``dlbkit advise`` (*record*: a path where ``close`` saves it). ``close()`` (or leaving a ``with`` block) stops the
    workers; a failure in a step (a :class:`~dlbkit.errors.TaskError`) stops them too, and the loop is
    then closed (with *record*, the steps before the failure are saved).

    *balancer* ``"auto"`` runs a robust default (AWF-C) and switches, between steps, to the chunking
    balancer predicted best for the next step (:class:`~dlbkit.families.divisible.balancers.auto.Auto`: its
    parameters ``candidates``, ``every``, ``shift``, ``max_items`` in *params*); each step's choice
    and predictions are in ``loop.steps[k].trace.meta["auto"]``.

    The workers are tied to the process that created the loop (killed when it ends, however it
    ends: :mod:`dlbkit.runtime.backends.local`); on Linux they are tied to the creating *thread*,
    so create the loop in the thread that will use it. Under ``backend="dask"`` (*client*: a
    ``distributed.Client``, a scheduler's address, or None for the Client running here) the pool is
    the Dask cluster's workers (the first *workers*, default all), each chunk a Dask task pinned to
    the worker the balancer chose; ``close()`` leaves the cluster running. Under ``backend="mpi"`` (run the script with
    ``mpiexec -n N``; every rank makes the same Loop and calls ``map`` with the same items) the job's
    ranks are the pool: each step is one run of the MPI backend on them (rank 0 coordinates, every
    rank gets the results), on one clock from the first step, the balancer's state carried on rank 0.

    *journal*: a file to which each step's results are appended as they arrive (flushed;
    :mod:`dlbkit.runtime.journal`), so that a rerun of the same script after a crash (the process killed,
    a time limit, under MPI a dead rank) gets, at each step, the results the journal holds without
    computing them: a step it holds whole is not run (its trace is empty), the step that was cut short
    computes only the items missing, and every step returns what an uninterrupted run would. Step *k*'s
    items must be the journaled step *k*'s (their count and a SHA-256 of each pickled): other items, or
    another function, are a ConfigError. ``steps[k].trace.meta["journal"]`` says what was reused.

    >>> import dlbkit
    >>> with dlbkit.Loop(abs, workers=2) as loop:
    ...     [loop.map([-1, 2, -3]) for _ in range(2)]
    [[1, 2, 3], [1, 2, 3]]
    """

    def __init__(self, fn: Callable[[Any], Any], *, balancer: Balancer | str = DEFAULT_BALANCER,
                 params: Mapping | None = None, workers: int | None = None, backend: str = "local",
                 emulate: Any = None, master: str | int | None = None, seed: int = 0,
                 record: str | Path | None = None, start_method: str | None = None,
                 record_decisions: bool = False, client: Any = None, journal: str | Path | None = None):
        self._transport = None
        self._journal: Journal | None = None
        # one step at a time: two steps at once would share the workers' pipes and wait for each
        # other's replies forever; calls from several threads take turns (the order they come in)
        # (re-entrant: a signal handler that closes the loop while this thread is inside close() must not
        # wait for itself)
        self._turn = threading.RLock()
        self._stepping: int | None = None  # the thread running a step, to refuse a step inside one
        self._rank_step = None  # under MPI, the step running now (a RankStep)
        self._closing: DlbkitError | None = None  # the error a close() during an MPI step ends it with
        def checks():
            setup = map_setup(fn, balancer, params, backend, seed, emulate, master, workers, client)
            if not isinstance(record_decisions, bool):
                raise ConfigError("record_decisions", record_decisions, "True or False")
            check_record(record, backend)
            return (*setup, open_journal(journal, backend, function_name(fn), kind="steps"))  # rank 0's under MPI

        self.balancer, self.emulation, n, seed, self._journal = agreed(backend, checks)  # under MPI: every rank's verdict
        self.journal = journal
        self._step_no = 0  # steps begun: the next one's index in the journal
        self._by_step: dict[int, dict] = {}  # rank 0's journal's results, step → item index → result
        for key, v in (self._journal.done.items() if self._journal is not None else ()):
            if key[0] != "step":
                self._by_step.setdefault(key[0], {})[key[1]] = v
        self.backend = backend
        self.record_decisions = record_decisions
        self.seed = seed
        self.record = record
        self._rng = streams(seed, DIVISIBLE).rng("balancer")  # the divisible simulator's, as dlbkit.map's
        self._state: dict | None = None
        self._carried: list = []
        self._parts: list[Trace] = []
        self.steps: list[RunResult] = []
        if backend == "mpi":  # the job's ranks are the pool: mpiexec started them, every step reuses them
            self._fn, self._workers, self._origin = fn, workers, None
            self.n_workers = _mpi_workers()
            self._transport = _Ranks()
            return
        self._family = PoolRun(fn, emulation=self.emulation)
        if backend == "dask":  # the Dask cluster's workers are the pool; they run on after close()
            from dlbkit.runtime.backends.dask import open_pool as open_dask_pool
            self._transport = open_dask_pool(self._family, workers=n, client=client)
        else:
            self._transport = open_pool(self._family, workers=n or default_workers(), start_method=start_method)
        self.n_workers = self._transport.n_workers
        self._pool = Pool(self.n_workers)

    # --- steps ----------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._transport is None

    def run(self, items: Iterable, *, progress: bool | None = None) -> RunResult:
        """One time step: *fn* over *items* on the pool; the step's :class:`RunResult`.

        Steps run one at a time: a call from another thread while a step runs waits for it (then
        runs, or raises if that step failed and closed the loop); a call from inside a step of the
        same thread (a signal handler) is a DlbkitError."""
        if self._stepping == threading.get_ident():
            raise DlbkitError("this Loop is running a step in this thread already: a step cannot start another")
        with self._turn:
            try:  # set inside the try: an interrupt between the two must not leave it set
                self._stepping = threading.get_ident()
                result = self._run(items, progress)
            finally:
                self._stepping = None
            if self._transport is None:  # closed by a signal handler after the step's last wait: it
                self._keep_record()  # completed, and close() has nothing left to save, so save here
            return result

    def _run(self, items: Iterable, progress: bool | None) -> RunResult:
        if self._transport is None:
            raise DlbkitError("this Loop is closed (close() was called, or a step failed)")
        k = self._step_no

        def checks():
            check_progress(progress)
            its = check_items(items)
            self._journal_step(k, its)  # rank 0's journal: these items must be its step k's
            return its

        items = agreed(self.backend, checks)  # under MPI: one rank's bad items end the step on every rank
        self._step_no += 1
        held = self._held(k) if self.journal is not None else None  # on every rank
        todo = None if held is None else [i for i in range(len(items)) if i not in held]
        run_items = items if held is None else [items[i] for i in todo]
        on_results = None if self._journal is None else \
            lambda first, res: self._journal.append([(k, todo[first + j]) for j in range(len(res))], res)
        try:
            try:
                if self.backend == "mpi":
                    results, trace, state = self._mpi_step(run_items, progress, on_results)
                else:
                    step = PoolStep(self._family, self._pool, run_items, self.balancer,
                                    progress=Progress(len(run_items), progress), rng=self._rng,
                                    record_decisions=self.record_decisions, state=self._state, on_results=on_results)
                    transport = self._transport  # a signal handler's close() may clear the attribute mid-step
                    # on failure: no worker left, the bar closed
                    results, trace, state = step.run(transport, self.backend)
            except TaskError as e:
                if held is None:
                    raise
                raise in_whole(e, todo, held) from e.__cause__
        except BaseException as e:
            self._failed(e)
            raise
        if held is not None:
            results = merged(results, todo, held, len(items))
            trace.meta["journal"] = {"path": str(self.journal), "reused": len(held), "computed": len(todo)}
        return self._book(results, trace, state, len(run_items))

    def _journal_step(self, k: int, items: Sequence) -> None:
        """With a journal (rank 0's): step *k*'s items must be the journaled step *k*'s (a ConfigError
        otherwise, in the step's agreed checks); a step new to the journal is entered in it."""
        if self._journal is None:
            return
        said = (len(items), fingerprint(items))
        was = self._journal.done.get(("step", k))
        if was is None:
            self._journal.append([("step", k)], [said])
        elif tuple(was) != said:
            raise ConfigError("journal", str(self.journal), f"the journal of this loop's steps: step {k} has "
                              f"{said[0]} items of fingerprint {said[1][:12]}…, the journal's step {k} had {was[0]} "
                              f"of {was[1][:12]}… (other items: a new path, or delete it to start again)")

    def _held(self, k: int) -> dict:
        """What the journal holds of step *k* (item index → result), on every rank (rank 0's, sent)."""
        return on_every_rank(self._by_step.pop(k, {}), self.backend)

    def _failed(self, e: BaseException) -> None:
        """After a failed step (its workers stopped): the loop is closed, with *record* the steps
        before it are saved, and a failure that a signal handler's close() caused says so (the
        pipes' error, or the MPI coordinator's, would not say why); a handler's own exception (its
        exit) goes on as it is."""
        closed_during = self._transport is None  # by close() from this thread's signal handler
        self._transport = None
        self._close_journal()
        self._keep_record(e)  # the loop is closed now: close() will have nothing left to save
        if closed_during and isinstance(e, Exception) and e is not self._closing:
            raise DlbkitError(_CLOSED_DURING) from e

    def _mpi_step(self, items: Sequence, progress: bool | None, on_results=None) -> tuple:
        """One step as one run of the MPI backend on the job's ranks (every rank calls it)."""
        from dlbkit.runtime.backends import execute
        from dlbkit.families.divisible.runtime.program import RankStep
        step = RankStep(self._fn, items, self.balancer, emulation=self.emulation, progress=progress, rng=self._rng,
                        record_decisions=self.record_decisions, first_origin=self._origin, state=self._state,
                        on_results=on_results)
        self._rank_step = step  # close() from a signal handler ends it (rank 0 stops the workers)
        try:
            results, trace = execute(step, "mpi", workers=self._workers)
        finally:
            self._rank_step = None
        self._origin = step.first_origin
        if "step_start" not in trace.meta:  # an empty step: nothing ran, it starts where the last one ended
            start = self._parts[-1].end_time if self._parts else 0.0
            trace.end_time = start
            trace.meta.update(step_start=start, step_items=0)
        # rank 0 decides and carries; an empty step ran no coordinator and carries the state on
        carried = step.carried if coordinates("mpi") and "item_cost" in trace.meta and len(items) else self._state
        return results, trace, carried

    def _book(self, results: list, trace: Trace, state: dict | None, n_items: int) -> RunResult:
        """Keep a step: its trace on the pool's clock, what the balancer carries (auto's choice)."""
        trace.seed = self.seed
        if not n_items:  # measured nothing, not a step of the balancer's (AWF's index s, auto's `every`):
            state = self._state  # the state is carried on, as under MPI where no coordinator ran
        one = step_trace(join_steps([trace]), 0)
        if self.balancer.predicts_between_steps and n_items and "item_cost" in trace.meta:  # rank 0 under MPI
            state = auto_after_step(self.balancer, state, one)
            trace.meta["auto"] = one.meta["auto"]
        self._state = state
        self._carried.append(state)
        self._parts.append(trace)
        result = RunResult(results, one, self.balancer)
        self.steps.append(result)
        return result

    def map(self, items: Iterable, *, progress: bool | None = None) -> list:
        """``[fn(x) for x in items]`` for one time step, in item order (:meth:`run`'s results)."""
        return self.run(items, progress=progress).results

    # --- all steps ------------------------------------------------------------------------------
    @property
    def trace(self) -> Trace:
        """Every step so far as one trace on the pool's clock (:func:`dlbkit.families.divisible.model.steps.join_steps`)."""
        parts = self._parts
        if not parts:
            raise DlbkitError("no step has run yet")
        tr = join_steps(parts, carried=self._carried)
        tr.seed = self.seed
        tr.meta["link_latency"] = link_latencies(tr)  # each worker's link, over every step's requests
        return tr

    def result(self) -> Result:
        """The metrics over all steps so far (makespan: the end of the last step on the pool's clock)."""
        return Result(self.trace, self.balancer)

    def save(self, path: str | Path) -> Path:
        """Record every step so far (for :func:`dlbkit.replay` and ``dlbkit advise``)."""
        return self.result().save(path)

    # --- lifetime -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the workers (idempotent); with *record*, save every step that ran. Called from
        another thread while a step runs, it waits for the step to end; from this thread's signal
        handler during a step, it kills the workers at once and returns (the step then fails, and the
        handler goes on: a SIGTERM handler's exit, say); under MPI, where no rank can be killed alone,
        rank 0's coordinator ends the step at its next wait and stops the worker ranks as after any
        failure. Either way, with *record*, the steps that completed are saved."""
        if self._stepping == threading.get_ident():
            transport, self._transport = self._transport, None
            if isinstance(transport, _Ranks):  # MPI cannot kill a rank: rank 0's coordinator ends the step
                step = self._rank_step
                if step is not None:
                    self._closing = DlbkitError(_CLOSED_DURING)
                    step.interrupt(self._closing)
            elif transport is not None:
                transport.stop(kill=True)
            return
        with self._turn:
            self._close()

    def _close_journal(self) -> None:
        if self._journal is not None:
            self._journal.close()

    def _close(self) -> None:
        transport, self._transport = self._transport, None
        self._close_journal()
        if transport is None:
            return
        if not isinstance(transport, _Ranks):  # the ranks stay up: they are the job's, and end with it
            from dlbkit.runtime.messages import Stop
            try:
                for w in range(transport.n_workers):
                    transport.send(w, Stop())
                transport.stop()
            except BaseException:
                transport.stop(kill=True)
                raise
        self._keep_record()  # after the workers are stopped: a recording that cannot be written leaves none up

    def _keep_record(self, failure: BaseException | None = None) -> None:
        """With *record*, save every step that ran (on closing; after a failed step, the steps before
        it, the failure's own error propagating with a note if the save fails too)."""
        if self.record is None or not self._parts or not coordinates(self.backend):
            return
        if failure is None:
            self.save(self.record)
            return
        try:
            self.save(self.record)
        except Exception as e:  # noqa: BLE001 - the step's failure is the error to report
            failure.add_note(f"dlbkit: the steps before the failure were not recorded: {e}")

    def __enter__(self) -> "Loop":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit there is nothing to report to
            pass

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.n_workers} workers"
        return f"<Loop {self.balancer.name}, {state}, {len(self.steps)} steps>"


class _Ranks:
    """The pool of a Loop under MPI: the job's ranks, which no Loop starts or stops."""

    n_workers = 0


def _mpi_workers() -> int:
    """The job's worker ranks (all but rank 0); a ConfigError without mpi4py."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise ConfigError("backend", "mpi", "used with mpi4py installed (pip install 'dlbkit[mpi]')") from None
    size = MPI.COMM_WORLD.Get_size()
    if size < 2:
        raise ConfigError("backend", "mpi", f"used in an MPI job of at least 2 ranks (this one has {size}): rank 0 "
                          "coordinates, the others compute; start the script with mpiexec -n 3 python script.py")
    return size - 1
