"""The progress bars of the command line on stderr: of the runs of a sweep, and of the work done inside
one run (the engines' ``progress`` callback, :mod:`dlbkit.sim.progress`): a bar on a terminal (or
asked for), else a line every few seconds, so that a long sweep in a log file is not silent."""

from __future__ import annotations

__all__ = ["RunBar", "SweepBar"]


def _mode(stream, enabled: bool | str | None) -> bool | str:
    """How to show progress on *stream*: True (a bar), ``"lines"`` or False; *enabled* None: a bar on a
    terminal, lines elsewhere (:func:`~dlbkit.runtime.progress.line_mode`)."""
    from dlbkit.runtime.progress import line_mode
    mode = line_mode(enabled, stream)
    return True if mode is None else mode


class RunBar:
    """``bar(done, total)``: the engines' ``progress`` callback (:mod:`dlbkit.sim.progress`) drawn
    as a bar of the work done inside one run (*unit*: items, tasks, loops) on *stream*, closed when
    ``done`` reaches ``total``; *enabled* None: a bar on a terminal, else a line every few seconds."""

    def __init__(self, stream, enabled: bool | str | None = None, unit: str = "items"):
        self.stream = stream
        self.mode = _mode(stream, enabled)
        self.enabled = bool(self.mode)
        self.unit = unit
        self.bar = None
        self.drawn = False  # a bar was drawn (and is closed once the run ends)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or (self.drawn and self.bar is None):
            return
        if self.bar is None:
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, self.mode, self.stream, unit=self.unit, what="the run")
            self.drawn = True
        if total != self.bar.total:  # a tree's tasks are created as it runs
            self.bar.total = total
        self.bar.update(done)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class SweepBar:
    """``bar(done, total, row)`` after each run of a sweep: a progress bar of the runs on *stream*
    (:class:`~dlbkit.runtime.progress.Progress`, tqdm), closed at the last run; *enabled* None: a bar
    on a terminal, else a line every few seconds (a log file). :attr:`run` is the
    bar of the work inside a run (:class:`RunBar`), which the sweep uses when it has one run to do:
    then that bar is the only one."""

    def __init__(self, stream, enabled: bool | str | None = None, unit: str = "items"):
        self.stream = stream
        self.mode = _mode(stream, enabled)
        self.enabled = bool(self.mode)
        self.bar = None
        self.run = RunBar(stream, self.mode, unit)

    def __call__(self, done: int, total: int, row=None) -> None:
        if not self.enabled:
            return
        if self.run.drawn:  # the one run had its own bar: no bar of one run besides
            self.run.close()
            return
        if self.bar is None:  # drawn from the first finished run, when the total is known
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, self.mode, self.stream, unit="runs", what="the sweep")
        self.bar.total = total
        self.bar.update(done)
        if done >= total:
            self.bar.close()
