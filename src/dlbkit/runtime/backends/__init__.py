"""The runtime's backends, written once for every family's program: ``local`` (worker processes on this
machine, the default), ``mpi`` (ranks of an ``mpiexec`` job) and ``dask`` (the workers of a Dask
cluster, for a family whose worker answers each message on its own: the map's, the graph's). See
:mod:`.base` for what a backend owns and what a family supplies."""

from __future__ import annotations

from typing import Any

from dlbkit.runtime.backends.base import Program

__all__ = ["BACKENDS", "LOOP_BACKENDS", "execute"]

#: every backend, for a family whose worker answers each message on its own (Program.answer)
BACKENDS = ("local", "mpi", "dask")
#: the backends of a family whose workers keep state between messages (a worker loop, Program.serve)
LOOP_BACKENDS = ("local", "mpi")


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
