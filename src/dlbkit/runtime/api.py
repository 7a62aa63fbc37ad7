"""``dlbkit.map`` and ``dlbkit.run_map``: the chunking balancers on the user's own function."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from ..balancers.base import Balancer, ChunkingBalancer
from ..balancers.registry import make
from ..errors import ConfigError
from ..model import metrics as _metrics
from ..model.platform import Platform
from .emulation import Emulation
from .progress import Progress

__all__ = ["map", "run_map", "RunResult", "BACKENDS", "DEFAULT_BALANCER"]

BACKENDS = ("local", "mpi")
#: adaptive weighted factoring, weights updated after every chunk: few messages (batches halve the
#: remaining work) and it learns unequal or changing speeds (BENCHMARKS.md, runtime section)
DEFAULT_BALANCER = "awf-c"


class RunResult:
    """A real run: ``results`` in input order, its ``trace`` and ``metrics`` (as for a simulation)."""

    def __init__(self, results: list, trace, balancer: Balancer):
        self.results = results
        self.trace = trace
        self.balancer = balancer
        self.metrics = _metrics.compute(trace)

    @property
    def makespan(self) -> float:
        return self.metrics["makespan"]

    def plot_gantt(self, ax=None, **kw):
        from ..plots import gantt
        return gantt(self.trace, ax=ax, **kw)

    def plot_work(self, ax=None, **kw):
        from ..plots import work_over_time
        return work_over_time(self.trace, ax=ax, **kw)

    def save(self, path: str | Path) -> Path:
        """Record the run (for ``dlbkit replay``)."""
        from .record import save_trace
        return save_trace(self.trace, path)


def _balancer(balancer: Balancer | str, params: Mapping | None) -> ChunkingBalancer:
    if isinstance(balancer, str):
        b = make(balancer, dict(params or {}))
    else:
        b = balancer.clone().set_params(**dict(params or {})) if params else balancer
        b.validate()
    if not isinstance(b, ChunkingBalancer):
        raise ConfigError("balancer", getattr(b, "name", b), "a chunking balancer (dlbkit balancers --kind chunking)")
    return b


def _emulation(emulate, seed: int, master) -> Emulation | None:
    if emulate is None:
        return None
    if isinstance(emulate, Emulation):
        return emulate
    if isinstance(emulate, (Platform, str, Path)):
        return Emulation.from_platform(emulate, seed=seed, master=master)
    if isinstance(emulate, Iterable):
        return Emulation.from_speeds(list(emulate))
    raise ConfigError("emulate", emulate, "a Platform, a platform TOML path or a list of speed factors")


def _worker_count(workers: int | None, emulation: Emulation | None) -> int | None:
    """The number of workers asked for, checked; an emulation sets it when the user does not."""
    if workers is None:
        return emulation.n_workers if emulation else None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ConfigError("workers", workers, "a positive integer")
    if emulation and workers != emulation.n_workers:
        raise ConfigError("workers", workers, f"the emulated platform's worker count ({emulation.n_workers})")
    return workers


def _mpi_rank(workers: int | None) -> int:
    """This process's MPI rank; *workers*, if the user gave it, must be the job's worker ranks."""
    from .mpi import _mpi
    world = _mpi().COMM_WORLD
    if workers is not None and workers != world.Get_size() - 1:
        raise ConfigError("workers", workers, f"the MPI job's worker ranks ({world.Get_size() - 1}: all ranks "
                          "but rank 0), or None")
    return world.Get_rank()


def run_map(fn: Callable[[Any], Any], items: Iterable, *, balancer: Balancer | str = DEFAULT_BALANCER,
            params: Mapping | None = None, backend: str = "local", workers: int | None = None,
            progress: bool | None = None, emulate: Any = None, master: str | int | None = None,
            seed: int = 0, record: str | Path | None = None, start_method: str | None = None) -> RunResult:
    """Apply *fn* to every item on worker processes (or MPI ranks), balanced by a chunking balancer.

    Returns a :class:`RunResult`. *emulate* slows workers down as the nodes of a platform would
    (a Platform, a platform TOML path, or a list of speed factors); it also sets the number of
    workers. *record* saves the run's trace for ``dlbkit replay``. See :func:`map`.
    """
    if backend not in BACKENDS:
        raise ConfigError("backend", backend, "one of " + ", ".join(repr(b) for b in BACKENDS))
    b = _balancer(balancer, params)
    if not isinstance(items, Sequence):
        items = list(items)
    emulation = _emulation(emulate, seed, master)
    asked = workers
    workers = _worker_count(workers, emulation)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2])
    rank = 0
    if backend == "mpi":
        from .mpi import run_mpi_map
        rank = _mpi_rank(asked)
        out = run_mpi_map(fn, items, b, emulation=emulation, progress=progress, rng=rng)
    else:
        out = _run_local(fn, items, b, workers, emulation, progress, rng, start_method)
    results, trace = out
    if trace is not None:
        trace.seed = seed  # the balancer's generator came from it: a replay can repeat its draws
    result = RunResult(results, trace, b)
    if record is not None and rank == 0:  # every MPI rank holds the trace: one writes it
        result.save(record)
    return result


def _run_local(fn, items, balancer, workers, emulation, progress, rng, start_method):
    from .coordinator import coordinate
    from .transport import LocalTransport, default_workers
    from .worker import serve

    if not items:
        return [], _empty_trace(balancer, workers or 1)
    n = workers or default_workers()
    origin = time.perf_counter()
    transport = LocalTransport(n, serve, (fn, items, emulation, origin), start_method=start_method)
    return coordinate(transport, balancer, items, origin=origin, emulation=emulation,
                      progress=Progress(len(items), progress), rng=rng, backend="local")


def _empty_trace(balancer, n):
    from ..model.availability import Constant
    from ..model.trace import Trace
    return Trace(n, list(range(n)), balancer=balancer.name, source="local", speeds=[1.0] * n,
                 availability=[Constant().realise()] * n)


def map(fn: Callable[[Any], Any], items: Iterable, *, balancer: Balancer | str = DEFAULT_BALANCER,
        params: Mapping | None = None, backend: str = "local", workers: int | None = None,
        progress: bool | None = None, emulate: Any = None, master: str | int | None = None,
        seed: int = 0, record: str | Path | None = None) -> list:
    """``[fn(x) for x in items]``, computed in parallel and balanced; results in input order.

    *balancer*: any chunking balancer (name or object; default adaptive weighted factoring).
    *backend*: ``"local"`` (worker processes on this machine, the default) or ``"mpi"`` (run the
    script with ``mpiexec -n N python script.py``: every rank calls ``map`` with the same *fn* and
    *items*; rank 0 coordinates; every rank gets the results). *workers*: processes (default: the
    usable CPUs). *progress*: a progress bar (default: when stderr is a terminal).

    Raise :class:`~dlbkit.errors.TaskError` (index of the failing item, the worker's traceback) if
    *fn* raises; every worker is stopped first.

    >>> import dlbkit
    >>> dlbkit.map(abs, [-3, 1, -2], workers=2)
    [3, 1, 2]
    """
    return run_map(fn, items, balancer=balancer, params=params, backend=backend, workers=workers,
                   progress=progress, emulate=emulate, master=master, seed=seed, record=record).results
