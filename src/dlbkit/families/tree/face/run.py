"""The task-tree family's real run: ``dlbkit.tree`` and ``dlbkit.run_tree`` on the user's expand function."""

from __future__ import annotations

import operator
from typing import Any, Callable, Mapping

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.run import RunResult, _backend, _callable, _flag, _progress, _seed, _worker_count, agreed
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.families.tree.runtime import program as _tree_family
from dlbkit.families.tree.runtime.worker import TreeSpec
from dlbkit.info import resolve as resolve_info
from dlbkit.families.tree.model.seeding import TREE
from dlbkit.runtime.emulation import emulation_from as _emulation

__all__ = ["DEFAULT_TREE_BALANCER", "TreeResult", "run_tree", "tree"]

#: randomised work stealing: no load information, idle workers pull the oldest (largest) subtrees
DEFAULT_TREE_BALANCER = "steal"


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
    workers of a receiver-initiated rule), ``topology`` (its name or table, or a graph's edges) and
    ``task_tree``, what a replay needs (:mod:`dlbkit.families.tree.face.replay`): per task expanded, worker by
    worker in the order each expanded them, its ``worker``, ``id`` (the root's 0; a worker w's k-th task created
    1 + w + workers·k), measured ``cost`` (seconds, before emulation's stretch) and number of ``children``;
    ``dead``, the workers that died (their share expanded again by another: ``tasks`` and ``task_tree`` are
    of the workers that finished, each task in them once), and ``recovery``, per death its ``worker``,
    ``exit`` code, ``time``, the heir it went ``to``, the ``tasks`` sent and the tasks to ``skip``.
    ``results`` is the same object as ``value`` (the name :class:`RunResult` uses).
    """

    def __init__(self, value: Any, bound: Any, trace, balancer: Balancer):
        super().__init__(value, trace, balancer)
        self.value = value
        self.bound = bound

    @property
    def tasks(self) -> int:
        return int(self.trace.meta.get("tasks", 0))


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


# --- tree -----------------------------------------------------------------------------------------
def run_tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
             params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
             bound: Any = None, better: Callable | None = None, backend: str = "local",
             workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
             topology: Any = None, start_method: str | None = None, record_decisions: bool = False,
             info: Any = None, client: Any = None) -> TreeResult:
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
    :data:`~dlbkit.families.tree.runtime.worker.CHECK_S` seconds), so a worker may still expand a task that
    a bound found elsewhere would have pruned. The result's ``bound`` is the best over all workers.

    *balancer*: a migration balancer, name or object (default ``"steal"``, random work stealing);
    *params* its parameters. The root starts on worker 0. *backend*: ``"local"`` (processes on this
    machine, talking only to the coordinator through pipes: no listener is opened), ``"mpi"`` or
    ``"dask"`` (each worker's loop one long-running task on a worker of *client*: a
    ``distributed.Client``, a scheduler's address, or None for the Client running here; see
    :mod:`dlbkit.runtime.backends.dask_loop`). *workers*: processes (default: the usable CPUs, the
    emulated platform's workers, or every Dask worker).
    *emulate*: slow workers down as a platform's nodes would (a Platform, a platform TOML path or a
    list of speed factors): each task's measured time is stretched by 1/speed. *progress*: a
    progress bar of tasks completed / created. *seed*: seeds every balancer's random stream.

    *topology*: which workers are neighbours (``view.neighbours``, and the edge colours that
    dimension exchange visits, ``view.colours``), for the balancers that exchange work with their
    neighbours only (diffusion, GDEM, work stealing's victims): ``"complete"`` (the default: all
    pairs), ``"chain"``, ``"ring"``, ``"mesh"``, ``"torus"`` (the most nearly square shape),
    ``"hypercube"``, ``"star"``, a table ``{"kind": "torus", "rows": 2}``, or a connected networkx
    graph on nodes 0..workers-1 (see :func:`~dlbkit.families.tree.runtime.program.resolve_topology`). It is over the workers (MPI: over
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
    _backend(backend, client)

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
        emulation = _emulation(emulate, s, None, layout=TREE)
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
                                               progress=progress, start_method=start_method, client=client)
    return TreeResult(value, best, trace, b)


def tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
         params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
         bound: Any = None, better: Callable | None = None, backend: str = "local",
         workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
         topology: Any = None, client: Any = None) -> Any:
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
                 topology=topology, client=client)
    return (r.value, r.bound) if bound is not None else r.value
