"""The task-graph family's real run: ``dlbkit.graph`` and ``dlbkit.run_graph`` on the user's tasks, and
``dlbkit.run_workflow`` on a recorded workflow's tasks made runnable (sleeps or busy loops)."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Mapping

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.runtime.benchmark_tasks import benchmark_tasks, check_scale, check_work
from dlbkit.families.graph.runtime import program as _graph_family
from dlbkit.families.graph.runtime.tasks import is_dask_collection, parse_tasks
from dlbkit.families.run import (
    RunResult,
    _backend,
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
from dlbkit.families.graph.model.seeding import GRAPH
from dlbkit.model.seeding import streams
from dlbkit.runtime.emulation import emulation_from as _emulation
from dlbkit.runtime.journal import function_name

__all__ = ["DEFAULT_GRAPH_BALANCER", "GraphResult", "run_graph", "graph", "run_workflow"]

#: Pseudo-Dynamic placement (002 §5): places each task when its inputs exist, on the node of best
#: score, so it needs no load estimates up front (a static plan from the default unit loads is a guess)
DEFAULT_GRAPH_BALANCER = "pd"


# --- graph ----------------------------------------------------------------------------------------
class GraphResult(RunResult):
    """A real graph run: ``results`` (a dict, the user's key → the task's value, in the order given),
    its ``trace`` and ``metrics`` (the graph family's: makespan, the critical path of the measured
    costs as ``lower_bound``, efficiency, …).

    Trace rows (``trace.intervals()``) are **tasks**: ``node`` the worker that ran it, ``first`` the
    task's index (``trace.meta["ids"][first]`` its id), ``t_ask`` when its inputs were all in,
    ``t_start``/``t_end`` on the worker (the end includes emulation's stretch). ``trace.meta`` holds
    ``assignment``, ``dag`` (the graph with its load estimates), ``item_cost`` (measured seconds per
    task), ``faults`` and ``replans`` (after a worker died)."""


def run_graph(tasks: Any, *, balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
              backend: str = "local", workers: int | None = None, progress: bool | None = None,
              emulate: Any = None, seed: int = 0, record: str | Path | None = None,
              start_method: str | None = None, record_decisions: bool = False, client: Any = None,
              return_exceptions: bool = False, journal: str | Path | None = None) -> GraphResult:
    """Execute a DAG of Python functions on worker processes (or MPI ranks); a :class:`GraphResult`.

    *tasks*: a dict ``key → (fn, *arguments)`` (Dask's legacy graph spec: an argument equal to a key is
    that task's result, lists are searched, a tuple ``(callable, ...)`` inside is a nested call, anything
    else is passed as it is), a dict ``key → dask._task_spec`` node (``Task``, ``Alias``, ``DataNode``, …;
    what current Dask builds, legacy tuples allowed beside them), a Dask collection (its graph: the
    results are every task's value; :func:`graph` gives the collection's computed value), or a networkx DiGraph whose nodes carry ``fn`` and optionally ``load``
    (its estimated time at speed 1; default 1), a node being called with its predecessors' results
    in networkx's order (:mod:`dlbkit.families.graph.runtime.tasks`). Functions, arguments and
    results must be picklable: they cross processes, and every result passes through the coordinator.

    *balancer*: a mapping balancer, name or object (*params* its parameters). A static mapper
    (``heft``, ``cpop``, ``round-robin``, ``metis``, …) plans once from the loads and the workers'
    speeds; an online one (``pd``, the default) places each task when its inputs exist
    (:mod:`dlbkit.families.graph.runtime.program`). *backend*: ``"local"``, ``"mpi"`` (every rank calls
    with the same tasks; rank 0 coordinates; every rank gets the results) or ``"dask"`` (each task a
    Dask task on the worker the balancer chose, of *client*: a ``distributed.Client``, a scheduler's
    address, or None for the Client running here). *workers*: processes (default: the usable CPUs,
    the emulated platform's workers, or every Dask worker). *emulate*: slow workers down as a
    platform's nodes would (a Platform, a platform TOML path or a list of speed factors); the plan
    then sees those speeds. *record* saves the trace for :func:`dlbkit.replay` (into the graph
    simulator). *seed* seeds the balancer's random stream and a platform emulation.

    A worker that dies (local backend) has its unfinished tasks recomputed elsewhere; every result is
    kept once. Raise :class:`~dlbkit.errors.TaskError` if a task's function raises (its ``index`` is
    the task's key; the worker's traceback is its cause), after every worker is stopped; nothing
    finished is lost: its ``results`` maps the key of every task computed by then to its value, and
    *record* is written for the part that ran. With *return_exceptions* True nothing is raised: the
    exception is the task's value, and the value of every task that depends on it, which does not run
    (as Dask gives a dependent the exception of the task it needed); ``trace.meta["failed"]`` and
    ``["not_run"]`` list them (by index). *journal*: a file to which each task's value is appended as
    it arrives (flushed); a rerun with the same journal does not call the function of a task it holds
    (the task hands its journaled value on, at no work) and returns every value, as an uninterrupted run
    would (``trace.meta["journal"]``: reused and computed; the tasks, their functions and arguments are
    fingerprinted and another graph's journal is refused; every backend, rank 0's under MPI).
    :class:`~dlbkit.errors.ConfigError` for bad input (a cycle, a non-callable, …).
    """
    _backend(backend, client)

    def checks():
        check_record(record, backend)
        s = _seed(seed)
        _progress(progress)
        spec = parse_tasks(tasks)
        b = resolve(balancer, params, kind=("mapping", "graph-online"))
        emulation = _emulation(emulate, s, None, layout=GRAPH)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        _flag("return_exceptions", return_exceptions)
        kept = open_journal(journal, backend, "dlbkit.graph", _units(spec)) if journal is not None else None
        return s, spec, b, emulation, _worker_count(workers, emulation, backend), kept

    asked = workers
    seed, spec, b, emulation, workers, kept = agreed(backend, checks)
    rng = streams(seed, GRAPH).rng("balancer")  # the graph simulators': the same draws for the same seed
    held = journal_held(kept, backend) if journal is not None else None  # on every rank
    for i, v in (held or {}).items():  # a task the journal holds hands its value on, at no work
        spec.fns[i], spec.args[i] = Journaled(v), ()
    try:
        with recording_what_ran(record, backend, seed):
            values, trace = _graph_family.run_graph(
                spec, b, backend=backend, workers=asked if backend == "mpi" else workers, emulation=emulation,
                progress=progress, rng=rng, start_method=start_method, client=client,
                record_decisions=_flag("record_decisions", record_decisions),
                return_exceptions=bool(return_exceptions),
                on_value=None if kept is None else
                lambda i, v: None if i in held else kept.append([i], [v]))
    finally:
        if kept is not None:
            kept.close()
    if held is not None:
        trace.meta["journal"] = {"path": str(journal), "reused": len(held), "computed": spec.n_tasks - len(held)}
    trace.seed = seed
    result = GraphResult(dict(zip(spec.keys, values)), trace, b)
    if record is not None and coordinates(backend):
        result.save(record)
    return result


class Journaled:
    """A task a journal holds, as its function: its journaled value handed on (no work, no call of the
    user's function)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __call__(self):
        return self.value


def _units(spec) -> list:
    """What a graph's journal fingerprints, per task: its key, function (by name; a callable object
    itself) and arguments."""
    return [(k, function_name(f), None if isinstance(f, (types.FunctionType, types.BuiltinFunctionType)) else f, a)
            for k, f, a in zip(spec.keys, spec.fns, spec.args)]


def graph(tasks: Any, *, balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
          backend: str = "local", workers: int | None = None, progress: bool | None = None, emulate: Any = None,
          seed: int = 0, record: str | Path | None = None, client: Any = None,
          return_exceptions: bool = False, journal: str | Path | None = None) -> dict:
    """Every task's value, computed in parallel: a dict key → value; see :func:`run_graph` (and for
    *return_exceptions*, a dict of tasks only: a Dask collection's value needs every task's).

    >>> import operator, dlbkit
    >>> dlbkit.graph({"a": (abs, -2), "b": (operator.add, "a", 10), "c": (operator.mul, "a", "b")}, workers=2)
    {'a': 2, 'b': 12, 'c': 24}

    A Dask collection (a ``dask.array``, ``dask.delayed``, ``dask.bag``, …) gives its computed value
    instead, as ``dask.compute(collection)[0]`` would: its graph's tasks are run, its keys' values
    handed to its ``__dask_postcompute__``.
    """
    collection = not isinstance(tasks, Mapping) and is_dask_collection(tasks)
    if collection and return_exceptions is not False:
        raise ConfigError("return_exceptions", return_exceptions, "False for a Dask collection (its value is computed "
                          "from every task's: run_graph(collection, return_exceptions=True).results has each task's)")
    results = run_graph(tasks, balancer=balancer, params=params, backend=backend, workers=workers,
                        progress=progress, emulate=emulate, seed=seed, record=record, client=client,
                        return_exceptions=return_exceptions, journal=journal).results
    if not collection:
        return results
    finalize, extra = tasks.__dask_postcompute__()
    return finalize(pack(tasks.__dask_keys__(), results), *extra)


def pack(keys: Any, results: Mapping, seq: type = list) -> Any:
    """Dask's nested lists of keys with each key replaced by its value, each list made a *seq*
    (a list for a collection's ``__dask_postcompute__``, a tuple as ``dask.threaded.get`` answers)."""
    if isinstance(keys, list):
        return seq(pack(k, results, seq) for k in keys)
    return results[keys]


def run_workflow(workflow: Any, *, work: str = "sleep", scale: float = 1.0,
                 balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
                 backend: str = "local", workers: int | None = None, progress: bool | None = None,
                 emulate: Any = None, seed: int = 0, record: str | Path | None = None,
                 start_method: str | None = None, record_decisions: bool = False, client: Any = None) -> GraphResult:
    """Run a recorded workflow for real: every task a sleep or a busy loop of its load × *scale* seconds,
    placed by *balancer* on worker processes as :func:`run_graph` places a DAG of functions; a
    :class:`GraphResult` (its ``results`` every task's id → None).

    *workflow*: a :class:`~dlbkit.families.graph.model.workload.TaskGraph` with one load per task (a
    WfCommons WfFormat workflow read by ``TaskGraph.read``, whose loads are its recorded runtimes), or
    the path of a file ``TaskGraph.read`` reads. *work*: ``"sleep"`` (the core left free) or ``"spin"``
    (a busy loop); *scale*: seconds of run per second of load (0.001 runs a task recorded at 2 s for
    2 ms). The tasks' estimates are the same seconds, so a static mapper plans with what the workers
    then do; the edges keep the dependencies, not the data volumes (data is not emulated:
    :mod:`dlbkit.families.graph.runtime.benchmark_tasks`). The other arguments are :func:`run_graph`'s;
    ``trace.meta["workflow"]`` records the graph's name, *work* and *scale*, and ``record=`` saves the
    run for :func:`dlbkit.replay`.

    Raise :class:`~dlbkit.errors.ConfigError` for an unknown *work*, a *scale* that is not a finite
    number > 0, a file that cannot be read as a task graph, or a graph with a cost table.
    """
    _backend(backend, client)

    def checks():
        check_work(work)  # the arguments before the file, as run_graph checks its own first
        check_scale(scale)
        check_record(record, backend)  # before the run, which would otherwise be lost
        if isinstance(workflow, (str, Path)):
            g = TaskGraph.read(workflow)
        elif isinstance(workflow, TaskGraph):
            g = workflow
        else:
            raise ConfigError("workflow", type(workflow).__name__, "a TaskGraph or the path of a task-graph file "
                              "(a WfFormat .json, dlbkit's .json, .stg, .adg, or a Pegasus .dax or .xml)")
        return g, benchmark_tasks(g, work=work, scale=scale)

    g, tasks = agreed(backend, checks)  # under MPI every rank reads the file; one verdict for all
    r = run_graph(tasks, balancer=balancer, params=params, backend=backend, workers=workers, progress=progress,
                  emulate=emulate, seed=seed, record=None, start_method=start_method,
                  record_decisions=record_decisions, client=client)
    r.trace.meta["workflow"] = {"name": g.name, "work": work, "scale": float(scale)}
    if record is not None and coordinates(backend):
        r.save(record)
    return r
