"""The runtime's backends, written once for every family's program: ``local`` (worker processes on this
machine, the default), ``mpi`` (ranks of an ``mpiexec`` job) and ``dask`` (the workers of a Dask
cluster: one Dask task per message for a family whose worker answers each message on its own, the
map's and the graph's, :mod:`.dask`; one long-running task per worker for a family whose workers keep
state, the tree's, the SPMD domain's and the job cluster's, :mod:`.dask_loop`). See :mod:`.base` for
what a backend owns and what a family supplies."""

from __future__ import annotations

from typing import Any

from dlbkit.runtime.backends.base import Program

__all__ = ["BACKENDS", "execute"]

#: every backend, for every family (on Dask a family's worker loop, Program.serve, is one long-running
#: task per worker; a family with Program.answer has one task per message)
BACKENDS = ("local", "mpi", "dask")


def execute(program: Program, backend: str, *, workers: int | None = None, start_method: str | None = None,
            client: Any = None) -> tuple:
    """Run *program* on *backend* (one of :data:`BACKENDS`); its outcome (the last element its Trace).

    Under MPI every rank calls this and every rank gets the outcome; *start_method* is the local
    backend's (``fork``/``spawn``; default fork where available); *client* the Dask backend's (a
    ``distributed.Client``, a scheduler's address, or None for the running Client)."""
    if backend == "dask":
        from dlbkit.runtime.backends.dask import run as run_dask  # distributed is imported only when Dask is asked for
        return run_dask(program, workers=workers, client=client)
    if backend == "mpi":
        from dlbkit.runtime.backends.mpi import run as run_mpi  # mpi4py is imported only when MPI is asked for
        return run_mpi(program, workers=workers)
    from dlbkit.runtime.backends.local import run as run_local
    return run_local(program, workers=workers, start_method=start_method)
