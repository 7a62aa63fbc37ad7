"""The runtime's backends, written once for every family's program: ``local`` (worker processes on this
machine, the default) and ``mpi`` (ranks of an ``mpiexec`` job). See :mod:`.base` for what a
backend owns and what a family supplies."""

from __future__ import annotations

from dlbkit.runtime.backends.base import Program

__all__ = ["BACKENDS", "execute"]

BACKENDS = ("local", "mpi")


def execute(program: Program, backend: str, *, workers: int | None = None, start_method: str | None = None) -> tuple:
    """Run *program* on *backend* (``"local"`` or ``"mpi"``); its outcome (the last element its Trace).

    Under MPI every rank calls this and every rank gets the outcome; *start_method* is the local
    backend's (``fork``/``spawn``; default fork where available)."""
    if backend == "mpi":
        from dlbkit.runtime.backends.mpi import run as run_mpi  # mpi4py is imported only when MPI is asked for
        return run_mpi(program, workers=workers)
    from dlbkit.runtime.backends.local import run as run_local
    return run_local(program, workers=workers, start_method=start_method)
