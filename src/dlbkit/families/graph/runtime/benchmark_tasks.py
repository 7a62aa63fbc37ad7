"""Benchmark tasks: a recorded workflow made runnable, each task a sleep or a busy loop of its recorded
runtime × a scale (``dlbkit.run_workflow``; as WfCommons' WfBench turns a WfFormat instance into
runnable code, with time standing in for WfBench's CPU and file work).

:func:`benchmark_tasks` turns a :class:`~dlbkit.families.graph.model.workload.TaskGraph` (a WfFormat
workflow read by ``TaskGraph.read``, or any graph with one load per task) into the networkx form
``dlbkit.run_graph`` accepts (:mod:`.tasks`): one node per task, in the graph's order and with its id,
carrying

* ``fn``: :class:`Sleep` or :class:`Spin` of ``load × scale`` seconds, module-level classes so that a
  task pickles to a worker process or an MPI rank; called with its parents' results, which it ignores,
  it returns None;
* ``load``: ``load × scale``, the seconds the task is meant to take at speed 1, so a static mapper
  (``heft``) plans with the same estimates the workers then sleep or spin, in the run's own unit
  (``heft-replan`` compares the two).

**Work.** ``"sleep"`` leaves the core free (the run measures placement and dispatch, not the machine's
cores: more workers than cores still overlap); ``"spin"`` keeps a core busy, as computation does, so
workers compete for the cores as real tasks would. Both last a wall-clock time, not an amount of work:
a spin that loses its core to another process still ends on time (a fixed amount of work, WfBench's
``cpu-work``, would end later); emulation (``emulate=``) stretches either as it stretches any task.
Each loops until ``time.perf_counter()`` has advanced by its seconds, so a task's measured cost (the
runtime's reading of the same clock around the call) is never below them.

**Data is not emulated**: the edges keep their dependencies and lose their volumes (``data`` 0). A real
graph run passes each result through the coordinator, and both the plan's costs and the replay
(:mod:`dlbkit.families.graph.face.replay`) read an edge's data as seconds at one unit per second: a
WfFormat file's bytes would be charged as that many seconds, and a result of that many bytes would time
the coordinator's pipes, not the workflow's file system. The workflow's own volumes stay in the graph
read from the file (``TaskGraph.edges``) for :func:`dlbkit.simulate` on a platform with a bandwidth.
"""

from __future__ import annotations

import math
import time
from numbers import Real
from typing import TYPE_CHECKING

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.workload import TaskGraph

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["WORK", "Sleep", "Spin", "benchmark_tasks", "check_scale", "check_work"]

#: the kinds of work a benchmark task does for its seconds: leave the core free, or keep it busy
WORK = ("sleep", "spin")


class _Timed:
    """A benchmark task of *seconds* of ``time.perf_counter()`` (its inputs ignored, None returned): what
    :class:`Sleep` and :class:`Spin` share, all but how they spend the time."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __getstate__(self):
        return self.seconds

    def __setstate__(self, seconds):
        self.seconds = seconds

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.seconds!r})"


class Sleep(_Timed):
    """A task that sleeps *seconds* of ``time.perf_counter()`` and returns None (its inputs ignored)."""

    __slots__ = ()

    def __call__(self, *inputs) -> None:
        end = time.perf_counter() + self.seconds
        # time.sleep may end a little early on some clocks: sleep again for what is left
        while (left := end - time.perf_counter()) > 0:
            time.sleep(left)


class Spin(_Timed):
    """A task that keeps its core busy for *seconds* of ``time.perf_counter()`` and returns None."""

    __slots__ = ()

    def __call__(self, *inputs) -> None:
        end = time.perf_counter() + self.seconds
        clock = time.perf_counter
        while clock() < end:
            pass


_KIND = {"sleep": Sleep, "spin": Spin}


def check_work(work) -> str:
    """*work* if it is one of :data:`WORK`; a ConfigError naming ``work`` otherwise."""
    if not isinstance(work, str) or work not in _KIND:
        raise ConfigError("work", work, "'sleep' (the core left free) or 'spin' (a busy loop)")
    return work


def check_scale(scale) -> float:
    """*scale* as a float if it is a finite number > 0; a ConfigError naming ``scale`` otherwise."""
    ok = isinstance(scale, Real) and not isinstance(scale, bool)
    try:
        ok = ok and math.isfinite(scale) and scale > 0
    except OverflowError:  # an int too large for a float
        ok = False
    if not ok:
        raise ConfigError("scale", scale, "a finite number > 0 (seconds of run per recorded second of a task)")
    return float(scale)


def benchmark_tasks(graph: TaskGraph, *, work: str = "sleep", scale: float = 1.0) -> nx.DiGraph:
    """*graph*'s tasks as ``dlbkit.run_graph`` runs them: a networkx DiGraph, one node per task (its id,
    in the graph's order) with ``fn`` = :class:`Sleep` or :class:`Spin` (*work*) of ``load × scale``
    seconds and ``load`` the same seconds, one edge per dependency with ``data`` 0 (module docstring).

    Raise :class:`~dlbkit.errors.ConfigError` for an unknown *work*, a *scale* that is not a finite
    number > 0, or a graph with a cost table instead of loads (a task's time on each node: the
    runtime's workers are not those nodes)."""
    import networkx as nx

    if not isinstance(graph, TaskGraph):
        raise ConfigError("graph", type(graph).__name__, "a TaskGraph (TaskGraph.read of a WfFormat workflow)")
    task = _KIND[check_work(work)]
    s = check_scale(scale)
    if graph.loads is None:
        raise ConfigError(f"graph {graph.name!r}", f"a cost table on {graph.width} nodes",
                          "a graph with one load per task (its recorded seconds)")
    g = nx.DiGraph(name=graph.name)
    for t, load in zip(graph.ids, graph.loads):
        seconds = load * s
        g.add_node(t, fn=task(seconds), load=seconds)
    g.add_edges_from(((src, dst, {"data": 0.0}) for src, dst, _ in graph.edges))
    return g
