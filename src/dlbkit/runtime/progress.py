"""A progress bar on long runs (tqdm) when stderr is a terminal; silent otherwise."""

from __future__ import annotations

import os
import sys

__all__ = ["Progress"]

REFRESH_S = 0.2  # redraw at most five times a second


def _size(stream) -> tuple[int, int]:
    """The terminal's (columns, rows), 80 and 24 where it reports none (a pseudo-terminal without a
    size, a file). tqdm reads the rows itself when its file is ``sys.stderr`` and hides a bar on a
    terminal of 0 rows: it is given both."""
    try:
        size = os.get_terminal_size(stream.fileno())
        return size.columns or 80, size.lines or 24
    except (AttributeError, OSError, ValueError):
        return 80, 24


class Progress:
    """``Progress(total, enabled=None, stream=None, unit="items")``: a tqdm bar on *stream* (stderr);
    *enabled* None means "if *stream* is a terminal", so a redirected or piped stderr gets nothing.
    :meth:`update` takes the count done so far; :attr:`total` may grow while it runs (a task tree's
    tasks are created as it runs)."""

    def __init__(self, total: int, enabled: bool | None = None, stream=None, unit: str = "items"):
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = (bool(isatty()) if callable(isatty) else False) if enabled is None else bool(enabled)
        self.done = 0
        self._total = total
        self._bar = None
        if self.enabled:  # tqdm is imported only for a bar that is drawn: most runs draw none
            from tqdm import tqdm

            columns, rows = _size(self.stream)
            self._bar = tqdm(total=total, file=self.stream, unit=f" {unit}", mininterval=REFRESH_S,
                             ncols=columns, nrows=rows)

    @property
    def total(self) -> int:
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        self._total = value
        if self._bar is not None:
            self._bar.total = value

    def update(self, done: int, *, force: bool = False) -> None:
        self.done = done
        if self._bar is None:
            return
        self._bar.update(done - self._bar.n)  # tqdm redraws at most every REFRESH_S
        if force:
            self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self.done - self._bar.n)
            self._bar.close()
            self._bar = None
