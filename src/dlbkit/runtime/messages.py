"""Messages the backends and every family share, and the kinds of every message.

Every message is a tuple whose first element is its kind. The three every family shares are named
types: :class:`Stop` (coordinator → worker: leave the loop), :class:`Error` (worker → coordinator:
the user's code raised; built by :func:`~dlbkit.runtime.backends.base.error_message`) and
:class:`Died` (made by the local transport when a worker process ends); the backends' stop, drain
and failure handling rely on them. ``READY``, ``WORK`` and ``DONE`` are the map family's
(:mod:`dlbkit.families.divisible.runtime.program`); the tree and SPMD families define their own kinds.

The families' frequent messages (a chunk's result, a step, a load report) stay plain tuples,
unpacked once where they are read: a named type costs about 2 µs more per message to pickle and
unpickle than a tuple (measured), several per cent of a self-scheduling run with one item per chunk.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["READY", "WORK", "DONE", "ERROR", "STOP", "DIED", "Stop", "Error", "Died"]

READY = "ready"
WORK = "work"
DONE = "done"
ERROR = "error"
STOP = "stop"
DIED = "died"


class Stop(NamedTuple):
    """Coordinator → worker: leave the loop (after the run, or to stop it after a failure)."""

    kind: str = STOP


class Error(NamedTuple):
    """Worker → coordinator: the user's code raised; the coordinator raises it as a TaskError."""

    kind: str = ERROR
    #: where it failed: an item's index (map), a task's repr (tree), an iteration (SPMD)
    index: Any = None
    #: the exception, pickled; None if it could not be (its traceback text still arrives)
    exception: bytes | None = None
    #: the worker's formatted traceback
    traceback: str = ""


class Died(NamedTuple):
    """Local transport → coordinator: a worker process ended (after whatever it sent before)."""

    kind: str = DIED
    exitcode: int | None = None
