"""The SPMD family's real run: ``dlbkit.spmd`` and ``dlbkit.run_spmd`` on the user's step function and domain."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.run import (
    RunResult,
    _backend,
    _flag,
    _int,
    _progress,
    _worker_count,
    agreed,
    check_record,
    coordinates,
)
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.families.spmd.runtime import program as _spmd_family
from dlbkit.families.spmd.runtime.program import SpmdSpec
from dlbkit.families.spmd.model.seeding import SPMD
from dlbkit.model.seeding import streams
from dlbkit.runtime.emulation import emulation_from as _emulation

__all__ = ["DEFAULT_SPMD_BALANCER", "DEFAULT_WINDOW", "SpmdResult", "run_spmd", "spmd"]

#: Osman's DLAH (000 §7.3): overloaded nodes send rows to under-loaded neighbours
DEFAULT_SPMD_BALANCER = "dlah"


#: iterations per measurement window (000 leaves it open, §10: "measurement-window length")
DEFAULT_WINDOW = 10


class SpmdResult(RunResult):
    """A real SPMD run: ``domain`` (the final field, boundary rows included), its ``trace`` and
    ``metrics``; ``rows`` (interior rows per worker at the end) and ``transfers``.

    Trace rows (``trace.intervals()``) are **iterations**: one row per worker and iteration,
    ``round`` = the iteration, ``first``/``count`` = the worker's first interior row and rows owned,
    ``t_ask`` = when its halos were sent, ``t_start``/``t_end`` = when its step began and ended
    (the end includes the emulated stretch), in seconds since the run began. ``trace.meta`` holds
    ``windows`` (per balancing point: ``loop``, ``time``, ``points`` and ``loop_time`` per worker,
    what the balancer saw), ``transfers`` (``(iteration, src, dst, asked, moved)``), ``final_rows``,
    ``iterations``, ``halo``, ``window``. ``results`` is the same object as ``domain``.
    """

    def __init__(self, domain: np.ndarray, trace, balancer: Balancer | None):
        super().__init__(domain, trace, balancer)
        self.domain = domain

    @property
    def rows(self) -> list[int]:
        return list(self.trace.meta.get("final_rows", []))

    @property
    def transfers(self) -> list[tuple]:
        return list(self.trace.meta.get("transfers", []))

    def plot_loads(self, axes=None):
        """Loop time (s) and rows per worker against the iteration, on two axes: :meth:`plot_loop_times`
        and :meth:`plot_points` (matplotlib); returns the axes."""
        import matplotlib.pyplot as plt

        if axes is None:
            _, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
        self.plot_loop_times(ax=axes[0])
        self.plot_points(ax=axes[1])
        return axes


def _check(step, domain, iterations, halo, window, bandwidth, seed) -> np.ndarray:
    if not callable(step):
        raise ConfigError("step", step, "a callable: step(block_with_halos) -> new block")
    _int("iterations", iterations, 0)
    _int("halo", halo, 1)
    _int("window", window, 1)
    _int("seed", seed, 0)
    if bandwidth is not None and (isinstance(bandwidth, bool) or not isinstance(bandwidth, (int, float))
                                  or not bandwidth > 0):
        raise ConfigError("bandwidth", bandwidth, "a number of rows per second > 0, or None (measured)")
    try:
        arr = np.array(domain)  # a private copy: the caller's array is never written
    except Exception as e:
        raise ConfigError("domain", type(domain).__name__, "a numpy array (or array-like)") from e
    if arr.ndim < 1 or arr.dtype.kind not in "biufc":  # strings, bytes, records, dates: not a stencil's numbers
        raise ConfigError("domain", f"array of shape {arr.shape} and dtype {arr.dtype}",
                          "a numeric array with at least one axis (rows along the first)")
    return arr


def _repartition_balancer(balancer, params: Mapping | None) -> RepartitionBalancer | None:
    return resolve(balancer, params, kind="repartition", allow_none=True)


# --- spmd -----------------------------------------------------------------------------------------
def run_spmd(step: Callable[[np.ndarray], Any], domain: Any, *, iterations: int,
             balancer: Balancer | str | None = DEFAULT_SPMD_BALANCER, params: Mapping | None = None,
             backend: str = "local", workers: int | None = None, window: int = DEFAULT_WINDOW,
             emulate: Any = None, progress: bool | None = None, seed: int = 0, halo: int = 1,
             bandwidth: float | None = None, record: str | Path | None = None,
             start_method: str | None = None, record_decisions: bool = False, client: Any = None,
             checkpoint: int | None = None) -> SpmdResult:
    """Iterate *step* over a 1-D decomposed *domain* on worker processes (or MPI ranks); a :class:`SpmdResult`.

    **Semantics.** *domain* is an array of R rows (its first axis; any trailing shape and numeric
    dtype). Its first and last *halo* rows are **fixed boundary rows** (boundary conditions: read,
    never written); the R − 2·halo interior rows are split into contiguous blocks, one per worker
    in worker order (evenly at the start). Iteration *it* gives each worker
    ``ext = concatenate([rows above, block, rows below])``: the *halo* rows next to its block as
    they were after iteration it − 1 (a neighbour's edge rows, or the fixed boundary rows at the
    global edges), and replaces its block with ``step(ext)``, which must return an array of the
    block's shape (it is assigned into the block, casting to the domain's dtype). The result is
    therefore the serial run, row for row::

        u = domain.copy()
        for it in range(iterations):
            u[halo:-halo] = step(u)

    exactly (bit for bit) whenever each output row of *step* depends only on the input rows within
    *halo* of it and is computed the same way whatever the number of rows (elementwise numpy
    stencils are; a step that sums along the first axis or uses its length is not local). *step*
    does not learn which rows it holds.

    **Balancing.** Each worker times its steps (busy time only: never time spent waiting for a
    neighbour; *emulate* stretches it as on a slower or loaded node, see
    :class:`~dlbkit.runtime.emulation.Emulation`). Every *window* iterations all workers pause and
    the coordinator fills an :class:`~dlbkit.families.spmd.model.view.SpmdView` for the window: ``points`` = rows
    owned, ``loop_time`` = mean busy seconds per iteration, ``speed`` = rows / loop_time,
    ``free_memory`` = 1e18 (unknown: never swapping), ``swap_cost`` = 0, ``bandwidth`` = *bandwidth*
    if given, else rows/s measured on the last transfer a worker took part in (1e18 before any),
    ``layout`` "line", ``boundary`` (K) 0. The balancer (a repartition balancer: name or object,
    *params* its parameters; default ``"dlah"``; None: no balancing) returns transfers; moving k
    rows from worker i to neighbour j ships i's k rows on j's side to j (blocks stay contiguous; a
    sender keeps at least *halo* rows), and measurement starts afresh.

    **Communication.** Local backend: worker processes on this machine, each with one pipe to the
    coordinator (no listener is opened); halos and moved rows travel through the coordinator, which
    sends a worker its next iteration as soon as it and both neighbours have finished the previous
    one. ``backend="mpi"``: run the script with ``mpiexec -n N python script.py``; every rank calls
    ``spmd`` with the same arguments, rank 0 coordinates (only its *domain* is read), ranks 1..N−1
    are the workers, and every rank returns the final domain. ``backend="dask"``: each worker's loop
    is one long-running task on a worker of *client* (a ``distributed.Client``, a scheduler's
    address, or None for the Client running here; :mod:`dlbkit.runtime.backends.dask_loop`).

    *workers*: processes (default: the usable CPUs, at most one per *halo* interior rows; the
    emulated platform's workers; or every Dask worker). *record* saves the trace (``RunResult.save``). *seed* seeds the
    balancer's random stream and a platform emulation.

    **A worker that dies** (local and Dask backends) is survived: every *checkpoint* iterations (default
    None: once every :data:`~dlbkit.families.spmd.runtime.program.CHECKPOINT_S` = 30 s of run) each worker
    sends its whole block with its step's reply, and the coordinator keeps the field after the last
    iteration whose blocks are all in (one copy of the domain, in its memory; the domain as given first). On a
    death every survivor starts again from it, the dead worker's rows joined to a neighbour's block, and
    the run carries on with one worker fewer: the result is still the serial one, row for row
    (``trace.meta["dead"]`` and ``["recovery"]`` say who died and from which iteration the run went on;
    the trace keeps each iteration once; replay refuses such a recording). *checkpoint* 0 sends no block:
    a death then ends the run with a :class:`~dlbkit.errors.DlbkitError`. Under MPI a dead rank ends the job.

    Raise :class:`~dlbkit.errors.ConfigError` naming the field for bad input (a domain with fewer
    than 2·halo + workers·halo rows, halo < 1, iterations < 0, window < 1, a balancer that is not a
    repartition balancer, …). Raise :class:`~dlbkit.errors.TaskError` if *step* raises (or returns a
    wrongly shaped block): its ``worker`` and ``iteration`` (also its ``index``) say where, its
    cause carries the worker's traceback; every worker is stopped first and none is left behind.
    Under MPI the worker ranks then exit with a one-line message and ``mpiexec`` exits non-zero.
    """
    _backend(backend, client)

    def checks():
        check_record(record, backend)
        arr = _check(step, domain, iterations, halo, window, bandwidth, seed)
        if checkpoint is not None:
            _int("checkpoint", checkpoint, 0)
        _progress(progress)
        b = _repartition_balancer(balancer, params)
        emulation = _emulation(emulate, seed, None, layout=SPMD)
        _flag("record_decisions", record_decisions)  # here, agreed: after it, raised on one rank alone (a hang)
        return arr, b, emulation, _worker_count(workers, emulation, backend)

    asked = workers
    arr, b, emulation, workers = agreed(backend, checks)
    rng = streams(seed, SPMD).rng("balancer")  # the SPMD simulator's: the same draws for the same seed
    spec = SpmdSpec(step=step, halo=halo, emulation=emulation)
    out, trace = _spmd_family.run_spmd(spec, b, arr, iterations=iterations, window=window, bandwidth=bandwidth,
                                       backend=backend, workers=asked if backend == "mpi" else workers,
                                       progress=progress, rng=rng, start_method=start_method,
                                       record_decisions=_flag("record_decisions", record_decisions), client=client,
                                       checkpoint=checkpoint)
    trace.seed = seed
    result = SpmdResult(out, trace, b)
    if record is not None and coordinates(backend):
        result.save(record)
    return result


def spmd(step: Callable[[np.ndarray], Any], domain: Any, *, iterations: int,
         balancer: Balancer | str | None = DEFAULT_SPMD_BALANCER, params: Mapping | None = None,
         backend: str = "local", workers: int | None = None, window: int = DEFAULT_WINDOW, emulate: Any = None,
         progress: bool | None = None, seed: int = 0, halo: int = 1, bandwidth: float | None = None,
         record: str | Path | None = None, client: Any = None, checkpoint: int | None = None) -> np.ndarray:
    """The final domain after *iterations* steps, computed in parallel and balanced; see :func:`run_spmd`.

    >>> import numpy as np
    >>> from dlbkit import spmd
    >>> def smooth(u):                       # each row becomes the mean of itself and its neighbours
    ...     return (u[:-2] + u[1:-1] + u[2:]) / 3
    >>> u = np.zeros(8); u[-1] = 3.0           # rows 0 and 7 are fixed boundary rows
    >>> spmd(smooth, u, iterations=2, workers=2, balancer=None).round(3).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.333, 1.333, 3.0]
    """
    return run_spmd(step, domain, iterations=iterations, balancer=balancer, params=params, backend=backend,
                    workers=workers, window=window, emulate=emulate, progress=progress, seed=seed, halo=halo,
                    bandwidth=bandwidth, record=record, client=client, checkpoint=checkpoint).domain
