"""Signals placed where a test means them to arrive, and gates instead of naps.

A timer (``threading.Timer(0.3, os.kill, ...)``) guesses where the code will be when it fires; on
a loaded machine a slow start-up outlasts it and the signal lands somewhere else (often where the
test still passes, checking less than it claims). :func:`signal_when` is a profile hook that raises
the signal as one named function calls another, and leaves a marker the test asserts, so the
signal is where the test says or the test fails saying it never got there.

Imported by tests and, from the scripts they run in subprocesses or under ``mpiexec``, with the
``tests`` folder on ``sys.path`` (:data:`support.TESTS`).
"""

from __future__ import annotations

import os
import signal
import sys
import time

GATE_TIMEOUT_S = 60.0  # liveness only: a gate not opened by then is a failure, not a wait for ever


def signal_when(caller: str, callee: str, signum: int | None = signal.SIGTERM, *,
                marker: str | os.PathLike | None = None,
                nth: int = 1):
    """A profile hook (for :func:`sys.setprofile`) that raises *signum* in this process once, as a
    function named *caller* calls one named *callee* for the *nth* time: a Python function (a "call"
    event) or a C one (a "c_call" event: an mpi4py method, ``time.sleep``). Before raising, it removes
    itself, creates the file *marker* (if given) and sets its ``fired`` attribute: the test asserts
    one of them, so a signal that never came where intended fails the test. It is inert in a child
    forked while it is set (a profile function survives ``fork``: the child is not the one meant).
    With *signum* None it only marks the point (a gate the test waits on) and raises nothing."""
    pid = os.getpid()
    seen = [0]

    def hook(frame, event, arg):
        if event == "call":
            name, at = frame.f_code.co_name, frame.f_back
        elif event == "c_call":
            name, at = getattr(arg, "__name__", None), frame
        else:
            return
        if name != callee or at is None or at.f_code.co_name != caller or os.getpid() != pid:
            return
        seen[0] += 1
        if seen[0] < nth:
            return
        sys.setprofile(None)
        hook.fired = True
        if marker is not None:
            open(marker, "w").close()
        if signum is not None:
            signal.raise_signal(signum)

    hook.fired = False
    return hook


def wait_for(path: str | os.PathLike, what: str, timeout: float = GATE_TIMEOUT_S) -> None:
    """Wait until the file *path* exists (a gate another process opens); past *timeout* seconds
    fail, saying *what* never happened, on stderr too (a rank of an MPI job may have no other voice)."""
    end = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > end:
            message = f"gate {os.fspath(path)!r} not opened within {timeout} s: {what}"
            print(message, file=sys.stderr, flush=True)
            raise AssertionError(message)
        time.sleep(0.005)
