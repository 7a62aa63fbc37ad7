"""Dask collections computed by dlbkit's mapping balancers: ``dask.compute(x, scheduler=dlbkit.dask.scheduler(...))``.

Dask lets a user name the function that runs a graph (``scheduler=`` of ``dask.compute`` and of a
collection's ``compute``, or ``dask.config.set(scheduler=...)``): a callable ``get(dsk, keys, **kwargs)``
that returns the values of *keys*, nested as *keys* is, each list a tuple (Dask's own
``dask.threaded.get`` is one).
:func:`scheduler` makes one that runs *dsk* with :func:`~dlbkit.families.graph.face.run.run_graph`: every
task a dlbkit task, placed by a mapping balancer on local processes, MPI ranks or a Dask cluster's
workers (``backend="dask"``), with emulated speeds if
asked. Dask then finalizes the values as with any scheduler, so ``x.compute(scheduler=s)`` equals
``x.compute()``.

The balancer's costs: Dask gives no estimate of a task's time, so every task's load is 1 (the unit a
static mapper plans with); ``pd`` (the default) needs none, placing each task when its inputs exist
from what the run measures. The last run's :class:`~dlbkit.families.graph.face.run.GraphResult` (its trace,
metrics, measured ``item_cost``) is the scheduler's :attr:`DaskScheduler.last`, and ``record=`` saves it
for :func:`dlbkit.replay`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.graph.face.run import DEFAULT_GRAPH_BALANCER, GraphResult, pack, run_graph
from dlbkit.families.run import _backend

__all__ = ["DaskScheduler", "scheduler"]


class DaskScheduler:
    """A Dask ``get`` that runs graphs under a dlbkit mapping balancer (made by :func:`scheduler`)."""

    def __init__(self, **options: Any):
        self.options = options
        #: the last graph's run (its trace, metrics and results by key), or None before the first
        self.last: GraphResult | None = None

    def __call__(self, dsk: Any, keys: Any, **kwargs: Any) -> Any:
        # *kwargs*: Dask's options for its own schedulers (num_workers, pool, …), none of them ours
        from dask._task_spec import convert_legacy_graph
        from dask.core import flatten

        # dask.compute hands over its optimized expression; a hand-made call, a dict
        graph = dsk if isinstance(dsk, Mapping) else dsk.__dask_graph__()
        missing = [k for k in (flatten(keys) if isinstance(keys, list) else [keys]) if k not in graph]
        if missing:  # before any worker starts
            raise ConfigError("keys", missing[0], f"one of the graph's {len(graph)} keys")
        # Dask's converter makes legacy tuples and bare literals task-spec nodes, as dask.threaded.get does
        # (a literal a DataNode: dlbkit's own tuple spec refuses one)
        self.last = run_graph(convert_legacy_graph(dict(graph)), **self.options)
        return pack(keys, self.last.results, tuple)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.options.items() if v is not None)
        return f"dlbkit.dask.scheduler({shown})"


def scheduler(*, balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
              backend: str = "local", workers: int | None = None, emulate: Any = None, seed: int = 0,
              progress: bool | None = None, record: str | Path | None = None, client: Any = None) -> DaskScheduler:
    """A Dask scheduler (``scheduler=`` of ``dask.compute``) that runs each graph with :func:`dlbkit.run_graph`.

    >>> import dask, operator, dlbkit.dask
    >>> d = dask.delayed(operator.add)(dask.delayed(abs)(-2), 10)
    >>> d.compute(scheduler=dlbkit.dask.scheduler(workers=2))
    12

    The arguments are :func:`dlbkit.run_graph`'s: *balancer* a mapping balancer (``pd`` default,
    ``heft``, ``cpop``, …, every task's load 1), *backend* ``"local"``, ``"mpi"`` or ``"dask"`` (each task
    a Dask task on the worker the balancer chose, of *client*: a Client, an address or None for the
    running Client), *workers*,
    *emulate* (a platform's speeds), *seed*, *progress*, *record* (each compute overwrites it). Bad
    arguments are refused here, before any graph (a :class:`~dlbkit.errors.ConfigError` naming the field);
    a graph's own errors (a cycle, a missing key) when it is computed.
    """
    _backend(backend, client)
    from dlbkit.balancers.registry import resolve
    resolve(balancer, params, kind=("mapping", "graph-online"))  # a wrong name or parameter now, not at compute
    return DaskScheduler(balancer=balancer, params=params, backend=backend, workers=workers, emulate=emulate,
                         seed=seed, progress=progress, record=record, client=client)
