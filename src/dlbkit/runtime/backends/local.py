"""The local backend: worker processes on this machine (the default).

It owns start-up (one process per worker, Ctrl-C ignored there: the coordinator decides how a run
ends), transport (:class:`LocalTransport`: one duplex pipe per worker, socketpairs, so no network
listener is opened; with the ``fork`` start method the workers inherit the user's function and
items, so only indices and results cross the pipes), failure detection (a worker that dies is
reported to the coordinator as a ``Died`` message, after whatever it sent before dying), stop
and clean-up (no orphan, whatever failed: :func:`~.base.drive`). :func:`run` executes any
:class:`~.base.Family`.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from multiprocessing.connection import wait
from typing import Any, Callable

from ..messages import Died
from .base import Family, Transport, drive

__all__ = ["LocalTransport", "default_workers", "run"]


def default_workers() -> int:
    """Workers when the user gives none: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class LocalTransport(Transport):
    """*n_workers* processes running ``target(conn, w, *args)``; each has one pipe to the coordinator."""

    def __init__(self, n_workers: int, target: Callable, args: tuple = (), *, start_method: str | None = None):
        if start_method is None:
            start_method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(start_method)
        self.n_workers = n_workers
        self.shares_items = start_method == "fork"
        self._conns = []
        self._procs = []
        self._dead: set[int] = set()  # deaths already reported by recv
        self._unwritable: set[int] = set()  # workers a send failed to reach
        # workers ignore Ctrl-C: the coordinator decides how the run ends and stops them itself
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            for w in range(n_workers):
                parent, child = ctx.Pipe(duplex=True)
                p = ctx.Process(target=target, args=(child, w, *args), daemon=True, name=f"dlbkit-worker-{w}")
                p.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(p)
        finally:
            signal.signal(signal.SIGINT, old)
        self._index = {c: w for w, c in enumerate(self._conns)}
        self._sentinel = {p.sentinel: w for w, p in enumerate(self._procs)}

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs]

    def send(self, w: int, msg: tuple) -> None:
        if w in self._dead or w in self._unwritable:
            return
        try:
            self._conns[w].send(msg)
        except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
            # the worker is gone; what it sent before going is still to be read, and its death is
            # reported by recv (from its sentinel or end of file), so keep listening to it
            self._unwritable.add(w)

    def recv(self, timeout: float | None = None) -> tuple[int, Any] | None:
        live = [c for w, c in enumerate(self._conns) if w not in self._dead]
        sentinels = [p.sentinel for w, p in enumerate(self._procs) if w not in self._dead]
        if not live and not sentinels:
            return None
        ready = wait(live + sentinels, timeout)
        if not ready:
            return None
        # messages first: a worker that sent its last result and then died must not lose it
        for obj in ready:
            if obj in self._index:
                w = self._index[obj]
                try:
                    return w, obj.recv()
                except (EOFError, OSError):
                    return self._died(w)
        return self._died(self._sentinel[ready[0]])

    def _died(self, w: int) -> tuple[int, tuple]:
        self._dead.add(w)
        p = self._procs[w]
        p.join(timeout=1.0)
        return w, Died(exitcode=p.exitcode)

    def stop(self, *, kill: bool = False) -> None:
        """End every worker: politely (they were sent STOP) or by killing them; never leave orphans."""
        for p in self._procs:
            if kill and p.is_alive():
                p.kill()
        for p in self._procs:
            p.join(timeout=5.0)
            if p.is_alive():
                p.kill()
                p.join()
        for c in self._conns:
            c.close()


def run(family: Family, *, workers: int | None = None, start_method: str | None = None) -> tuple:
    """Execute *family* on *workers* local processes (default: the family's choice from the usable
    CPUs); its outcome."""
    outcome = family.empty(workers, "local")
    if outcome is not None:
        return outcome
    n = workers or family.default_workers(default_workers())
    problem = family.problem(n, "local")
    if problem is not None:
        raise problem
    family.setup(n, time.perf_counter(), family.shared())
    transport = LocalTransport(n, family.serve, family.worker_args("local"), start_method=start_method)
    return drive(family, transport, "local")
