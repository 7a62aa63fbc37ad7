"""The engines a sweep can run on, by the name ``dlbkit simulate --executor NAME`` gives them.

``local``: :func:`~dlbkit.face.experiments.runner.run_sweep`'s own processes (``--jobs``).
``mpi``: the ranks of the ``mpiexec`` job this command runs in, through ``mpi4py.futures``'
:class:`~mpi4py.futures.MPICommExecutor`: rank 0 runs the sweep (reads the experiment, writes
results.csv, the plots and the report), every other rank runs the runs it is sent until rank 0 is
done. MPICommExecutor, not MPIPoolExecutor, because it needs nothing but the ranks ``mpiexec -n N``
started: no ``python -m mpi4py.futures`` wrapper, no ``MPI_Comm_spawn`` (often disabled by a
cluster's batch system, and it would start processes beyond the N the job was given).
``dask``: the workers of a running Dask scheduler (``--scheduler ADDRESS``), through
``Client.get_executor()``.

Any other :class:`concurrent.futures.Executor` goes straight to
:func:`~dlbkit.face.experiments.runner.run_experiment`.
"""

from __future__ import annotations

import contextlib
import importlib.util
from typing import Iterator

from dlbkit.errors import ConfigError, closest

__all__ = ["EXECUTORS", "SERVED", "check_executor", "open_executor"]

EXECUTORS = ("local", "mpi", "dask")

#: what :func:`open_executor` yields on an MPI rank other than 0, after it has served rank 0's runs
SERVED = object()

#: seconds to wait for a Dask scheduler before saying the address is wrong
DASK_CONNECT_S = 10


def check_executor(name: str, *, jobs: int = 1, scheduler: str | None = None) -> None:
    """Raise ConfigError, naming the flag, if ``--executor`` *name* and the options beside it do not
    fit (checked the same on every rank, before any rank starts MPI)."""
    if name not in EXECUTORS:
        raise ConfigError("--executor", name, "one of " + ", ".join(EXECUTORS), suggest=closest(name, EXECUTORS))
    if name != "local" and jobs != 1:
        raise ConfigError("--jobs", jobs, f"omitted with --executor {name} (the executor's workers run the runs)")
    if name == "dask" and not scheduler:
        raise ConfigError("--scheduler", scheduler, "the address of a running Dask scheduler with --executor dask "
                          "(e.g. tcp://10.0.0.1:8786)")
    if name != "dask" and scheduler is not None:
        raise ConfigError("--scheduler", scheduler, "used with --executor dask")
    if name == "mpi" and importlib.util.find_spec("mpi4py") is None:
        raise ConfigError("--executor", "mpi", "used with mpi4py installed (pip install 'dlbkit[mpi]')")
    if name == "dask" and importlib.util.find_spec("distributed") is None:
        raise ConfigError("--executor", "dask", "used with dask.distributed installed (pip install 'dask[distributed]')")


@contextlib.contextmanager
def open_executor(name: str, *, scheduler: str | None = None) -> Iterator[tuple[object, str]]:
    """``(executor, where)`` for ``--executor`` *name*; *where* says in words what runs the runs.

    ``local``: ``(None, "")`` (the sweep makes its own processes). ``mpi``: on rank 0 the
    executor, on the other ranks :data:`SERVED` once rank 0 has left the block (they ran its runs
    meanwhile). ``dask``: a connected client's executor, the client closed on leaving.
    """
    if name == "local":
        yield None, ""
    elif name == "mpi":
        yield from _mpi()
    elif name == "dask":
        yield from _dask(scheduler)
    else:
        check_executor(name)


def _mpi():
    from mpi4py import MPI
    from mpi4py.futures import MPICommExecutor

    comm = MPI.COMM_WORLD
    if comm.Get_size() < 2:
        raise ConfigError("--executor", "mpi", "used under mpiexec -n N with N >= 2 (rank 0 runs the sweep, the "
                          "other ranks run the runs); this process is the only rank")
    with MPICommExecutor(comm, root=0) as executor:  # the other ranks serve inside __enter__
        if executor is None:
            yield SERVED, ""
        else:
            yield executor, f"{comm.Get_size() - 1} MPI rank(s) running the runs"


def _dask(scheduler: str):
    from distributed import Client

    try:
        client = Client(scheduler, timeout=DASK_CONNECT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise ConfigError("--scheduler", scheduler, f"the address of a running Dask scheduler, reachable within "
                          f"{DASK_CONNECT_S} s ({' '.join(str(e).split()) or type(e).__name__})") from None
    with client:
        n = len(client.scheduler_info().get("workers", {}))
        yield client.get_executor(), f"Dask scheduler {scheduler} ({n} worker(s))"
