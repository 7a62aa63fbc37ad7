"""``dlbkit.tree`` and ``dlbkit.run_tree``: divide and conquer and branch and bound, balanced by migration.

The computation is a tree of tasks that the user's ``expand`` grows: expanding a task returns its
children (new tasks) and a value; the values of all tasks are folded into one result. Workers keep
their waiting tasks in a deque, run the newest (depth-first) and give away the oldest (the largest
subtrees, 001 §1.3); a migration balancer (``dlbkit balancers --kind migration``) decides who asks
whom, how many tasks move and where new tasks go. See :func:`run_tree`.
"""

from __future__ import annotations

import operator
import time
from typing import Any, Callable, Mapping

from ..balancers.base import Balancer, MigrationBalancer
from ..balancers.registry import make
from ..errors import ConfigError
from ..model.topology import KINDS, edge_colouring, neighbour_lists, topology_from_dict
from .api import BACKENDS, RunResult, _emulation, _worker_count
from .progress import Progress
from .tree_worker import TreeSpec

__all__ = ["tree", "run_tree", "TreeResult", "DEFAULT_TREE_BALANCER", "DEFAULT_TOPOLOGY", "resolve_topology",
           "bind_check"]

#: randomised work stealing: no load information, idle workers pull the oldest (largest) subtrees
DEFAULT_TREE_BALANCER = "steal"
#: every worker may exchange work with every other one
DEFAULT_TOPOLOGY = "complete"
_TOPOLOGY_ALLOWED = ("a topology name (" + ", ".join(k for k in KINDS if k != "edges") + "), a table "
                     "{'kind': ..., 'rows': ..., 'edges': ...}, or a connected networkx graph on nodes 0..workers-1")


