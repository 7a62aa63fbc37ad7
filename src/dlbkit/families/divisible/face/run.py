"""The divisible family's real run: ``dlbkit.map`` and ``dlbkit.run_map`` on the user's function and items."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError, TaskError
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.families.divisible.model.workload import MAX_ITEMS
from dlbkit.families.divisible.runtime import program as _map_family
from dlbkit.families.run import (
    RunResult,
    _backend,
    _callable,
    _flag,
    _progress,
    _seed,
    _worker_count,
    agreed,
    check_record,
    coordinates,
    journal_held,
    open_journal,
    recording_what_ran,
)
from dlbkit.families.divisible.model.seeding import DIVISIBLE
from dlbkit.model.seeding import streams
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.journal import Journal, function_name
from dlbkit.runtime.emulation import emulation_from as _emulation

__all__ = ["DEFAULT_BALANCER", "run_map", "auto_after_step", "map_setup", "check_items", "map", "merged", "in_whole"]

#: adaptive weighted factoring, weights updated after every chunk: few messages (batches halve the
#: remaining work) and it learns unequal or changing speeds (BENCHMARKS.md, runtime section)
DEFAULT_BALANCER = "awf-c"


# --- map ------------------------------------------------------------------------------------------
def run_map(fn: Callable[[Any], Any], items: Iterable, *, balancer: Balancer | str = DEFAULT_BALANCER,
            params: Mapping | None = None, backend: str = "local", workers: int | None = None,
            progress: bool | None = None, emulate: Any = None, master: str | int | None = None,
            seed: int = 0, record: str | Path | None = None, start_method: str | None = None,
            record_decisions: bool = False, client: Any = None, return_exceptions: bool = False,
            journal: str | Path | None = None) -> RunResult:
    """Apply *fn* to every item on worker processes (or MPI ranks), balanced by a chunking balancer.

    Returns a :class:`RunResult`. *emulate* slows workers down as the nodes of a platform would
    (a Platform, a platform TOML path, or a list of speed factors); it also sets the number of
    workers. *record* saves the run's trace for ``dlbkit replay``. *record_decisions* keeps every
    decision the coordinator asked the balancer for, with a copy of the view it was asked with, in
    ``trace.decisions`` (to replay them; memory grows with the run; run_tree and run_spmd take it too:
    a tree's periodic decisions, an SPMD run's repartitions). *return_exceptions* and *journal*: see
    :func:`map`; with a journal the trace is of the items computed by this run
    (``trace.meta["journal"]``: how many it reused and computed).
    """
    _backend(backend, client)

    def checks():
        check_record(record, backend)
        s = _seed(seed)
        _progress(progress)
        _callable("fn", fn, optional=False)
        b: ChunkingBalancer = resolve(balancer, params, kind="chunking")
        emulation = _emulation(emulate, s, master, layout=DIVISIBLE)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        _flag("return_exceptions", return_exceptions)
        its = check_items(items)
        kept = open_journal(journal, backend, function_name(fn), its)  # rank 0's under MPI
        return s, b, its, emulation, _worker_count(workers, emulation, backend), kept

    asked = workers
    seed, b, items, emulation, workers, kept = agreed(backend, checks)
    rng = streams(seed, DIVISIBLE).rng("balancer")  # the divisible simulator's: the same draws for the same seed
    held = journal_held(kept, backend) if journal is not None else None  # on every rank
    todo = items if held is None else [i for i in range(len(items)) if i not in held]
    run_items = items if held is None else [items[i] for i in todo]
    try:
        with recording_what_ran(record, backend, seed):
            try:
                results, trace = _map_family.run_map(
                    fn, run_items, b, backend=backend, workers=asked if backend == "mpi" else workers,
                    emulation=emulation, progress=progress, rng=rng, start_method=start_method, client=client,
                    record_decisions=_flag("record_decisions", record_decisions),
                    return_exceptions=bool(return_exceptions),
                    on_results=None if kept is None else _journaling(kept, todo, bool(return_exceptions)))
            except TaskError as e:
                if held is None:
                    raise
                raise in_whole(e, todo, held) from e.__cause__
    finally:
        if kept is not None:
            kept.close()
    if held is not None:
        results = merged(results, todo, held, len(items))
        trace.meta["journal"] = {"path": str(journal), "reused": len(held), "computed": len(todo)}
        if trace.meta.get("failed"):
            trace.meta["failed"] = [todo[k] for k in trace.meta["failed"]]
    trace.seed = seed  # the balancer's generator came from it: a replay can repeat its draws
    # auto ran its default; predict the next run's best from the measured item costs, which under MPI
    # only rank 0's trace holds (as in Loop.run)
    if b.predicts_between_steps and trace.n_intervals and "item_cost" in trace.meta:
        auto_after_step(b, b.first_state(), trace)
    result = RunResult(results, trace, b)
    if record is not None and coordinates(backend):  # every MPI rank holds the trace: one writes it
        result.save(record)
    return result


def _journaling(journal: Journal, todo: list[int], keep_going: bool):
    """The coordinator's ``on_results`` of a journaled run over the items *todo* (their indices in the
    whole loop): each chunk's results appended under those indices (a failed item's exception, with
    *keep_going*, is not: a rerun tries it again)."""
    def write(first: int, res: list) -> None:
        pairs = [(todo[first + k], v) for k, v in enumerate(res) if not (keep_going and isinstance(v, BaseException))]
        journal.append([i for i, _ in pairs], [v for _, v in pairs])
    return write


def merged(part: list, todo: list[int], held: dict, n: int) -> list:
    """Every item's result in input order: the journal's (*held*), and this run's for the items *todo*."""
    results = [held.get(i) for i in range(n)]
    for k, i in enumerate(todo):
        results[i] = part[k]
    return results


