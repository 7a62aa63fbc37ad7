"""The MPI backend of ``dlbkit.spmd``: rank 0 coordinates, worker w is rank w + 1.

Run a script that calls ``dlbkit.spmd(step, domain, ..., backend="mpi")`` on every rank::

    mpiexec -n 5 python script.py        # 1 coordinator + 4 workers

Every rank must make the same calls with the same arguments; only rank 0's *domain* is read (rank 0
sends each worker its block) and rank 0's emulation is broadcast. Halos travel through rank 0,
exactly as on the local backend (the same coordinator, :mod:`dlbkit.runtime.spmd_coordinator`, on
an :class:`~dlbkit.runtime.mpi.MPITransport`; the same worker loop on a
:class:`~dlbkit.runtime.mpi.RankConn`). Everything else is :mod:`dlbkit.runtime.mpi`'s: a barrier
fixes run time 0 on every rank (the workers' stamps are run times, so need no shift), waits poll
quietly, and when the run ends rank 0 broadcasts the outcome: every rank returns the same final
domain and trace, or, after a failure, rank 0 raises the error (e.g. :class:`TaskError`) while
the worker ranks raise ``SystemExit`` with a one-line reason, so ``mpiexec`` exits non-zero and
never hangs. A job whose MPI run failed cannot start another one.
"""

from __future__ import annotations


from ..errors import ConfigError, TaskError
from . import mpi as _m
from .progress import Progress
from .spmd_worker import SpmdSpec

__all__ = ["run_mpi_spmd"]


def run_mpi_spmd(spec: SpmdSpec, balancer, domain, *, iterations: int, window: int, bandwidth, progress,
                 rng):
    """Every rank calls this; rank 0 coordinates, the others step blocks; all return (domain, trace)."""
    def problem_of(size: int):
        problem = _m.emulation_problem(spec.emulation, size)
        if problem is None and len(domain) - 2 * spec.halo < (size - 1) * spec.halo:
            problem = ConfigError("domain", f"{len(domain)} rows",
                                  f"at least 2·halo + workers·halo = {2 * spec.halo + (size - 1) * spec.halo} "
                                  f"rows for {size - 1} worker ranks and halo {spec.halo}")
        return problem

    comm, rank, size, origin, _origin0, emulation = _m.start_run(problem_of, spec.emulation)
    spec.origin = origin
    spec.emulation = emulation
    if rank == 0:
        return _coordinate(comm, spec, balancer, domain, iterations, window, bandwidth, progress, rng)
    return _work(comm, rank, spec)


def _reason(e: BaseException) -> str:
    if isinstance(e, TaskError) and hasattr(e, "worker"):
        return (f"step failed on worker {e.worker} (rank {e.worker + 1}) at iteration {e.iteration} "
                "(traceback on rank 0)")
    return _m._reason(e, None)


def _coordinate(comm, spec, balancer, domain, iterations, window, bandwidth, progress, rng):
    from .spmd_coordinator import coordinate_spmd

    transport = _m.MPITransport(comm)
    try:
        out, trace = coordinate_spmd(transport, balancer, domain, iterations=iterations, halo=spec.halo,
                                     window=window, origin=spec.origin, bandwidth=bandwidth,
                                     emulation=spec.emulation, progress=Progress(iterations, progress), rng=rng,
                                     backend="mpi")
    except BaseException as e:
        _m._failed = True
        try:
            transport.stop(kill=True)  # no-op when the coordinator has done it
            _m._quiet_barrier(comm)
            comm.bcast(("failed", _reason(e)), root=0)
            comm.Free()
        except BaseException:  # noqa: BLE001 - ditto
            _m._abort("could not stop the worker ranks cleanly; aborting the MPI job")
        raise
    try:
        trace.meta["ranks"] = comm.Get_size()
        _m._quiet_barrier(comm)
        comm.bcast(("ok", out, trace), root=0)
        comm.Free()
    except BaseException:  # noqa: BLE001 - ditto
        _m._abort("could not send the results to the worker ranks; aborting the MPI job")
    return out, trace


def _work(comm, rank: int, spec: SpmdSpec):
    from .spmd_worker import serve_spmd

    return _m.serve_rank(comm, rank, serve_spmd, spec)
