"""Real runs, the face of the runtime: ``dlbkit.map``/``run_map``, ``dlbkit.tree``/``run_tree``,
``dlbkit.spmd``/``run_spmd`` and ``dlbkit.graph``/``run_graph``, with their result classes.

Each entry point checks its arguments, resolves the balancer (:func:`dlbkit.balancers.registry.resolve`),
calls its family's program (``dlbkit.families.<family>.runtime.program``) on a backend
(:mod:`dlbkit.runtime.backends`) and wraps the outcome in a result with metrics and plot methods.
"""

from __future__ import annotations

import contextlib
from numbers import Integral
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError, TaskError
from dlbkit.families.result import Result
from dlbkit.runtime.backends import BACKENDS
from dlbkit.runtime.backends.local import check_workers
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.journal import Journal, fingerprint

__all__ = ["RunResult", "check_record", "agreed", "coordinates", "BACKENDS", "open_journal", "journal_held",
           "on_every_rank"]


class RunResult(Result):
    """A real run: ``results`` in input order, its ``trace`` and ``metrics`` (as for a simulation:
    :class:`~dlbkit.families.result.Result`, whose plot methods and ``save`` it has)."""

    def __init__(self, results: Any, trace, balancer: Balancer | None):
        super().__init__(trace, balancer)
        self.results = results




# --- argument checks ----------------------------------------------------------------------------
def _progress(progress: Any) -> bool | str | None:
    from dlbkit.runtime.progress import check_progress
    return check_progress(progress)


def _seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError("seed", seed, "an integer >= 0")
    return int(seed)


def _worker_count(workers: int | None, emulation: Emulation | None, backend: str = "local") -> int | None:
    """The number of workers asked for, checked; an emulation sets it when the user does not.

    Locally the count is bounded before anything starts
    (:func:`~dlbkit.runtime.backends.local.check_workers`: ``max(256, 4 × usable CPUs)``, within the
    open-file limit); under MPI the job's ranks set it."""
    if workers is None:
        if emulation and backend == "local":
            check_workers(emulation.n_workers, "emulate (one worker per emulated core)")
        return emulation.n_workers if emulation else None
    if isinstance(workers, bool) or not isinstance(workers, Integral) or workers < 1:
        raise ConfigError("workers", workers, "an integer >= 1")
    if backend == "mpi":  # the job's worker ranks: checked here, with the other arguments (agreed)
        from dlbkit.runtime.backends.mpi import check_workers as check_mpi_workers
        check_mpi_workers(int(workers))
    workers = int(workers)  # a numpy integer too (a count computed with numpy), as for seed
    if backend == "local":
        check_workers(workers)
    if emulation and workers != emulation.n_workers:
        raise ConfigError("workers", workers, f"the emulated platform's worker count ({emulation.n_workers})")
    return workers


def _backend(backend: str, client: Any = None) -> None:
    """*backend* one of :data:`BACKENDS`, and a Dask *client* only with ``backend="dask"``."""
    if backend not in BACKENDS:
        raise ConfigError("backend", backend, "one of " + ", ".join(repr(b) for b in BACKENDS))
    if client is not None and backend != "dask":
        raise ConfigError("client", type(client).__name__, "None unless backend='dask' (a Dask Client or address)")


def agreed(backend: str, checks: Callable[[], Any]) -> Any:
    """*checks()* (an entry point's argument checks): locally as they are; under MPI on every rank,
    with the verdict agreed (:func:`~dlbkit.runtime.backends.mpi.agree`: a ConfigError on one rank
    ends the call on every rank, where it would have left the others waiting for it)."""
    if backend != "mpi":
        return checks()
    from dlbkit.runtime.backends.mpi import agree
    return agree(checks)


def coordinates(backend: str) -> bool:
    """True on the process that writes recordings: the only one locally, rank 0 under MPI."""
    if backend != "mpi":
        return True
    from dlbkit.runtime.backends.mpi import rank
    return rank() == 0