def in_whole(e: TaskError, todo: list[int], held: dict) -> TaskError:
    """*e*, raised on the items *todo* a journal lacked, about the whole loop: the item's index in it, and
    every result kept, the journal's (*held*) with the run's (the part's trace is of the items computed)."""
    index = todo[e.index] if isinstance(e.index, int) and 0 <= e.index < len(todo) else e.index
    whole = TaskError(index, e.error, e.remote_traceback, what=e.what)
    whole.results = {**held, **{todo[k]: v for k, v in e.results.items()}}
    whole.trace = e.trace
    if whole.trace is not None:
        whole.trace.meta["partial"].update(failed=whole.label, done=len(whole.results), of=len(todo) + len(held))
    return whole


def auto_after_step(auto, state: dict, step) -> dict:
    """After a real step under a balancer that ``predicts_between_steps`` (``auto``; *step*: its
    trace, items and times from the step's start; *state*: what *auto* carried): measure it as :func:`dlbkit.replay` would (item costs,
    each worker's speed, each worker's latency to the coordinator), predict the candidates when due
    (:func:`dlbkit.families.divisible.sim.auto.after_step`, which books it in ``step.meta["auto"]``); the next state."""
    from dlbkit.families.divisible.model.links import link_latencies
    from dlbkit.families.divisible.sim.auto import after_step
    from dlbkit.families.divisible.sim.engine import simulate_divisible
    costs = np.asarray(step.meta["item_cost"], dtype=float)
    return after_step(auto, state, step, costs, list(step.speeds), link_latencies(step), step.makespan,
                      simulate=simulate_divisible)


def map_setup(fn: Any, balancer: Any, params: Mapping | None, backend: str, seed: Any, emulate: Any,
              master: Any, workers: Any, client: Any = None) -> tuple[ChunkingBalancer, Emulation | None, int | None, int]:
    """The checks of a map's arguments, for a persistent pool (:class:`dlbkit.Loop`) as for
    :func:`run_map`: (the resolved chunking balancer, the emulation, the worker count, the seed)."""
    _backend(backend, client)
    seed = _seed(seed)
    _callable("fn", fn, optional=False)
    b: ChunkingBalancer = resolve(balancer, params, kind="chunking")
    emulation = _emulation(emulate, seed, master, layout=DIVISIBLE)
    return b, emulation, _worker_count(workers, emulation, backend), seed


