"""Progress inside one simulation: the engines' throttle on a ``progress(done, total)`` callback.

Every engine takes ``progress=None`` (a function of the work done so far and the total, both
counts: items of a loop, tasks of a tree, loops of an SPMD run, tasks of a graph) and reports only
on the completion branch of its loop, never per event. With None an engine pays one test per
completion at most (the divisible and tree loops fold it into a test they already make, so they pay
nothing). With a callback, the engine reports ``(0, total)`` at the start, then asks a :class:`Ticker` every *stride*-th completion; the
ticker reads the clock, calls the callback at most every :data:`INTERVAL_S` seconds, and returns
the next stride, doubled while checks come more often than every :data:`CHECK_S` / 4 seconds and
halved while they come less often than every :data:`CHECK_S`, so the clock is read a few dozen
times a second whatever a completion costs. The engine calls :meth:`Ticker.finish` once at the end
(``done == total``), whatever the throttle. The counts passed are non-decreasing; a tree's total
(tasks created so far) grows as tasks are created.

This layer draws nothing: the CLI turns the callback into a bar (``dlbkit.face.cli.bars``, over
:class:`dlbkit.runtime.progress.Progress`).
"""

from __future__ import annotations

from time import monotonic
from typing import Callable

from dlbkit.errors import ConfigError

__all__ = ["Ticker", "ticker", "INTERVAL_S", "CHECK_S", "MAX_STRIDE"]

INTERVAL_S = 0.2  #: at most one callback per this many seconds (the bar's refresh)
CHECK_S = 0.05  #: the clock is read about every CHECK_S / 4 to CHECK_S seconds
MAX_STRIDE = 1 << 20  #: completions between two clock readings, at most (a power of two)


class Ticker:
    """Throttled calls of *callback* ``(done, total)``; ``ticker(done, total)`` returns the number of
    completions until the engine should call it again (a power of two, >= 1)."""

    __slots__ = ("callback", "stride", "last_check", "last_call", "done")

    def __init__(self, callback: Callable[[int, int], None]):
        self.callback = callback
        self.stride = 1
        self.last_check = monotonic()
        self.last_call = -float("inf")  # the first check reports (the bar appears at once)
        self.done = 0

    def __call__(self, done: int, total: int) -> int:
        now = monotonic()
        gap = now - self.last_check
        self.last_check = now
        if gap < CHECK_S / 4:
            if self.stride < MAX_STRIDE:
                self.stride *= 2
        elif gap > CHECK_S and self.stride > 1:
            self.stride //= 2
        if self.stride > MAX_STRIDE:  # MAX_STRIDE lowered meanwhile (tests set it to 1)
            self.stride = MAX_STRIDE
        if now - self.last_call >= INTERVAL_S and done >= self.done:
            self.last_call = now
            self.done = done
            self.callback(done, total)
        return self.stride

    def finish(self, total: int) -> None:
        """The run ended: report *total* of *total*."""
        self.done = total
        self.callback(total, total)


def ticker(progress) -> Ticker | None:
    """A :class:`Ticker` on *progress*, or None for None; a ConfigError for anything else that is
    not callable."""
    if progress is None:
        return None
    if not callable(progress):
        raise ConfigError("progress", progress, "None or a function progress(done, total)")
    return Ticker(progress)