def open_journal(journal: str | Path | None, backend: str, function: str, units: Sequence | None = None, *,
                 kind: str = "items", about: Sequence | None = None) -> Journal | None:
    """The run's journal at *journal* (None: none) of *function*, opened where the run is coordinated: the
    only process locally, rank 0 under MPI (the other ranks learn what it holds from :func:`journal_held`).
    *units*: the run's units, counted and fingerprinted; or, for units not known ahead, the journal's *kind*
    and *about*, what else a rerun must match (fingerprinted). Called inside :func:`agreed`, so that a
    journal refused on rank 0 (another run's, a path that cannot be written) ends the call on every rank
    instead of leaving them waiting."""
    if journal is None or not coordinates(backend):  # the other ranks: rank 0's verdict is theirs (agreed)
        return None
    if units is not None:
        return Journal(journal, function=function, units=len(units), fingerprint=fingerprint(units))
    return Journal(journal, function=function, units=None, fingerprint=None if about is None else fingerprint(about),
                   kind=kind)


def on_every_rank(value: Any, backend: str) -> Any:
    """*value* as the coordinating process has it, on every process of the run: under MPI rank 0's, sent
    to every rank (called by every rank at the same point)."""
    if backend != "mpi":
        return value
    from dlbkit.runtime.backends.mpi import from_rank0
    return from_rank0(value)


def journal_held(kept: Journal | None, backend: str) -> dict:
    """What the run's journal holds (unit index → result) on every process of the run (each rank runs the
    same units, so each must skip the same ones); after :func:`open_journal`."""
    return on_every_rank(dict(kept.done) if kept is not None else {}, backend)


def check_record(record: str | Path | None, backend: str) -> None:
    """A ConfigError now, before any worker starts, for a *record* path that cannot be written (not
    after the whole run, which would then be lost); checked where it will be written."""
    if record is None:
        return
    if not isinstance(record, (str, Path)):
        raise ConfigError("record", record, "a file path (str or Path) or None")
    # under MPI rank 0 alone writes it and judges it (another rank's record is not used): called
    # inside agreed(), which shares rank 0's verdict with every rank (else they wait for it)
    if not coordinates(backend):
        return
    try:
        bad = Path(record).is_dir() or not Path(record).parent.is_dir()
    except (OSError, ValueError) as e:  # a name too long (ENAMETOOLONG), ...: was a traceback, and under
        # MPI rank 0's alone
        raise ConfigError("record", str(record), "a file path the system accepts "
                          f"({e.strerror or e if isinstance(e, OSError) else e})") from None
    if bad:
        raise ConfigError("record", str(record), "a file in an existing directory")


@contextlib.contextmanager
def recording_what_ran(record: str | Path | None, backend: str, seed: int | None = None):
    """Around a run: if it ends in a :class:`~dlbkit.errors.TaskError` that kept the part that ran
    (its ``trace``, :func:`~dlbkit.runtime.backends.base.keep_finished`), *record* is written with
    it (``meta["partial"]`` says how far the run got) and the error gets a note saying so; the error
    goes on."""
    try:
        yield
    except TaskError as e:
        if record is not None and e.trace is not None and coordinates(backend):
            from dlbkit.runtime.record import save_trace
            if seed is not None:
                e.trace.seed = seed
            save_trace(e.trace, record)
            part = e.trace.meta.get("partial", {})
            e.add_note(f"dlbkit: the part that ran ({part.get('done')} of {part.get('of')} {part.get('unit')}) "
                       f"is recorded in {record}")
        raise


def _flag(name: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ConfigError(name, v, "True or False")
    return v


def _callable(name: str, f: Any, optional: bool = True) -> None:
    if (f is None and not optional) or (f is not None and not callable(f)):
        raise ConfigError(name, f, "a callable" + (" or None" if optional else ""))


def _int(name: str, v: Any, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ConfigError(name, v, f"an integer ≥ {lo}")
    return int(v)



