"""The user's signal handlers during an MPI run: run at a safe point of dlbkit's waits, not anywhere.

A Python signal handler runs between two bytecodes of whatever the main thread is doing. One that
raises (a SIGTERM handler calling ``sys.exit``) inside the MPI backend's own code, on a worker rank
between a probe and its receive, or in the start-up barrier or the final broadcast, left the rank's
half of a conversation undone: the backend could only ``MPI_Abort`` the whole job (and a message
matched but never received would have left its sender waiting). :class:`Deferred` holds such a
signal back while a run is in progress and lets the backend run the handler where nothing is half
done (between two polls of a wait), catching what it raises; the backend then ends the run the way
it ends any failure, every rank told (:mod:`.mpi`). In the user's own code (a map's function, a
tree's ``expand`` or ``combine``, an SPMD step, a graph task: where the family's worker loop is
inside a :class:`~.base.UserCode`) the handler runs at once, as without dlbkit, and what it raises
fails that item or task (a ``signal.alarm`` timeout cuts the task). What is still held back when
the run ends is delivered then, as a signal arriving just after the call would be.

SIGINT is not held back: Ctrl-C has its own rules under MPI (:mod:`.mpi`, "Failures").
"""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable

__all__ = ["Deferred"]


class Deferred:
    """Within ``with Deferred() as d``: every signal but SIGINT whose handler is a Python function
    is held back (:attr:`pending`) unless ``d.inside`` says the user's code is running (then its
    handler runs at once); :meth:`run_pending` runs the held-back handlers (their exception
    propagates). On leaving, the handlers are restored (those nobody replaced meanwhile; all of them
    even if a signal's handler raises in between) and what is still pending is raised again.
    Only the main thread has Python signal handlers: elsewhere this does nothing."""

    def __init__(self):
        self.inside: Callable[[], bool] = lambda: False
        self.pending: list[int] = []
        self.running: int | None = None  # the signal whose handler :meth:`run_pending` runs
        self._handlers: dict[int, Callable] = {}

    def __enter__(self) -> "Deferred":
        if threading.current_thread() is not threading.main_thread():
            return self
        for s in signal.valid_signals():
            if s == signal.SIGINT:
                continue
            try:
                h = signal.getsignal(s)
            except (OSError, ValueError):  # pragma: no cover - a number the platform cannot query
                continue
            if callable(h):
                self._handlers[s] = h
                signal.signal(s, self._hold)
        return self

    def _hold(self, signum: int, frame: Any) -> None:
        if self.inside():
            self._handlers[signum](signum, frame)
        else:
            self.pending.append(signum)

    def run_pending(self) -> None:
        """Run the handlers of the signals held back, in the order they came."""
        while self.pending:
            s = self.running = self.pending.pop(0)
            self._handlers[s](s, None)

    def __exit__(self, *exc) -> None:
        try:
            _restore(list(self._handlers.items()), self._hold)
        finally:
            # taken after the restoration: a signal held back while it ran is delivered too
            pending, self.pending = self.pending, []
            _deliver(pending)  # after the run: as if it had come just after the call


def _restore(handlers: list[tuple[int, Callable]], hold: Callable) -> None:
    """Put back each of *handlers* whose signal still has *hold*. A signal arriving meanwhile whose
    handler (already put back) raises does not leave the later ones with *hold*, which would hold
    their signals back for good: the rest are put back, then its exception goes on."""
    try:
        for s, h in handlers:
            # a handler set meanwhile (the user's handler setting SIG_IGN for its signal) is kept
            if signal.getsignal(s) == hold:
                signal.signal(s, h)
    except BaseException:
        # again from the first: the exception can come at any point of the loop, and one put back
        # no longer has *hold*, so it is left as it is
        _restore(handlers, hold)
        raise


def _deliver(pending: list[int]) -> None:
    """Raise each of *pending* in turn; one whose handler raises does not drop the others (Python
    itself runs a second pending signal's handler after the first one's exception)."""
    for k, s in enumerate(pending):
        try:
            signal.raise_signal(s)
        except BaseException:
            _deliver(pending[k + 1:])  # what one of those raises comes out with this one as its context
            raise
