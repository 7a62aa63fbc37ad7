"""The messages of the map family (``dlbkit.map``, ``dlbkit.Loop``): between the coordinator
(:func:`.map.coordinate_step`) and a worker (:func:`.map.serve`). Times are run times.

A worker asks for work by reporting: :class:`Ready` once at start, then each :class:`Done` doubles
as its next request; the coordinator answers with :class:`Work` (or ``Stop()``).
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Ready", "Work", "Done"]


class Ready(NamedTuple):
    """A worker started and asks for its first chunk, at run time *t*."""

    t: float


class Work(NamedTuple):
    """Compute items *first* … *first* + *count* − 1; *items* travel with it when the worker does not
    hold them (under MPI, a Loop's steps), else None."""

    first: int
    count: int
    items: list | None


class Done(NamedTuple):
    """A chunk's *results*, when it started and ended, and the measured seconds of each item (this
    machine's, before the emulated stretch)."""

    first: int
    count: int
    results: list
    t_start: float
    t_end: float
    item_times: list[float]
