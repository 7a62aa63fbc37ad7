"""No process a test started outlives it.

A test that starts processes (worker pools, ``mpiexec`` jobs, a client script and the nodes it
starts) and fails half-way can leave them running: they hold CPUs and ports, and the tests after it
fail or slow down for no fault of their own. :class:`Watch` records, when a test starts, which
processes exist; when it ends, a process that is new, still running and the test's (a descendant
of this process, or one that carries the test's tag in its environment: an orphan re-parented to
init, e.g. the nodes of a client the test killed) is waited for, up to :data:`GRACE_S` — a process
that is ending anyway is given the time it takes — and then killed, and the test fails naming it.

Processes started before the test (by a fixture of module or session scope) and their descendants
are not the test's; nor are the interpreter's own helpers that live until it exits
(:data:`LIFELONG`).
"""

from __future__ import annotations

import os
import time

import psutil

TAG = "DLBKIT_TEST_TAG"  # set in the environment for the length of a test; children inherit it
GRACE_S = 30.0  # a ceiling, not a wait: the check returns as soon as the processes are gone
# started once by the interpreter and kept until it exits (multiprocessing's helpers)
LIFELONG = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")


def _tagged(p: psutil.Process, tag: str) -> bool:
    try:
        return p.environ().get(TAG) == tag
    except (psutil.Error, OSError):
        return False


def _lifelong(p: psutil.Process) -> bool:
    try:
        return any(name in part for part in p.cmdline() for name in LIFELONG)
    except (psutil.Error, OSError):
        return False


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _describe(p: psutil.Process) -> str:
    try:
        return f"pid {p.pid}: {' '.join(p.cmdline())[:200] or p.name()}"
    except psutil.Error:
        return f"pid {p.pid}"


class Watch:
    """The processes of one test: :meth:`start` as it begins, :meth:`leaked` as it ends."""

    def __init__(self, tag: str):
        self.tag = tag
        self.me = os.getpid()
        self.before: set[int] = set()

    def start(self) -> None:
        self.before = set(psutil.pids())
        os.environ[TAG] = self.tag

    def _mine(self, p: psutil.Process) -> bool:
        """Started during the test by this process or its descendants (and not by a helper that
        was running before the test), or carrying the test's tag."""
        if _tagged(p, self.tag):
            return True
        try:
            parents = p.parents()
        except psutil.Error:
            return False
        for q in parents:  # nearest first
            if q.pid == self.me:
                return True
            if q.pid in self.before:
                return False
        return False

    def leaked(self) -> list[str]:
        """Wait for the test's processes to end (up to :data:`GRACE_S`), kill those that did not and
        return their descriptions (empty: nothing left behind)."""
        os.environ.pop(TAG, None)
        new = []
        for pid in set(psutil.pids()) - self.before:
            try:
                p = psutil.Process(pid)
            except psutil.Error:
                continue
            if _running(p) and self._mine(p) and not _lifelong(p):
                new.append(p)
        if not new:
            return []
        end = time.monotonic() + GRACE_S
        while time.monotonic() < end:
            new = [p for p in new if _running(p)]
            if not new:
                return []
            time.sleep(0.05)
        left = [_describe(p) for p in new]
        for p in new:
            try:
                p.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(new, timeout=5)
        return left


def killed_when(cmd: list, ready, what: str, cwd) -> None:
    """Start *cmd* in a session of its own, and once ``ready()`` kill the whole session (SIGKILL: the
    process and every process it started, at once: a crash, or ``kill -9`` of a job); return when it ended."""
    import signal
    import subprocess

    from support import HANG_S, wait_until

    p = subprocess.Popen(cmd, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL)
    try:
        wait_until(ready, what)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=HANG_S)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
