"""The task-tree family's real run: ``dlbkit.tree`` and ``dlbkit.run_tree`` on the user's expand function."""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any, Callable, Mapping

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.run import RunResult, _backend, _callable, _flag, _progress, _seed, _worker_count, agreed, \
    open_journal
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.families.tree.runtime import program as _tree_family
from dlbkit.families.tree.runtime.worker import TreeSpec
from dlbkit.info import resolve as resolve_info
from dlbkit.families.tree.model.seeding import TREE
from dlbkit.runtime.emulation import emulation_from as _emulation
from dlbkit.runtime.journal import Journal, function_name

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
             info: Any = None, client: Any = None, journal: str | Path | None = None) -> TreeResult:
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

    *journal*: a file to which the coordinator writes a snapshot of the run every
    :data:`~dlbkit.families.tree.runtime.coordinator.JOURNAL_S` = 2 s (the value folded so far and the
    frontier: every task created and not yet expanded, wherever it is; each pauses the workers for about a
    round trip), and the value at the end. A rerun with the same journal (the same *expand*, *root*,
    *combine*, *initial*, *bound* and *better*; others are a ConfigError) resumes from its last snapshot:
    worker 0 starts with the frontier, so at most the last 2 s of work is done again, and the result is an
    uninterrupted run's (*combine* folds in another order: floats may differ in the last bits); a journal
    of a finished run returns its value with nothing expanded. ``trace.meta["journal"]`` says whether the
    run was resumed; replay refuses a resumed run's recording (its tree begins at the frontier). Under MPI
    rank 0 keeps it.

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
        # the coordinator's (rank 0's under MPI), opened here: another run's refused on every rank
        kept = open_journal(journal, backend, function_name(expand), kind="snapshots",
                            about=[root, initial, bound] + [None if f is None else function_name(f)
                                                           for f in (combine, better)])
        return s, b, emulation, _worker_count(workers, emulation, backend), model, flag, kept

    asked = workers
    seed, b, emulation, workers, model, flag, kept = agreed(backend, checks)
    spec = TreeSpec(expand=expand, root=root, n_workers=0, balancer=b,
                    combine=combine if combine is not None else operator.add,
                    branch_and_bound=bound is not None, bound=bound,
                    better=better if better is not None else operator.gt, emulation=emulation, seed=seed,
                    speeds=list(emulation.speeds) if emulation else [], topology=topology,
                    record_decisions=flag, info=model)
    init = 0 if initial is None else initial
    if kept is not None:
        init = _resumed(spec, kept, init)
    try:
        value, best, trace = _tree_family.run_tree(spec, initial=init, backend=backend,
                                                   workers=asked if backend == "mpi" else workers,
                                                   progress=progress, start_method=start_method, client=client,
                                                   journal=kept)
    finally:
        if kept is not None:
            kept.close()
    return TreeResult(value, best, trace, b)


def _resumed(spec: TreeSpec, kept: Journal, initial: Any) -> Any:
    """With a journal that holds a snapshot: *spec* starts from its frontier (fresh ids, below the root's:
    they cannot meet the ids the run creates) and its best bound; the run's initial value, the journaled one."""
    last = kept.done.get(("done", 0))
    if last is None:
        snaps = [k[1] for k in kept.done if k[0] == "snap"]
        if not snaps:
            return initial
        last = kept.done[("snap", max(snaps))]
    tasks, redo = last.get("tasks", []), last.get("redo", [])
    spec.start = [(-1 - i, t) for i, (_, t) in enumerate(tasks)]
    spec.start_redo = [(-1 - len(tasks) - i, t) for i, (_, t) in enumerate(redo)]
    spec.start_skip = list(last.get("skip", []))
    if spec.branch_and_bound and last["bound"] is not None:
        spec.bound = last["bound"]
    return last["value"]


def tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
         params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
         bound: Any = None, better: Callable | None = None, backend: str = "local",
         workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
         topology: Any = None, client: Any = None, journal: str | Path | None = None) -> Any:
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
                 topology=topology, client=client, journal=journal)
    return (r.value, r.bound) if bound is not None else r.value