class TreeResult(RunResult):
    """A real tree run: ``value`` (the combined result), ``bound`` (the best bound, or None without
    branch and bound), ``tasks`` (tasks expanded), its ``trace`` and ``metrics``.

    Trace rows (``trace.chunk_table()``) are **busy stretches**: one row per run of tasks a worker
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


def _migration_balancer(balancer: Balancer | str, params: Mapping | None) -> MigrationBalancer:
    if isinstance(balancer, str):
        b = make(balancer, dict(params or {}))
    elif isinstance(balancer, Balancer):
        b = balancer.clone().set_params(**dict(params or {})) if params else balancer
        b.validate()
    else:
        raise ConfigError("balancer", balancer, "a balancer name or object (dlbkit balancers --kind migration)")
    if not isinstance(b, MigrationBalancer):
        raise ConfigError("balancer", getattr(b, "name", b), "a migration balancer (dlbkit balancers --kind migration)")
    if b.name == "phase-adaptive" and getattr(b, "detector", None) == "work":
        raise ConfigError("parameter 'detector' of phase-adaptive", "work", "'tasks' in a real run: the "
                          "remaining-work detector needs a work estimate per task, which only the simulators have")
    phases = getattr(b, "balancers", None) if b.name == "phase-adaptive" else None
    for k, inner in enumerate(phases or ()):
        # the phase changes in the coordinator; workers run on_idle/on_spawn with their own copy,
        # which would stay in phase I: only central (periodic) rules can follow the phases
        if inner is None or (isinstance(inner, str) and inner.lower() == "none"):
            continue
        cls = type(inner) if isinstance(inner, MigrationBalancer) else type(make(inner))
        if cls.receiver_initiated or cls.sender_initiated or not cls.periodic:
            raise ConfigError(f"parameter 'balancers'[{k}] of phase-adaptive", getattr(cls, "name", inner),
                              "a periodic rule (gdem, ldsv, greedy, refine) or 'none' in a real run: phase "
                              "changes are seen by the coordinator only (the simulators take any rule)")
    return b


def _callable(name: str, f: Any, optional: bool = True) -> None:
    if (f is None and not optional) or (f is not None and not callable(f)):
        raise ConfigError(name, f, "a callable" + (" or None" if optional else ""))


def _check_topology(topology: Any) -> None:
    """Reject a topology argument of the wrong kind before any worker starts."""
    if topology is None or isinstance(topology, (str, Mapping)):
        if isinstance(topology, str) and topology not in KINDS or topology == "edges":
            raise ConfigError("topology", topology, _TOPOLOGY_ALLOWED)
        return
    import networkx as nx

    if not isinstance(topology, nx.Graph):
        raise ConfigError("topology", topology, _TOPOLOGY_ALLOWED)


def resolve_topology(topology: Any, n_workers: int) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
    """The neighbour lists and edge colour classes (k-ary n-cubes only) of *topology* over *n_workers* workers.

    *topology*: None (the complete graph), a kind name (``"complete"``, ``"chain"``, ``"ring"``,
    ``"mesh"``, ``"torus"``, ``"hypercube"``, ``"star"``; mesh and torus take the most nearly square
    shape), a table ``{"kind": ..., "rows": ..., "edges": ...}`` as in platform files, or a connected
    networkx graph whose nodes are exactly 0..n_workers-1. Raise :class:`ConfigError` naming
    ``topology`` when it does not fit the worker count (a ring of 2, a torus of 5, a hypercube of 6).
    """
    import networkx as nx

    _check_topology(topology)
    if topology is None:
        topology = DEFAULT_TOPOLOGY
    if isinstance(topology, nx.Graph):
        topology = topology.to_undirected() if topology.is_directed() else topology
        try:
            nodes = sorted(topology.nodes)
        except TypeError:  # labels of mixed types
            nodes = list(topology.nodes)
        if nodes != list(range(n_workers)):
            raise ConfigError("topology", f"a graph on nodes {_short_nodes(nodes)}",
                              f"a graph on exactly the nodes 0..{n_workers - 1} (one per worker)")
        if n_workers > 1 and not nx.is_connected(topology):
            raise ConfigError("topology", "a graph that is not connected", "a connected graph (work must reach "
                              "every worker)")
        g = nx.Graph()
        g.add_nodes_from(range(n_workers))
        g.add_edges_from((int(a), int(b)) for a, b in topology.edges if a != b)
    else:
        try:
            g = topology_from_dict(topology, n_workers, field="topology")
        except ConfigError as e:
            if not isinstance(topology, str):
                raise
            raise ConfigError("topology", topology,
                              f"a topology that fits {n_workers} worker(s) ({e.field}: {e.allowed})") from None
    # a k-ary n-cube is coloured by dimension (cheap, and the order 001 §3.1 uses); other graphs are
    # left to a dimension-exchange rule to colour itself (a greedy colouring of a large complete
    # graph is costly, and only such a rule needs it)
    return neighbour_lists(g), (edge_colouring(g) if "dims" in g.graph else [])


def bind_check(spec: TreeSpec, n_workers: int) -> None:
    """Start a copy of the balancer on the view the coordinator will have (worker count, topology,
    speeds), so that a rule that cannot run there (Loadserver on one worker, say) raises its
    ConfigError before any worker starts."""
    import numpy as np

    from ..model.view import TreeView

    nb, colours = resolve_topology(spec.topology, n_workers)
    view = TreeView(n_workers, neighbours=nb, colours=colours, speeds=list(spec.speeds) or [1.0] * n_workers)
    b = spec.balancer.clone()
    b.start(view, np.random.default_rng(0))
    if getattr(b, "server_", None) == 0:  # the root starts on worker 0
        raise ConfigError("parameter 'server' of ldsv", 0, "another worker than 0, where the root starts (the "
                          "Load Information Server computes nothing); the default -1 is the last worker")


def _short_nodes(nodes: list) -> str:
    return repr(nodes) if len(nodes) <= 8 else f"[{nodes[0]!r}, ..., {nodes[-1]!r}] ({len(nodes)} nodes)"


def run_tree(expand: Callable, root: Any, *, balancer: Balancer | str = DEFAULT_TREE_BALANCER,
             params: Mapping | None = None, combine: Callable | None = None, initial: Any = None,
             bound: Any = None, better: Callable | None = None, backend: str = "local",
             workers: int | None = None, progress: bool | None = None, emulate: Any = None, seed: int = 0,
             topology: Any = None, start_method: str | None = None) -> TreeResult:
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
    :data:`~dlbkit.runtime.tree_worker.CHECK_S` seconds), so a worker may still expand a task that
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
    graph on nodes 0..workers-1 (see :func:`resolve_topology`). It is over the workers (MPI: over
    ranks 1..n-1, worker w = rank w + 1); one that does not fit the worker count is a ConfigError.

    Raise :class:`~dlbkit.errors.TaskError` if *expand* (or *combine*) raises: its ``index`` is the
    ``repr`` of the failing task (at most 200 characters), its message carries the worker's
    traceback, every worker is stopped first and none is left behind.
    """
    if backend not in BACKENDS:
        raise ConfigError("backend", backend, "one of " + ", ".join(repr(b) for b in BACKENDS))
    _callable("expand", expand, optional=False)
    _callable("combine", combine)
    _callable("better", better)
    if better is not None and bound is None:
        raise ConfigError("better", better, "None unless a bound is given (branch and bound)")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError("seed", seed, "a non-negative integer")
    b = _migration_balancer(balancer, params)
    _check_topology(topology)
    emulation = _emulation(emulate, seed, None)
    workers = _worker_count(workers, emulation)
    spec = TreeSpec(expand=expand, root=root, n_workers=0, balancer=b,
                    combine=combine if combine is not None else operator.add,
                    branch_and_bound=bound is not None, bound=bound,
                    better=better if better is not None else operator.gt, emulation=emulation, seed=seed,
                    speeds=list(emulation.speeds) if emulation else [], topology=topology)
    init = 0 if initial is None else initial
    if backend == "mpi":
        from .tree_mpi import run_mpi_tree
        value, best, trace = run_mpi_tree(spec, initial=init, progress=progress)
    else:
        value, best, trace = _run_local(spec, init, workers, progress, start_method)
    return TreeResult(value, best, trace, b)


def _run_local(spec: TreeSpec, initial, workers, progress, start_method):
    from .transport import LocalTransport, default_workers
    from .tree_coordinator import coordinate_tree
    from .tree_worker import serve_tree

    spec.n_workers = workers or default_workers()
    spec.neighbours, spec.colours = resolve_topology(spec.topology, spec.n_workers)
    if not spec.speeds:
        spec.speeds = [1.0] * spec.n_workers
    bind_check(spec, spec.n_workers)
    spec.origin = time.perf_counter()
    transport = LocalTransport(spec.n_workers, serve_tree, (spec,), start_method=start_method)
    return coordinate_tree(transport, spec, initial=initial, emulation=spec.emulation,
                           progress=Progress(1, progress), backend="local")


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
