"""A progress bar on long runs when stderr is a terminal; silent otherwise."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]

REFRESH_S = 0.2  # redraw at most five times a second
WIDTH = 30


class Progress:
    """``Progress(total, enabled=None)``: *enabled* None means "if stderr is a terminal"."""

    def __init__(self, total: int, enabled: bool | None = None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = (self.stream.isatty() if hasattr(self.stream, "isatty") else False) if enabled is None \
            else bool(enabled)
        self.total = total
        self.done = 0
        self._t0 = time.monotonic()
        self._last = 0.0

    def update(self, done: int, *, force: bool = False) -> None:
        self.done = done
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < REFRESH_S:
            return
        self._last = now
        frac = done / self.total if self.total else 1.0
        bar = "#" * int(frac * WIDTH)
        self.stream.write(f"\r[{bar:<{WIDTH}}] {100 * frac:5.1f}% {done}/{self.total} items "
                          f"{now - self._t0:6.1f} s")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.update(self.done, force=True)
            self.stream.write("\n")
            self.stream.flush()
