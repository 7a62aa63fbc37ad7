"""The MPI backend of ``dlbkit.tree``: rank 0 coordinates, worker w is rank w + 1.

Run a script that calls ``dlbkit.tree(expand, root, backend="mpi")`` on every rank (SPMD)::

    mpiexec -n 4 python script.py        # 1 coordinator + 3 workers

Every rank must make the same calls with the same *expand*, *root*, balancer and seed (worker 0
starts from its own copy of *root*). It reuses :mod:`dlbkit.runtime.mpi` unchanged: the same
:class:`~dlbkit.runtime.mpi.MPITransport` on rank 0, the tree worker loop
(:func:`~dlbkit.runtime.tree_worker.serve_tree`) on a :class:`~dlbkit.runtime.mpi.RankConn` on the
others, the same start (a barrier fixes run time 0 on every rank, so the workers' stamps, taken on
their own clocks from that instant, need no shift), the same quiet waits and the same failure
handling: when the run is done (or failed) rank 0 broadcasts the outcome, so every rank returns
the same value, bound and trace, or the worker ranks raise ``SystemExit`` with a one-line reason
while rank 0 raises the error. A job whose MPI run failed cannot start another one. A *topology*
is over the worker ranks (worker w is rank w + 1) and must fit their number, size - 1: rank 0
checks it with the emulation before any work starts.
"""

from __future__ import annotations

from typing import Any

from . import mpi as _m
from .progress import Progress
from ..errors import ConfigError
from .tree_api import bind_check, resolve_topology
from .tree_worker import TreeSpec

__all__ = ["run_mpi_tree"]


def run_mpi_tree(spec: TreeSpec, *, initial: Any, progress: bool | None = None) -> tuple[Any, Any, Any]:
    """Every rank calls this; rank 0 coordinates, the others expand; all return (value, bound, trace)."""
    comm, rank, size, origin, _origin0, emulation = _m.start_run(
        lambda size: _m.emulation_problem(spec.emulation, size) or _bind_problem(spec, size),
        spec.emulation)
    spec.n_workers = size - 1
    spec.neighbours, spec.colours = resolve_topology(spec.topology, size - 1)  # rank 0 checked it fits
    spec.origin = origin
    spec.emulation = emulation
    spec.speeds = list(emulation.speeds) if emulation else [1.0] * (size - 1)
    if rank == 0:
        return _coordinate(comm, spec, initial, progress)
    return _work(comm, rank, spec)


def _bind_problem(spec: TreeSpec, size: int) -> ConfigError | None:
    """The topology must fit the size - 1 worker ranks, and the balancer run on them."""
    try:
        bind_check(spec, size - 1)
    except ConfigError as e:
        if not e.field.startswith("topology"):
            return e
        return ConfigError(e.field, e.value, f"{e.allowed} (this {size}-rank MPI job has {size - 1} worker ranks: "
                           "rank 0 coordinates)")
    return None


def _coordinate(comm, spec: TreeSpec, initial, progress):
    from .tree_coordinator import coordinate_tree

    transport = _m.MPITransport(comm)
    try:
        value, best, trace = coordinate_tree(transport, spec, initial=initial, emulation=spec.emulation,
                                             progress=Progress(1, progress), backend="mpi")
    except BaseException as e:
        _m._failed = True
        try:
            transport.stop(kill=True)  # no-op when the coordinator has done it
            _m._quiet_barrier(comm)
            comm.bcast(("failed", _m._reason(e, transport)), root=0)
            comm.Free()
        except BaseException:
            _m._abort("could not stop the worker ranks cleanly; aborting the MPI job")
        raise
    try:
        trace.meta["ranks"] = comm.Get_size()
        _m._quiet_barrier(comm)
        comm.bcast(("ok", value, best, trace), root=0)
        comm.Free()
    except BaseException:
        _m._abort("could not send the results to the worker ranks; aborting the MPI job")
    return value, best, trace


def _work(comm, rank: int, spec: TreeSpec):
    from .tree_worker import serve_tree

    return _m.serve_rank(comm, rank, serve_tree, spec)
