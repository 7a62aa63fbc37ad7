"""The tree family (``dlbkit.tree``): divide and conquer and branch and bound, balanced by migration.

The computation is a tree of tasks that the user's ``expand`` grows: expanding a task returns its
children (new tasks) and a value; the values of all tasks are folded into one result. Workers keep
their waiting tasks in a deque, run the newest (depth-first) and give away the oldest (the largest
subtrees, 001 §1.3); a migration balancer (``dlbkit balancers --kind migration``) decides who asks
whom, how many tasks move and where new tasks go. The coordinator's rules are in
:mod:`.tree_coordinator` (its load knowledge in :mod:`.tree_loads`), the worker loop in
:mod:`.tree_worker`; :func:`run_tree` is the family's runner (a resolved balancer in, ``(value,
bound, trace)`` out, on either backend), :func:`resolve_topology` and :func:`bind_check` the checks
that need the worker count.
"""

from __future__ import annotations

import dataclasses

from typing import Any, Mapping

from dlbkit.errors import ConfigError, closest
from dlbkit.model.topology import KINDS, edge_colouring, given_graph, neighbour_lists, topology_from_dict
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import Program
from dlbkit.runtime.progress import Progress
from dlbkit.families.tree.runtime.coordinator import coordinate_tree
from dlbkit.families.tree.runtime.worker import TreeSpec, serve_tree

__all__ = ["TreeRun", "run_tree", "DEFAULT_TOPOLOGY", "check_topology", "resolve_topology", "bind_check"]

#: every worker may exchange work with every other one
DEFAULT_TOPOLOGY = "complete"
_TOPOLOGY_ALLOWED = ("a topology name (" + ", ".join(k for k in KINDS if k != "edges") + "), a table "
                     "{'kind': ..., 'rows': ..., 'edges': ...}, or a connected networkx graph on nodes 0..workers-1")


def check_topology(topology: Any) -> None:
    """Reject a topology argument of the wrong kind before any worker starts."""
    if topology is None or isinstance(topology, (str, Mapping)):
        if isinstance(topology, str) and topology not in KINDS or topology == "edges":
            raise ConfigError("topology", topology, _TOPOLOGY_ALLOWED,
                              suggest=closest(topology, [k for k in KINDS if k != "edges"]))
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

    check_topology(topology)
    if topology is None:
        topology = DEFAULT_TOPOLOGY
    if isinstance(topology, nx.Graph):
        g = given_graph(topology, n_workers, "topology")
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

    from dlbkit.families.tree.model.view import TreeView

    nb, colours = resolve_topology(spec.topology, n_workers)
    view = TreeView(n_workers, neighbours=nb, colours=colours, speeds=list(spec.speeds) or [1.0] * n_workers)
    b = spec.balancer.clone()
    b.start(view, np.random.default_rng(0))
    if b.reserved_node() == 0:  # the root starts on worker 0
        raise ConfigError("parameter 'server' of ldsv", 0, "another worker than 0, where the root starts (the "
                          "Load Information Server computes nothing); the default -1 is the last worker")


class TreeRun(Program):
    """The task tree of *spec*; the outcome is ``(value, best bound or None, trace)``."""

    serve = staticmethod(serve_tree)
    interruptible = True  # under MPI, Ctrl-C and the user's signal handlers interrupt expand and combine

    def __init__(self, spec: TreeSpec, *, initial: Any, progress: bool | None, journal=None):
        self.spec = spec
        self.initial = initial
        self.journal = journal  # the coordinator's (rank 0's under MPI)
        self.emulation = spec.emulation
        self.progress = Progress(1, progress)

    def problem(self, n_workers, backend):
        """The topology must fit the workers, and the balancer run on them: the same message on either
        backend (it names the worker count, which under MPI is the job's ranks but rank 0)."""
        try:
            bind_check(self.spec, n_workers)
        except ConfigError as e:
            return e
        return None

    def sent_to_workers(self):
        s = self.spec
        return [("expand", s.expand), ("combine", s.combine), ("better", s.better), ("root", s.root),
                ("bound", s.bound), ("balancer", s.balancer)]

    def shared(self):
        # rank 0's root, bound, balancer, seed and topology with its emulation: a worker rank ran its
        # own (a script passing them per rank: worker 0 grew the tree from its own root, a value rank 0
        # did not ask for). The user's functions are not sent: they need not pickle under MPI
        s = self.spec
        return self.emulation, (s.root, s.branch_and_bound, s.bound, s.balancer, s.seed, s.topology, s.start,
                                s.start_redo, s.start_skip)

    def setup(self, n_workers, origin, shared):
        spec = self.spec
        shared, (spec.root, spec.branch_and_bound, spec.bound, spec.balancer, spec.seed, spec.topology, spec.start,
                 spec.start_redo, spec.start_skip) = shared
        spec.n_workers = n_workers
        spec.neighbours, spec.colours = resolve_topology(spec.topology, n_workers)  # problem() checked it fits
        spec.origin = origin
        spec.emulation = self.emulation = shared
        spec.speeds = list(shared.speeds) if shared else [1.0] * n_workers

    def worker_args(self, backend):
        return (self.spec,)

    def worker_args_at(self, backend, origin):
        return (dataclasses.replace(self.spec, origin=origin),)

    def coordinate(self, transport, backend):
        return coordinate_tree(transport, self.spec, initial=self.initial, emulation=self.spec.emulation,
                               progress=self.progress, backend=backend, journal=self.journal)


def run_tree(spec: TreeSpec, *, initial: Any = 0, backend: str = "local", workers: int | None = None,
             progress: bool | None = None, start_method: str | None = None,
             client: Any = None, journal=None) -> tuple[Any, Any, Any]:
    """The tree family's runner: expand *spec*'s tree on *backend*; ``(value, bound, trace)``.

    *spec* carries a resolved, validated migration balancer and the checked arguments; *workers*
    None means the usable CPUs (local) or the job's worker ranks (MPI); *journal* the coordinator's
    (:func:`~.coordinator.coordinate_tree`)."""
    return execute(TreeRun(spec, initial=initial, progress=progress, journal=journal), backend, workers=workers,
                   start_method=start_method, client=client)
