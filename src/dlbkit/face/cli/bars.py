"""The progress bars of the command line on stderr: of the runs of a sweep, and of the work done inside
one run (the engines' ``progress`` callback, :mod:`dlbkit.sim.progress`), each only on a terminal
unless asked for."""

from __future__ import annotations

__all__ = ["RunBar", "SweepBar"]


def _on_terminal(stream, enabled: bool | None) -> bool:
    """*enabled*, or when it is None whether *stream* is a terminal."""
    isatty = getattr(stream, "isatty", None)
    return (bool(isatty()) if callable(isatty) else False) if enabled is None else bool(enabled)


class RunBar:
    """``bar(done, total)``: the engines' ``progress`` callback (:mod:`dlbkit.sim.progress`) drawn
    as a bar of the work done inside one run (*unit*: items, tasks, loops) on *stream*, closed when
    ``done`` reaches ``total``; *enabled* None: only when *stream* is a terminal."""

    def __init__(self, stream, enabled: bool | None = None, unit: str = "items"):
        self.stream = stream
        self.enabled = _on_terminal(stream, enabled)
        self.unit = unit
        self.bar = None
        self.drawn = False  # a bar was drawn (and is closed once the run ends)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or (self.drawn and self.bar is None):
            return
        if self.bar is None:
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, True, self.stream, unit=self.unit)
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
    (:class:`~dlbkit.runtime.progress.Progress`, tqdm), closed at the last run; *enabled* None: only
    when *stream* is a terminal, so a redirected or piped stderr gets nothing. :attr:`run` is the
    bar of the work inside a run (:class:`RunBar`), which the sweep uses when it has one run to do:
    then that bar is the only one."""

    def __init__(self, stream, enabled: bool | None = None, unit: str = "items"):
        self.stream = stream
        self.enabled = _on_terminal(stream, enabled)
        self.bar = None
        self.run = RunBar(stream, self.enabled, unit)

    def __call__(self, done: int, total: int, row=None) -> None:
        if not self.enabled:
            return
        if self.run.drawn:  # the one run had its own bar: no bar of one run besides
            self.run.close()
            return
        if self.bar is None:  # drawn from the first finished run, when the total is known
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, True, self.stream, unit="runs")
        self.bar.total = total
        self.bar.update(done)
        if done >= total:
            self.bar.close()
