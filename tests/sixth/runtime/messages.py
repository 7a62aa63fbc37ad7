"""The bags family's messages (the backends' Stop, Error and Died are :mod:`dlbkit.runtime.messages`')."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Done", "Take"]


class Take(NamedTuple):
    """Coordinator → worker: run the user's function on task *index*'s argument."""

    index: int
    arg: Any


class Done(NamedTuple):
    """Worker → coordinator: task *index*'s value and when it ran (run times, seconds)."""

    index: int
    value: Any
    t_start: float
    t_end: float
