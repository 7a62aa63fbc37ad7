"""Real runs, the face of the runtime: ``dlbkit.map``/``run_map``, ``dlbkit.tree``/``run_tree``,
``dlbkit.spmd``/``run_spmd`` and ``dlbkit.graph``/``run_graph``, with their result classes.

Each entry point checks its arguments, resolves the balancer (:func:`dlbkit.balancers.registry.resolve`),
calls its family's runner (:mod:`dlbkit.runtime.families`) on a backend
(:mod:`dlbkit.runtime.backends`) and wraps the outcome in a result with metrics and plot methods.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from numbers import Integral
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer, ChunkingBalancer, MigrationBalancer, RepartitionBalancer
from dlbkit.balancers.registry import resolve
from dlbkit.info import resolve as resolve_info
from dlbkit.errors import ConfigError
from dlbkit.model.workload import MAX_ITEMS
from dlbkit.results import Result
from dlbkit.runtime.backends import BACKENDS
from dlbkit.runtime.backends.local import check_workers
from dlbkit.runtime.emulation import Emulation, emulation_from as _emulation
from dlbkit.runtime.families import graph as _graph_family
from dlbkit.runtime.families import map as _map_family
from dlbkit.runtime.families import spmd as _spmd_family
from dlbkit.runtime.families import tree as _tree_family
from dlbkit.runtime.families.graph_tasks import parse_tasks
from dlbkit.runtime.families.spmd import SpmdSpec
from dlbkit.runtime.families.tree_worker import TreeSpec

__all__ = ["map", "run_map", "RunResult", "map_setup", "check_items", "check_record", "agreed", "coordinates", "auto_after_step", "BACKENDS", "DEFAULT_BALANCER",
           "tree", "run_tree", "TreeResult", "DEFAULT_TREE_BALANCER",
           "spmd", "run_spmd", "SpmdResult", "DEFAULT_SPMD_BALANCER", "DEFAULT_WINDOW",
           "graph", "run_graph", "GraphResult", "DEFAULT_GRAPH_BALANCER"]

#: adaptive weighted factoring, weights updated after every chunk: few messages (batches halve the
#: remaining work) and it learns unequal or changing speeds (BENCHMARKS.md, runtime section)
DEFAULT_BALANCER = "awf-c"
#: randomised work stealing: no load information, idle workers pull the oldest (largest) subtrees
DEFAULT_TREE_BALANCER = "steal"
#: Osman's DLAH (000 §7.3): overloaded nodes send rows to under-loaded neighbours
DEFAULT_SPMD_BALANCER = "dlah"
#: Pseudo-Dynamic placement (002 §5): places each task when its inputs exist, on the node of best
#: score, so it needs no load estimates up front (a static plan from the default unit loads is a guess)
DEFAULT_GRAPH_BALANCER = "pd"
#: iterations per measurement window (000 leaves it open, §10: "measurement-window length")
DEFAULT_WINDOW = 10


class RunResult(Result):
    """A real run: ``results`` in input order, its ``trace`` and ``metrics`` (as for a simulation:
    :class:`~dlbkit.results.Result`, whose plot methods and ``save`` it has)."""

    def __init__(self, results: Any, trace, balancer: Balancer | None):
        super().__init__(trace, balancer)
        self.results = results


class TreeResult(RunResult):
    """A real tree run: ``value`` (the combined result), ``bound`` (the best bound, or None without
    branch and bound), ``tasks`` (tasks expanded), its ``trace`` and ``metrics``.

    Trace rows (``trace.intervals()``) are **busy stretches**: one row per run of tasks a worker
    expanded without going idle: ``worker``; ``first``, the worker's count of tasks expanded before
    the stretch (a worker's rows tile 0..its total); ``count``, the tasks expanded in it; ``t_ask``,
    when the worker became ready or ran dry before it (it then asked for work); ``t_start`` and
    ``t_end``, when the stretch began and ended (seconds since the run began). ``trace.meta`` holds
    ``tasks``, ``expanded`` per worker, ``steal_requests``, ``steals`` (successful), ``tasks_moved``,
    ``transfers`` (ordered by a periodic rule), ``load_updates`` (fresh loads sent to sleeping
    workers of a receiver-initiated rule) and ``topology`` (its name or table, or a graph's edges).
    ``results`` is the same object as ``value`` (the name :class:`RunResult` uses).
    """

    def __init__(self, value: Any, bound: Any, trace, balancer: Balancer):
        super().__init__(value, trace, balancer)
        self.value = value
        self.bound = bound

    @property
    def tasks(self) -> int:
        return int(self.trace.meta.get("tasks", 0))


class SpmdResult(RunResult):
    """A real SPMD run: ``domain`` (the final field, boundary rows included), its ``trace`` and
    ``metrics``; ``rows`` (interior rows per worker at the end) and ``transfers``.

    Trace rows (``trace.intervals()``) are **iterations**: one row per worker and iteration,
    ``round`` = the iteration, ``first``/``count`` = the worker's first interior row and rows owned,
    ``t_ask`` = when its halos were sent, ``t_start``/``t_end`` = when its step began and ended
    (the end includes the emulated stretch), in seconds since the run began. ``trace.meta`` holds
    ``windows`` (per balancing point: ``loop``, ``time``, ``points`` and ``loop_time`` per worker,
    what the balancer saw), ``transfers`` (``(iteration, src, dst, asked, moved)``), ``final_rows``,
    ``iterations``, ``halo``, ``window``. ``results`` is the same object as ``domain``.
    """

    def __init__(self, domain: np.ndarray, trace, balancer: Balancer | None):
        super().__init__(domain, trace, balancer)
        self.domain = domain

    @property
    def rows(self) -> list[int]:
        return list(self.trace.meta.get("final_rows", []))

    @property
    def transfers(self) -> list[tuple]:
        return list(self.trace.meta.get("transfers", []))

    def plot_loads(self, axes=None):
        """Loop time (s) and rows per worker against the iteration, on two axes: :meth:`plot_loop_times`
        and :meth:`plot_points` (matplotlib); returns the axes."""
        import matplotlib.pyplot as plt

        if axes is None:
            _, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        self.plot_loop_times(ax=axes[0])
        self.plot_points(ax=axes[1])
        return axes


# --- argument checks ----------------------------------------------------------------------------
def _progress(progress: Any) -> bool | None:
    if progress is not None and not isinstance(progress, bool):
        raise ConfigError("progress", progress, "True, False or None (a bar when stderr is a terminal)")
    return progress


def _seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError("seed", seed, "an integer >= 0")
    return int(seed)


def _worker_count(workers: int | None, emulation: Emulation | None, backend: str = "local") -> int | None:
    """The number of workers asked for, checked; an emulation sets it when the user does not.

    Locally the count is bounded before anything starts
    (:func:`~dlbkit.runtime.backends.local.check_workers`: ``max(256, 4 × usable CPUs)``, within the
    open-file limit); under MPI the job's ranks set it."""
    if workers is None:
        if emulation and backend == "local":
            check_workers(emulation.n_workers, "emulate (one worker per emulated core)")
        return emulation.n_workers if emulation else None
    if isinstance(workers, bool) or not isinstance(workers, Integral) or workers < 1:
        raise ConfigError("workers", workers, "an integer >= 1")
    if backend == "mpi":  # the job's worker ranks: checked here, with the other arguments (agreed)
        from dlbkit.runtime.backends.mpi import check_workers as check_mpi_workers
        check_mpi_workers(int(workers))
    workers = int(workers)  # a numpy integer too (a count computed with numpy), as for seed
    if backend == "local":
        check_workers(workers)
    if emulation and workers != emulation.n_workers:
        raise ConfigError("workers", workers, f"the emulated platform's worker count ({emulation.n_workers})")
    return workers


def _backend(backend: str) -> None:
    if backend not in BACKENDS:
        raise ConfigError("backend", backend, "one of " + ", ".join(repr(b) for b in BACKENDS))


def agreed(backend: str, checks: Callable[[], Any]) -> Any:
    """*checks()* (an entry point's argument checks): locally as they are; under MPI on every rank,
    with the verdict agreed (:func:`~dlbkit.runtime.backends.mpi.agree`: a ConfigError on one rank
    ends the call on every rank, where it would have left the others waiting for it)."""
    if backend != "mpi":
        return checks()
    from dlbkit.runtime.backends.mpi import agree
    return agree(checks)


def coordinates(backend: str) -> bool:
    """True on the process that writes recordings: the only one locally, rank 0 under MPI."""
    if backend != "mpi":
        return True
    from dlbkit.runtime.backends.mpi import rank
    return rank() == 0


def check_record(record: str | Path | None, backend: str) -> None:
    """A ConfigError now, before any worker starts, for a *record* path that cannot be written (not
    after the whole run, which would then be lost); checked where it will be written."""
    if record is None:
        return
    if not isinstance(record, (str, Path)):
        raise ConfigError("record", record, "a file path (str or Path) or None")
    # under MPI rank 0 alone writes it and judges it (another rank's record is not used): called
    # inside agreed(), which shares rank 0's verdict with every rank (else they wait for it)
    if not coordinates(backend):
        return
    try:
        bad = Path(record).is_dir() or not Path(record).parent.is_dir()
    except (OSError, ValueError) as e:  # a name too long (ENAMETOOLONG), ...: was a traceback, and under
        # MPI rank 0's alone
        raise ConfigError("record", str(record), "a file path the system accepts "
                          f"({e.strerror or e if isinstance(e, OSError) else e})") from None
    if bad:
        raise ConfigError("record", str(record), "a file in an existing directory")


def _migration_balancer(balancer: Balancer | str, params: Mapping | None) -> MigrationBalancer:
    b = resolve(balancer, params, kind="migration")
    if b.name == "phase-adaptive" and getattr(b, "detector", None) == "work":
        raise ConfigError(b.param_field("detector"), "work", "'tasks' in a real run: the "
                          "remaining-work detector needs a work estimate per task, which only the simulators have")
    phases = getattr(b, "balancers", None) if b.name == "phase-adaptive" else None
    for k, inner in enumerate(phases or ()):
        # the phase changes in the coordinator; workers run on_idle/on_spawn with their own copy,
        # which would stay in phase I: only central (periodic) rules can follow the phases
        if inner is None or (isinstance(inner, str) and inner.lower() == "none"):
            continue
        cls = type(inner) if isinstance(inner, MigrationBalancer) else type(resolve(inner))
        if cls.receiver_initiated or cls.sender_initiated or not cls.periodic:
            raise ConfigError(b.param_field("balancers", k), getattr(cls, "name", inner),
                              "a periodic rule (gdem, ldsv, greedy, refine) or 'none' in a real run: phase "
                              "changes are seen by the coordinator only (the simulators take any rule)")
    return b


def _flag(name: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ConfigError(name, v, "True or False")
    return v


def _callable(name: str, f: Any, optional: bool = True) -> None:
    if (f is None and not optional) or (f is not None and not callable(f)):
        raise ConfigError(name, f, "a callable" + (" or None" if optional else ""))


def _int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ConfigError(name, v, f"an integer ≥ {lo}")
    return int(v)


def _check(step, domain, iterations, halo, window, bandwidth, seed) -> np.ndarray:
    if not callable(step):
        raise ConfigError("step", step, "a callable: step(block_with_halos) -> new block")
    _int("iterations", iterations, 0)
    _int("halo", halo, 1)
    _int("window", window, 1)
    _int("seed", seed, 0)
    if bandwidth is not None and (isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float))
                                  or not bandwidth > 0):
        raise ConfigError("bandwidth", bandwidth, "a number of rows per second > 0, or None (measured)")
    try:
        arr = np.array(domain)  # a private copy: the caller's array is never written
    except Exception as e:
        raise ConfigError("domain", type(domain).__name__, "a numpy array (or array-like)") from e
    if arr.ndim < 1 or arr.dtype.kind not in "biufc":  # strings, bytes, records, dates: not a stencil's numbers
        raise ConfigError("domain", f"array of shape {arr.shape} and dtype {arr.dtype}",
                          "a numeric array with at least one axis (rows along the first)")
    return arr


def _repartition_balancer(balancer, params: Mapping | None) -> RepartitionBalancer | None:
    return resolve(balancer, params, kind="repartition", allow_none=True)


# --- map ------------------------------------------------------------------------------------------
def run_map(fn: Callable[[Any], Any], items: Iterable, *, balancer: Balancer | str = DEFAULT_BALANCER,
            params: Mapping | None = None, backend: str = "local", workers: int | None = None,
            progress: bool | None = None, emulate: Any = None, master: str | int | None = None,
            seed: int = 0, record: str | Path | None = None, start_method: str | None = None,
            record_decisions: bool = False) -> RunResult:
    """Apply *fn* to every item on worker processes (or MPI ranks), balanced by a chunking balancer.

    Returns a :class:`RunResult`. *emulate* slows workers down as the nodes of a platform would
    (a Platform, a platform TOML path, or a list of speed factors); it also sets the number of
    workers. *record* saves the run's trace for ``dlbkit replay``. *record_decisions* keeps every
    decision the coordinator asked the balancer for, with a copy of the view it was asked with, in
    ``trace.decisions`` (to replay them; memory grows with the run; run_tree and run_spmd take it too:
    a tree's periodic decisions, an SPMD run's repartitions). See :func:`map`.
    """
    _backend(backend)

    def checks():
        check_record(record, backend)
        s = _seed(seed)
        _progress(progress)
        _callable("fn", fn, optional=False)
        b: ChunkingBalancer = resolve(balancer, params, kind="chunking")
        emulation = _emulation(emulate, s, master)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        return s, b, check_items(items), emulation, _worker_count(workers, emulation, backend)

    asked = workers
    seed, b, items, emulation, workers = agreed(backend, checks)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    results, trace = _map_family.run_map(fn, items, b, backend=backend,
                                         workers=asked if backend == "mpi" else workers, emulation=emulation,
                                         progress=progress, rng=rng, start_method=start_method,
                                         record_decisions=_flag("record_decisions", record_decisions))
    trace.seed = seed  # the balancer's generator came from it: a replay can repeat its draws
    # auto ran its default; predict the next run's best from the measured item costs, which under MPI
    # only rank 0's trace holds (as in Loop.run)
    if b.predicts_between_steps and trace.n_intervals and "item_cost" in trace.meta:
        auto_after_step(b, b.first_state(), trace)
    result = RunResult(results, trace, b)
    if record is not None and coordinates(backend):  # every MPI rank holds the trace: one writes it
        result.save(record)
    return result




def auto_after_step(auto, state: dict, step) -> dict:
    """After a real step under a balancer that ``predicts_between_steps`` (``auto``; *step*: its
    trace, items and times from the step's start; *state*: what *auto* carried): measure it as :func:`dlbkit.replay` would (item costs,
    each worker's speed, the round trip's latency), predict the candidates when due
    (:func:`dlbkit.sim.auto.after_step`, which books it in ``step.meta["auto"]``); the next state."""
    from dlbkit.sim.auto import after_step, round_trip_latency
    from dlbkit.sim.divisible import simulate_divisible
    costs = np.asarray(step.meta["item_cost"], dtype=float)
    return after_step(auto, state, step, costs, list(step.speeds), round_trip_latency(step), step.makespan,
                      simulate=simulate_divisible)


def map_setup(fn: Any, balancer: Any, params: Mapping | None, backend: str, seed: Any, emulate: Any,
              master: Any, workers: Any) -> tuple[ChunkingBalancer, Emulation | None, int | None, int]:
    """The checks of a map's arguments, for a persistent pool (:class:`dlbkit.Loop`) as for
    :func:`run_map`: (the resolved chunking balancer, the emulation, the worker count, the seed)."""
    _backend(backend)
    seed = _seed(seed)
    _callable("fn", fn, optional=False)
    b: ChunkingBalancer = resolve(balancer, params, kind="chunking")
    emulation = _emulation(emulate, seed, master)
    return b, emulation, _worker_count(workers, emulation, backend), seed


def check_items(items: Any, field: str = "items") -> Sequence:
    """*items* as a sequence, or a ConfigError (a string, bytes, a mapping, no iterable, or more than
    :data:`~dlbkit.model.workload.MAX_ITEMS` items: the coordinator keeps a result slot and a measured
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
        seed: int = 0, record: str | Path | None = None) -> list:
    """``[fn(x) for x in items]``, computed in parallel and balanced; results in input order.

    *balancer*: any chunking balancer (name or object; default ``"awf-c"``, adaptive weighted
    factoring; ``dlbkit balancers --kind chunking`` lists them), with its *params* (a dict).
    *backend*: ``"local"`` (worker processes on this machine, the default) or ``"mpi"`` (run the
    script with ``mpiexec -n N python script.py``: every rank calls ``map`` with the same *fn* and
    *items*; rank 0 coordinates; every rank gets the results). *workers*: processes (default: the
    usable CPUs, or one per emulated worker). *progress*: a progress bar (default: when stderr is a
    terminal). *emulate*: slow the workers down as a heterogeneous cluster would be (a list of speed
    factors such as ``[1, 1, 0.5, 0.25]``, a Platform or a platform TOML path, whose *master* node, if
    named, coordinates); *seed*: of emulated background load and random balancers; *record*: a path
    to save the run's trace to (for :func:`dlbkit.replay` and ``dlbkit advise``). :func:`run_map`
    returns the run's measurements as well (a :class:`RunResult`).

    Raise :class:`~dlbkit.errors.TaskError` (index of the failing item, the worker's traceback) if
    *fn* raises; every worker is stopped first. Bad arguments are a
    :class:`~dlbkit.errors.ConfigError`, raised before any worker starts.

    >>> import dlbkit
    >>> dlbkit.map(abs, [-3, 1, -2], workers=2)
    [3, 1, 2]
    """
    return run_map(fn, items, balancer=balancer, params=params, backend=backend, workers=workers,
                   progress=progress, emulate=emulate, master=master, seed=seed, record=record).results


# --- tree -----------------------------------------------------------------------------------------
def run_tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
             params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
             bound: Any = None, better: Callable | None = None, backend: str = "local",
             workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
             topology: Any = None, start_method: str | None = None, record_decisions: bool = False,
             info: Any = None) -> TreeResult:
    """Expand the task tree grown from *root* on worker processes (or MPI ranks); a :class:`TreeResult`.

    *expand(task)* returns ``(children, value)``: *children* an iterable of new tasks (may be
    empty or None), *value* this task's contribution or None (nothing). Every task is expanded
    exactly once, on one worker; tasks and values must be picklable (they cross processes).
    *combine(a, b)* folds two values into one (default ``operator.add``); it must be associative
    and commutative, since values arrive in no fixed order: each worker folds its own values as it
    goes, then the coordinator folds *initial* (default 0; it is used exactly once) with the workers'
    partial results in worker order. With floats the last bits may differ between runs.

    **Branch and bound**: give *bound*, the initial bound (e.g. 0, or ``-math.inf``). Then
    *expand(task, bound)* receives the best bound this worker knows and may return a third element,
    a new bound (or None); *better(a, b)* says whether *a* improves on *b* (default ``a > b``:
    maximisation; pass ``operator.lt`` to minimise). Improved bounds travel with every message
    through the coordinator to all workers (a busy worker learns of one within about
    :data:`~dlbkit.runtime.families.tree_worker.CHECK_S` seconds), so a worker may still expand a task that
    a bound found elsewhere would have pruned. The result's ``bound`` is the best over all workers.

    *balancer*: a migration balancer, name or object (default ``"steal"``, random work stealing);
    *params* its parameters. The root starts on worker 0. *backend*: ``"local"`` (processes on this
    machine, talking only to the coordinator through pipes: no listener is opened) or ``"mpi"``.
    *workers*: processes (default: the usable CPUs, or the emulated platform's workers).
    *emulate*: slow workers down as a platform's nodes would (a Platform, a platform TOML path or a
    list of speed factors): each task's measured time is stretched by 1/speed. *progress*: a
    progress bar of tasks completed / created. *seed*: seeds every balancer's random stream.

    *topology*: which workers are neighbours (``view.neighbours``, and the edge colours that
    dimension exchange visits, ``view.colours``), for the balancers that exchange work with their
    neighbours only (diffusion, GDEM, work stealing's victims): ``"complete"`` (the default: all
    pairs), ``"chain"``, ``"ring"``, ``"mesh"``, ``"torus"`` (the most nearly square shape),
    ``"hypercube"``, ``"star"``, a table ``{"kind": "torus", "rows": 2}``, or a connected networkx
    graph on nodes 0..workers-1 (see :func:`~dlbkit.runtime.families.tree.resolve_topology`). It is over the workers (MPI: over
    ranks 1..n-1, worker w = rank w + 1); one that does not fit the worker count is a ConfigError.
    *info* names an information model (:mod:`dlbkit.info`: "periodic", "neighbour", "gossip", or a
    table with ``model`` and ``period`` in seconds): the coordinator, which relays every message of the
    star transport, then keeps each worker's table, merges the model's round messages into their
    receivers' tables as they pass it, and hands a deciding worker (or its own periodic rule) that
    worker's (the centre's) knowledge instead of the freshest reports; the trace counts the model's
    messages, bytes and the age of what deciders read. Default: the coordinator's reports.

    Raise :class:`~dlbkit.errors.TaskError` if *expand* (or *combine*) raises: "task (13, 3) failed: …",
    its ``what`` "task" and ``index`` the ``repr`` of the failing task (at most 200 characters), its
    cause carrying the worker's traceback (*combine* folding the workers' values in the coordinator:
    "combine (its name) of worker w's value failed", ``what`` "combine"); every worker is stopped
    first and none is left behind.
    """
    _backend(backend)

    def checks():
        _callable("expand", expand, optional=False)
        _callable("combine", combine)
        _callable("better", better)
        if better is not None and bound is None:
            raise ConfigError("better", better, "None unless a bound is given (branch and bound)")
        s = _seed(seed)
        _progress(progress)
        b = _migration_balancer(balancer, params)
        _tree_family.check_topology(topology)
        emulation = _emulation(emulate, s, None)
        # the information model and the flag too: checked after the agreement, a bad one on one rank
        # alone was raised there alone and left the other ranks waiting for it (a hang)
        model = resolve_info(info) if info is not None else None
        flag = _flag("record_decisions", record_decisions)
        return s, b, emulation, _worker_count(workers, emulation, backend), model, flag

    asked = workers
    seed, b, emulation, workers, model, flag = agreed(backend, checks)
    spec = TreeSpec(expand=expand, root=root, n_workers=0, balancer=b,
                    combine=combine if combine is not None else operator.add,
                    branch_and_bound=bound is not None, bound=bound,
                    better=better if better is not None else operator.gt, emulation=emulation, seed=seed,
                    speeds=list(emulation.speeds) if emulation else [], topology=topology,
                    record_decisions=flag, info=model)
    init = 0 if initial is None else initial
    value, best, trace = _tree_family.run_tree(spec, initial=init, backend=backend,
                                               workers=asked if backend == "mpi" else workers,
                                               progress=progress, start_method=start_method)
    return TreeResult(value, best, trace, b)


def tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
         params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
         bound: Any = None, better: Callable | None = None, backend: str = "local",
         workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
         topology: Any = None) -> Any:
    """Expand a task tree in parallel and fold the tasks' values; see :func:`run_tree`.

    Returns the combined value, or ``(value, best_bound)`` when *bound* is given (branch and bound).

    >>> import dlbkit
    >>> def expand(n):                      # a binary tree of depth 3: count its nodes
    ...     return ([n + 1, n + 1] if n < 3 else []), 1
    >>> dlbkit.tree(expand, 0, workers=2)
    15
    """
    r = run_tree(expand, root, balancer=balancer, params=params, combine=combine, initial=initial, bound=bound,
                 better=better, backend=backend, workers=workers, progress=progress, emulate=emulate, seed=seed,
                 topology=topology)
    return (r.value, r.bound) if bound is not None else r.value


# --- spmd -----------------------------------------------------------------------------------------
def run_spmd(step: Callable[[np.ndarray], Any], domain: Any, *, iterations: int,
             balancer: Balancer | str | None = DEFAULT_SPMD_BALANCER, params: Mapping | None = None,
             backend: str = "local", workers: int | None = None, window: int = DEFAULT_WINDOW,
             emulate: Any = None, progress: bool | None = None, seed: int = 0, halo: int = 1,
             bandwidth: float | None = None, record: str | Path | None = None,
             start_method: str | None = None, record_decisions: bool = False) -> SpmdResult:
    """Iterate *step* over a 1-D decomposed *domain* on worker processes (or MPI ranks); a :class:`SpmdResult`.

    **Semantics.** *domain* is an array of R rows (its first axis; any trailing shape and numeric
    dtype). Its first and last *halo* rows are **fixed boundary rows** (boundary conditions: read,
    never written); the R − 2·halo interior rows are split into contiguous blocks, one per worker
    in worker order (evenly at the start). Iteration *it* gives each worker
    ``ext = concatenate([rows above, block, rows below])``: the *halo* rows next to its block as
    they were after iteration it − 1 (a neighbour's edge rows, or the fixed boundary rows at the
    global edges), and replaces its block with ``step(ext)``, which must return an array of the
    block's shape (it is assigned into the block, casting to the domain's dtype). The result is
    therefore the serial run, row for row::

        u = domain.copy()
        for it in range(iterations):
            u[halo:-halo] = step(u)

    exactly (bit for bit) whenever each output row of *step* depends only on the input rows within
    *halo* of it and is computed the same way whatever the number of rows (elementwise numpy
    stencils are; a step that sums along the first axis or uses its length is not local). *step*
    does not learn which rows it holds.

    **Balancing.** Each worker times its steps (busy time only: never time spent waiting for a
    neighbour; *emulate* stretches it as on a slower or loaded node, see
    :class:`~dlbkit.runtime.emulation.Emulation`). Every *window* iterations all workers pause and
    the coordinator fills an :class:`~dlbkit.model.view.SpmdView` for the window: ``points`` = rows
    owned, ``loop_time`` = mean busy seconds per iteration, ``speed`` = rows / loop_time,
    ``free_memory`` = 1e18 (unknown: never swapping), ``swap_cost`` = 0, ``bandwidth`` = *bandwidth*
    if given, else rows/s measured on the last transfer a worker took part in (1e18 before any),
    ``layout`` "line", ``boundary`` (K) 0. The balancer (a repartition balancer: name or object,
    *params* its parameters; default ``"dlah"``; None: no balancing) returns transfers; moving k
    rows from worker i to neighbour j ships i's k rows on j's side to j (blocks stay contiguous; a
    sender keeps at least *halo* rows), and measurement starts afresh.

    **Communication.** Local backend: worker processes on this machine, each with one pipe to the
    coordinator (no listener is opened); halos and moved rows travel through the coordinator, which
    sends a worker its next iteration as soon as it and both neighbours have finished the previous
    one. ``backend="mpi"``: run the script with ``mpiexec -n N python script.py``; every rank calls
    ``spmd`` with the same arguments, rank 0 coordinates (only its *domain* is read), ranks 1..N−1
    are the workers, and every rank returns the final domain.

    *workers*: processes (default: the usable CPUs, at most one per *halo* interior rows; or the
    emulated platform's workers). *record* saves the trace (``RunResult.save``). *seed* seeds the
    balancer's random stream and a platform emulation.

    Raise :class:`~dlbkit.errors.ConfigError` naming the field for bad input (a domain with fewer
    than 2·halo + workers·halo rows, halo < 1, iterations < 0, window < 1, a balancer that is not a
    repartition balancer, …). Raise :class:`~dlbkit.errors.TaskError` if *step* raises (or returns a
    wrongly shaped block): its ``worker`` and ``iteration`` (also its ``index``) say where, its
    cause carries the worker's traceback; every worker is stopped first and none is left behind.
    Under MPI the worker ranks then exit with a one-line message and ``mpiexec`` exits non-zero.
    """
    _backend(backend)

    def checks():
        check_record(record, backend)
        arr = _check(step, domain, iterations, halo, window, bandwidth, seed)
        _progress(progress)
        b = _repartition_balancer(balancer, params)
        emulation = _emulation(emulate, seed, None)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        return arr, b, emulation, _worker_count(workers, emulation, backend)

    asked = workers
    arr, b, emulation, workers = agreed(backend, checks)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    spec = SpmdSpec(step=step, halo=halo, emulation=emulation)
    out, trace = _spmd_family.run_spmd(spec, b, arr, iterations=iterations, window=window, bandwidth=bandwidth,
                                       backend=backend, workers=asked if backend == "mpi" else workers,
                                       progress=progress, rng=rng, start_method=start_method,
                                       record_decisions=_flag("record_decisions", record_decisions))
    trace.seed = seed
    result = SpmdResult(out, trace, b)
    if record is not None and coordinates(backend):
        result.save(record)
    return result


def spmd(step: Callable[[np.ndarray], Any], domain: Any, *, iterations: int,
         balancer: Balancer | str | None = DEFAULT_SPMD_BALANCER, params: Mapping | None = None,
         backend: str = "local", workers: int | None = None, window: int = DEFAULT_WINDOW, emulate: Any = None,
         progress: bool | None = None, seed: int = 0, halo: int = 1, bandwidth: float | None = None,
         record: str | Path | None = None) -> np.ndarray:
    """The final domain after *iterations* steps, computed in parallel and balanced; see :func:`run_spmd`.

    >>> import numpy as np
    >>> from dlbkit import spmd
    >>> def smooth(u):                       # each row becomes the mean of itself and its neighbours
    ...     return (u[:-2] + u[1:-1] + u[2:]) / 3
    >>> u = np.zeros(8); u[-1] = 3.0           # rows 0 and 7 are fixed boundary rows
    >>> spmd(smooth, u, iterations=2, workers=2, balancer=None).round(3).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.333, 1.333, 3.0]
    """
    return run_spmd(step, domain, iterations=iterations, balancer=balancer, params=params, backend=backend,
                    workers=workers, window=window, emulate=emulate, progress=progress, seed=seed, halo=halo,
                    bandwidth=bandwidth, record=record).domain


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
              start_method: str | None = None, record_decisions: bool = False) -> GraphResult:
    """Execute a DAG of Python functions on worker processes (or MPI ranks); a :class:`GraphResult`.

    *tasks*: a dict ``key → (fn, *arguments)`` (Dask's graph spec: an argument equal to a key is that
    task's result, lists are searched, a tuple ``(callable, ...)`` inside is a nested call, anything
    else is passed as it is), or a networkx DiGraph whose nodes carry ``fn`` and optionally ``load``
    (its estimated time at speed 1; default 1), a node being called with its predecessors' results
    in networkx's order (:mod:`dlbkit.runtime.families.graph_tasks`). Functions, arguments and
    results must be picklable: they cross processes, and every result passes through the coordinator.

    *balancer*: a mapping balancer, name or object (*params* its parameters). A static mapper
    (``heft``, ``cpop``, ``round-robin``, ``metis``, …) plans once from the loads and the workers'
    speeds; an online one (``pd``, the default) places each task when its inputs exist
    (:mod:`dlbkit.runtime.families.graph`). *backend*: ``"local"`` or ``"mpi"`` (every rank calls
    with the same tasks; rank 0 coordinates; every rank gets the results). *workers*: processes
    (default: the usable CPUs, or the emulated platform's workers). *emulate*: slow workers down as a
    platform's nodes would (a Platform, a platform TOML path or a list of speed factors); the plan
    then sees those speeds. *record* saves the trace for :func:`dlbkit.replay` (into the graph
    simulator). *seed* seeds the balancer's random stream and a platform emulation.

    A worker that dies (local backend) has its unfinished tasks recomputed elsewhere; every result is
    kept once. Raise :class:`~dlbkit.errors.TaskError` if a task's function raises (its ``index`` is
    the task's key; the worker's traceback is its cause), after every worker is stopped;
    :class:`~dlbkit.errors.ConfigError` for bad input (a cycle, a non-callable, …).
    """
    _backend(backend)

    def checks():
        check_record(record, backend)
        s = _seed(seed)
        _progress(progress)
        spec = parse_tasks(tasks)
        b = resolve(balancer, params, kind=("mapping", "graph-online"))
        emulation = _emulation(emulate, s, None)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        return s, spec, b, emulation, _worker_count(workers, emulation, backend)

    asked = workers
    seed, spec, b, emulation, workers = agreed(backend, checks)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    values, trace = _graph_family.run_graph(spec, b, backend=backend, workers=asked if backend == "mpi" else workers,
                                            emulation=emulation, progress=progress, rng=rng,
                                            start_method=start_method,
                                            record_decisions=_flag("record_decisions", record_decisions))
    trace.seed = seed
    result = GraphResult(dict(zip(spec.keys, values)), trace, b)
    if record is not None and coordinates(backend):
        result.save(record)
    return result


def graph(tasks: Any, *, balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
          backend: str = "local", workers: int | None = None, progress: bool | None = None, emulate: Any = None,
          seed: int = 0, record: str | Path | None = None) -> dict:
    """Every task's value, computed in parallel: a dict key → value; see :func:`run_graph`.

    >>> import operator, dlbkit
    >>> dlbkit.graph({"a": (abs, -2), "b": (operator.add, "a", 10), "c": (operator.mul, "a", "b")}, workers=2)
    {'a': 2, 'b': 12, 'c': 24}
    """
    return run_graph(tasks, balancer=balancer, params=params, backend=backend, workers=workers, progress=progress,
                     emulate=emulate, seed=seed, record=record).results
