"""Dask collections computed by dlbkit's mapping balancers: ``dask.compute(x, scheduler=dlbkit.dask.scheduler(...))``.

Dask lets a user name the function that runs a graph (``scheduler=`` of ``dask.compute`` and of a
collection's ``compute``, or ``dask.config.set(scheduler=...)``): a callable ``get(dsk, keys, **kwargs)``
that returns the values of *keys*, nested as *keys* is, each list a tuple (Dask's own
``dask.threaded.get`` is one).
:func:`scheduler` makes one that runs *dsk* with :func:`~dlbkit.families.graph.face.run.run_graph`: every
task a dlbkit task, placed by a mapping balancer on local processes or MPI ranks, with emulated speeds if
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
from dlbkit.families.graph.face.run import DEFAULT_GRAPH_BALANCER, GraphResult, run_graph
from dlbkit.families.run import _backend

__all__ = ["DaskScheduler", "scheduler"]


class DaskScheduler:
    """A Dask ``get`` that runs graphs under a dlbkit mapping balancer (made by :func:`scheduler`)."""

    def __init__(self, **options: Any):
        self.options = options
        #: the last graph's run (its trace, metrics and results by key), or None before the first
        self.last: GraphResult | None = None

    def __call__(self, dsk: Any, keys: Any, **kwargs: Any) -> Any:
        # Dask passes its own options too (for its schedulers: num_workers, pool, …): none is ours.
        # dask.compute hands over its optimized expression, a hand-made call a dict (as to dask.threaded.get)
        # (legacy tuples and bare literal values in it made Dask's task-spec nodes by Dask's own converter,
        # as dask.threaded.get does: a literal is then a DataNode, which dlbkit's own tuple spec refuses)
        from dask._task_spec import convert_legacy_graph

        graph = dsk if isinstance(dsk, Mapping) else dsk.__dask_graph__()
        missing = next((k for k in _flat(keys) if k not in graph), _NONE)
        if missing is not _NONE:  # before any worker starts
            raise ConfigError("keys", missing, f"one of the graph's {len(graph)} keys")
        self.last = run_graph(convert_legacy_graph(dict(graph)), **self.options)
        return _pack(keys, self.last.results)

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.options.items() if v is not None)
        return f"dlbkit.dask.scheduler({shown})"


_NONE = object()


def _flat(keys: Any):
    if isinstance(keys, list):
        for k in keys:
            yield from _flat(k)
    else:
        yield keys


def _pack(keys: Any, results: Mapping) -> Any:
    """Dask's nested lists of keys, each key replaced by its value and each list a tuple (as
    ``dask.threaded.get`` answers)."""
    if isinstance(keys, list):
        return tuple(_pack(k, results) for k in keys)
    return results[keys]


def scheduler(*, balancer: Balancer | str = DEFAULT_GRAPH_BALANCER, params: Mapping | None = None,
              backend: str = "local", workers: int | None = None, emulate: Any = None, seed: int = 0,
              progress: bool | None = None, record: str | Path | None = None) -> DaskScheduler:
    """A Dask scheduler (``scheduler=`` of ``dask.compute``) that runs each graph with :func:`dlbkit.run_graph`.

    >>> import dask, operator, dlbkit.dask
    >>> d = dask.delayed(operator.add)(dask.delayed(abs)(-2), 10)
    >>> d.compute(scheduler=dlbkit.dask.scheduler(workers=2))
    12

    The arguments are :func:`dlbkit.run_graph`'s: *balancer* a mapping balancer (``pd`` default,
    ``heft``, ``cpop``, …, every task's load 1), *backend* ``"local"`` or ``"mpi"``, *workers*,
    *emulate* (a platform's speeds), *seed*, *progress*, *record* (each compute overwrites it). Bad
    arguments are refused here, before any graph (a :class:`~dlbkit.errors.ConfigError` naming the field);
    a graph's own errors (a cycle, a missing key) when it is computed.
    """
    _backend(backend)
    from dlbkit.balancers.registry import resolve
    resolve(balancer, params, kind=("mapping", "graph-online"))  # a wrong name or parameter now, not at compute
    return DaskScheduler(balancer=balancer, params=params, backend=backend, workers=workers, emulate=emulate,
                         seed=seed, progress=progress, record=record)
