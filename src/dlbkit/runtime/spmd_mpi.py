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

import signal
import threading
import time

from ..errors import ConfigError, DlbkitError, TaskError
from . import mpi as _m
from .progress import Progress
from .spmd_worker import SpmdSpec

__all__ = ["run_mpi_spmd"]


def run_mpi_spmd(spec: SpmdSpec, balancer, domain, *, iterations: int, window: int, bandwidth, progress,
                 rng):
    """Every rank calls this; rank 0 coordinates, the others step blocks; all return (domain, trace)."""
    MPI = _m._mpi()
    world = MPI.COMM_WORLD
    size, rank = world.Get_size(), world.Get_rank()
    if size < 2:
        raise ConfigError("MPI ranks", size, "at least 2 for backend 'mpi' (rank 0 coordinates, the others "
                          "compute): start the script with mpiexec -n 3 python script.py")
    if _m._failed:
        raise DlbkitError("a previous MPI run of this job failed and its worker ranks have left: "
                          "the job cannot run another one")
    try:
        comm = world.Dup()
        _m._quiet_barrier(comm)
        comm.Barrier()
        origin = time.perf_counter()
        problem = None
        emulation = spec.emulation
        if rank == 0:
            rows = len(domain) - 2 * spec.halo
            if emulation is not None and emulation.n_workers != size - 1:
                problem = ConfigError("emulate", list(emulation.speeds),
                                      f"one speed per worker rank: {size - 1} for this {size}-rank MPI job "
                                      "(rank 0 coordinates)")
            elif rows < (size - 1) * spec.halo:
                problem = ConfigError("domain", f"{len(domain)} rows",
                                      f"at least 2·halo + workers·halo = {2 * spec.halo + (size - 1) * spec.halo} "
                                      f"rows for {size - 1} worker ranks and halo {spec.halo}")
        header = (str(problem) if problem else None, emulation) if rank == 0 else None
        error, emulation = comm.bcast(header, root=0)
    except BaseException:  # noqa: BLE001 - any failure here must end the whole job, not hang it
        _m._abort("unexpected error while starting the MPI run", rank)
    if error is not None:
        comm.Free()
        if rank == 0:
            raise problem
        raise SystemExit(f"dlbkit: rank {rank} stopping: rank 0 rejected the run: {error}")
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

    old = None
    if threading.current_thread() is threading.main_thread():
        # mpiexec forwards Ctrl-C to every rank: rank 0 alone decides how the run ends
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        conn = _m.RankConn(comm)  # SPMD messages carry run times already: no shift
        serve_spmd(conn, rank - 1, spec)
        conn.close()
        _m._quiet_barrier(comm)
        outcome = comm.bcast(None, root=0)
        comm.Free()
    except BaseException:  # noqa: BLE001 - ditto
        _m._abort("unexpected error on a worker rank; aborting the MPI job", rank)
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)
    if outcome[0] == "ok":
        return outcome[1], outcome[2]
    _m._failed = True
    raise SystemExit(f"dlbkit: rank {rank} stopping: {outcome[1]}")
