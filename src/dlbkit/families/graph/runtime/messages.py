"""The messages of the graph family (``dlbkit.graph``): between the coordinator (:mod:`.graph`'s
``_Coordinator``) and a worker (:func:`.graph.serve_graph`). Times are run times.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Run", "Result"]


class Run(NamedTuple):
    """Run task *task* on *inputs* (the values of its dependencies, in its order); *job* is its
    ``(fn, templates)`` when the worker does not hold the tasks (under MPI), else None."""

    task: int
    inputs: tuple
    job: tuple | None


class Result(NamedTuple):
    """Task *task*'s *value*, when it started and ended, and *busy*: the seconds ``fn`` took on this
    machine (before the emulated stretch)."""

    task: int
    value: Any
    t_start: float
    t_end: float
    busy: float