def check_items(items: Any, field: str = "items") -> Sequence:
    """*items* as a sequence, or a ConfigError (a string, bytes, a mapping, no iterable, or more than
    :data:`~dlbkit.families.divisible.model.workload.MAX_ITEMS` items: the coordinator keeps a result slot and a measured
    cost per item, so a larger loop would end in a MemoryError after the workers started)."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise ConfigError(field, type(items).__name__, "a sequence or iterable of items (a list, a range, ...)")
    items = items if isinstance(items, Sequence) else list(items)
    if len(items) > MAX_ITEMS:
        raise ConfigError(field, f"{len(items):,} items", f"at most {MAX_ITEMS:,} items (dlbkit's limit: the "
                          "coordinator keeps every result and a measured cost per item in memory)")
    return items


def map(fn: Callable[[Any], Any], items: Iterable, *, balancer: Balancer | str = DEFAULT_BALANCER,
        params: Mapping | None = None, backend: str = "local", workers: int | None = None,
        progress: bool | None = None, emulate: Any = None, master: str | int | None = None,
        seed: int = 0, record: str | Path | None = None, client: Any = None,
        return_exceptions: bool = False, journal: str | Path | None = None) -> list:
    """``[fn(x) for x in items]``, computed in parallel and balanced; results in input order.

    *balancer*: any chunking balancer (name or object; default ``"awf-c"``, adaptive weighted
    factoring; ``dlbkit balancers --kind chunking`` lists them), with its *params* (a dict).
    *backend*: ``"local"`` (worker processes on this machine, the default) or ``"mpi"`` (run the
    script with ``mpiexec -n N python script.py``: every rank calls ``map`` with the same *fn* and
    *items*; rank 0 coordinates; every rank gets the results) or ``"dask"`` (each chunk a Dask task on
    the worker the balancer gave it, of *client*: a ``distributed.Client``, a scheduler's address, or
    None for the Client running here). *workers*: processes (default: the usable CPUs, one per
    emulated worker, or every Dask worker). *progress*: a progress bar (default: when stderr is a
    terminal). *emulate*: slow the workers down as a heterogeneous cluster would be (a list of speed
    factors such as ``[1, 1, 0.5, 0.25]``, a Platform or a platform TOML path, whose *master* node, if
    named, coordinates); *seed*: of emulated background load and random balancers; *record*: a path
    to save the run's trace to (for :func:`dlbkit.replay` and ``dlbkit advise``). :func:`run_map`
    returns the run's measurements as well (a :class:`RunResult`).

    Raise :class:`~dlbkit.errors.TaskError` (index of the failing item, the worker's traceback) if
    *fn* raises; every worker is stopped first, and nothing finished is lost: the error's ``results``
    maps the index of every item computed by then to its result, and *record* is written for the part
    that ran. With *return_exceptions* True (as ``asyncio.gather`` takes it) nothing is raised: the
    exception *fn* raised on an item is that item's result (its ``__cause__`` the worker's traceback,
    as ``concurrent.futures`` gives it; a :class:`~dlbkit.errors.TaskError` with the traceback's text
    if it could not be rebuilt here), and every other item is computed. *journal*: a file to which
    every finished chunk's results are appended as they arrive (flushed: a killed run loses none of
    them); a rerun with the same journal computes only the items it lacks and returns every result in
    input order, as an uninterrupted run would (:mod:`dlbkit.runtime.journal`; a journal of another
    function or other items is refused; every backend: under MPI rank 0 keeps it and every rank skips
    what it holds, so a job a dead rank ended is rerun from it). Bad arguments are a
    :class:`~dlbkit.errors.ConfigError`, raised before any worker starts.

    >>> import dlbkit
    >>> dlbkit.map(abs, [-3, 1, -2], workers=2)
    [3, 1, 2]
    """
    return run_map(fn, items, balancer=balancer, params=params, backend=backend, workers=workers,
                   progress=progress, emulate=emulate, master=master, seed=seed, record=record,
                   client=client, return_exceptions=return_exceptions, journal=journal).results
