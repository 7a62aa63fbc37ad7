"""A progress bar on long runs (tqdm) when stderr is a terminal; silent otherwise, or, asked for
(``"lines"``: the command line's default off a terminal), one line every :data:`LINE_S` seconds,
which a log file keeps readable (a bar's carriage returns do not)."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

__all__ = ["Progress", "LINES", "LINE_S", "check_progress", "line_mode"]

REFRESH_S = 0.2  # redraw at most five times a second
#: seconds between two progress lines (and before the first: a run shorter than this prints none)
LINE_S = 5.0
#: the ``progress`` value that asks for lines instead of a bar
LINES = "lines"


def check_progress(v: Any) -> Any:
    """*v* if it is a ``progress`` value (None, True, False or ``"lines"``), else a ConfigError."""
    if v is None or isinstance(v, bool) or v == LINES:
        return v
    from dlbkit.errors import ConfigError
    raise ConfigError("progress", v, 'True (a bar), False, None (a bar when stderr is a terminal) or "lines" '
                      f"(a line every {LINE_S:g} s, for a log file)")


def line_mode(progress: Any, stream=None) -> Any:
    """The command line's *progress* (``--progress``/``--no-progress``/neither): neither gives a bar on a
    terminal and lines elsewhere (a log file, a pipe), so that a long command is never silent."""
    if progress is not None:
        return progress
    isatty = getattr(stream or sys.stderr, "isatty", None)
    return None if callable(isatty) and isatty() else LINES


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
    """``Progress(total, enabled=None, stream=None, unit="items", what="")``: a tqdm bar on *stream*
    (stderr); *enabled* None means "if *stream* is a terminal", so a redirected or piped stderr gets
    nothing; :data:`LINES` a line every :data:`LINE_S` s instead (``dlbkit: <what>: 40 of 100 items
    (40%), 12 s, about 18 s left``), and one at the end if any was printed. :meth:`update` takes the
    count done so far; :attr:`total` may grow while it runs (a task tree's tasks are created as it
    runs; 0: not known, no percentage). :meth:`beating` prints the lines while a call that reports
    nothing runs (a solver)."""

    def __init__(self, total: int, enabled: bool | str | None = None, stream=None, unit: str = "items",
                 what: str = ""):
        self.stream = stream or sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.lines = enabled == LINES
        self.enabled = (bool(isatty()) if callable(isatty) else False) if enabled is None else bool(enabled)
        self.done = 0
        self._total = total
        self._bar = None
        self.unit, self.what = unit, what
        self._t0 = self._last = time.monotonic()
        self._printed = False
        self._lock = threading.Lock()  # beating's thread and the caller's updates
        if self.enabled and not self.lines:  # tqdm is imported only for a bar that is drawn: most runs draw none
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
        if self.lines:
            self._line_if_due()
            return
        if self._bar is None:
            return
        self._bar.update(done - self._bar.n)  # tqdm redraws at most every REFRESH_S
        if force:
            self._bar.refresh()

    def _line_if_due(self, final: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            if not final and now - self._last < LINE_S:
                return
            if final and not self._printed:
                return  # a run too short for a line gets none at its end either
            self._last = now
            self._printed = True
            elapsed = now - self._t0
            done, total = self.done, self._total
            if total:
                said = f"{done:,} of {total:,} {self.unit} ({100 * done / total:.0f}%)"
            else:  # no count: a call that reports nothing (beating) says it still runs
                said = f"{done:,} {self.unit}" if self.unit else "running"
            if final:  # the end of the run, or where it stopped (an error, Ctrl-C)
                said = "done" if said == "running" else ("done: " if not total or done >= total else "stopped at ") + said
            elif total and 0 < done < total:
                said += f", {elapsed:.0f} s, about {elapsed * (total - done) / done:.0f} s left"
            else:
                said += f", {elapsed:.0f} s"
            if final:
                said += f" in {elapsed:.0f} s"
            head = f"dlbkit: {self.what}: " if self.what else "dlbkit: "
            print(head + said, file=self.stream, flush=True)

    def beating(self):
        """A context in which a thread prints the lines (every :data:`LINE_S` s) while the caller's one
        long call runs without reporting; nothing unless in lines mode."""
        return _Beating(self)

    def close(self) -> None:
        if self.lines:
            self._line_if_due(final=True)
            self.lines = False  # closed: a second close prints nothing
        if self._bar is not None:
            self._bar.update(self.done - self._bar.n)
            self._bar.close()
            self._bar = None


class _Beating:
    def __init__(self, progress: Progress):
        self.progress = progress
        self.stop = threading.Event()
        self.thread = None

    def __enter__(self):
        if self.progress.lines:
            self.thread = threading.Thread(target=self._beat, name="dlbkit-progress", daemon=True)
            self.thread.start()
        return self.progress

    def _beat(self):
        while not self.stop.wait(min(1.0, LINE_S)):
            self.progress._line_if_due()

    def __exit__(self, *exc):
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        return False
