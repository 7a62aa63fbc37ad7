"""The local backend: worker processes on this machine (the default).

It owns start-up (one process per worker, Ctrl-C ignored there: the coordinator decides how a run
ends), transport (:class:`LocalTransport`: one duplex pipe per worker, socketpairs, so no network
listener is opened; with the ``fork`` start method the workers inherit the user's function and
items, so only indices and results cross the pipes), failure detection (a worker that dies is
reported to the coordinator as a ``Died`` message, after whatever it sent before dying), stop
and clean-up (no orphan, whatever failed: :func:`~.base.drive`). :func:`run` executes any
:class:`~.base.Program`.

No worker outlives its coordinator, however the coordinator ends (written here once, for every
program):

* it fails or is interrupted (Ctrl-C): :func:`~.base.drive` kills every worker before the error
  leaves :func:`run`;
* it gets SIGTERM (a batch scheduler's time limit, ``kill``): while :func:`run` is in progress in
  the main thread, and SIGTERM has its default action, SIGTERM takes the same path (the workers are
  killed), then the default action runs: the process ends by SIGTERM, as it would have;
* it is killed outright (SIGKILL, a crash): each worker is tied to it at start
  (:func:`_tie_to_coordinator`): on Linux the kernel sends the worker SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``), and on every system a watchdog thread in the worker checks every
  :data:`WATCHDOG_S` seconds that the coordinator is still its parent, and ends the worker if not.

Bounds (:func:`check_workers`, before any worker starts): at most :func:`max_workers` processes,
``max(256, 4 × usable CPUs)``, and no more than the descriptors this process may open allow
(:data:`FDS_PER_WORKER` each). More workers than usable CPUs is allowed (emulating a larger
platform) with a warning: the workers then share cores, so measured times, makespan and efficiency
describe this machine's time-sharing rather than the run.
"""

from __future__ import annotations

import errno
import math
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import warnings
from multiprocessing.connection import wait
from numbers import Integral
from typing import Any, Callable

from dlbkit.errors import ConfigError, DlbkitWarning, caller_level
from dlbkit.model import check
from dlbkit.runtime.messages import Died
from dlbkit.runtime.backends.base import Program, Transport, drive, short_repr, unpicklable
from dlbkit.runtime.backends.local_mesh import MeshConn, close_others, ends_of, mesh_pipes

__all__ = ["LocalTransport", "default_workers", "max_workers", "check_workers", "run", "open_pool", "prepare", "WATCHDOG_S",
           "MAX_WORKERS_FLOOR", "FDS_PER_WORKER"]

#: seconds between a worker's checks that its coordinator is alive (where no death signal exists,
#: the longest a worker outlives a coordinator killed outright)
WATCHDOG_S = 0.25
#: worker processes always allowed (more where there are many CPUs: :func:`max_workers`)
MAX_WORKERS_FLOOR = 256
#: file descriptors the coordinator holds per worker (its end of the pipe, the process sentinel),
#: and those kept free for everything else
FDS_PER_WORKER = 2
_SPARE_FDS = 64
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def default_workers() -> int:
    """Workers when the user gives none: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def max_workers(mesh: bool = False) -> tuple[int, str]:
    """The most worker processes a local run may start, and why: ``max(256, 4 × usable CPUs)``,
    lowered to what the open-file limit (``ulimit -n``) allows (with *mesh*, the coordinator also
    holds two descriptors per pair of workers while they start: :mod:`.local_mesh`)."""
    limit = max(MAX_WORKERS_FLOOR, 4 * default_workers())
    why = f"at most {limit} on this machine (max({MAX_WORKERS_FLOOR}, 4 × {default_workers()} usable CPUs))"
    try:
        import resource
    except ImportError:  # not POSIX: no descriptor limit to read
        return limit, why
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft != resource.RLIM_INFINITY and soft > 0:
        by_fds = max(1, (soft - _SPARE_FDS) // FDS_PER_WORKER)
        per = f"{FDS_PER_WORKER} descriptors per worker"
        if mesh:
            # the largest n with F·n + n(n - 1) ≤ soft - spare (two ends per pair of workers), i.e.
            # n² + (F - 1)·n ≤ room ⟺ 2n + b ≤ √(b² + 4·room) with b = F - 1: exact in integers by isqrt
            room, b = soft - _SPARE_FDS, FDS_PER_WORKER - 1
            by_fds = max(1, (math.isqrt(b * b + 4 * room) - b) // 2)
            per += " and 2 per pair of workers (each pair of nodes has its own pipe)"
        if by_fds < limit:
            limit = by_fds
            why = f"at most {limit} here: the open-file limit ({soft}, `ulimit -n`) allows {per}"
    return limit, why


def check_workers(n: Any, field: str = "workers", *, mesh: bool = False,
                  more: str = "use backend='mpi' on several machines, or simulate") -> int:
    """*n* checked as a local worker count before anything starts: a positive integer within
    :func:`max_workers`; raise :class:`ConfigError` naming *field* otherwise (*more*: what to do for
    more workers than that)."""
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:  # a numpy integer is one too
        raise ConfigError(field, n, "an integer >= 1")
    n = int(n)
    limit, why = max_workers(mesh)
    if n > limit:
        raise ConfigError(field, n, f"a number of local worker processes {why}; for more, {more}")
    return n


def oversubscription_warning(n: int) -> str | None:
    """The warning for *n* workers on this machine's usable CPUs, or None if they fit."""
    cpus = default_workers()
    if n <= cpus:
        return None
    return (f"{n} workers on {cpus} usable CPU{'s' if cpus != 1 else ''}: the workers share cores, so measured "
            f"times, makespan and efficiency describe this machine's time-sharing rather than the workers (use at most "
            f"{cpus} workers, or simulate the platform)")


# --- workers tied to their coordinator ------------------------------------------------------------
def _worker_main(target: Callable, coordinator: int, conn, w: int, *args) -> None:
    """A worker process: tie it to its coordinator (pid *coordinator*), then run *target*."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # already so when started from the main thread
    _tie_to_coordinator(coordinator)
    target(conn, w, *args)


def _mesh_worker_main(target: Callable, coordinator: int, conn, peers: dict, others: list, w: int, *args) -> None:
    """A worker of a mesh: as :func:`_worker_main`, its connections a :class:`~.local_mesh.MeshConn`
    (*others*: the mesh ends a forked worker inherited that are not its own, closed first)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _tie_to_coordinator(coordinator)
    close_others(others)
    mesh = MeshConn(conn, peers, w)
    try:
        target(mesh, w, *args)
    finally:
        mesh.close()


def _tie_to_coordinator(coordinator: int) -> None:
    """End this process when the coordinator (process *coordinator*) ends, however it ends.

    When the coordinator is the parent (fork, spawn): on Linux ask the kernel for SIGKILL when the
    parent dies (``prctl(PR_SET_PDEATHSIG)``), then check that it has not died already (the race
    between the fork and the prctl); everywhere, a daemon thread checks every :data:`WATCHDOG_S`
    seconds that the parent is unchanged (an orphan is re-parented). Under ``forkserver`` the parent
    is the server, so the thread checks that the coordinator's process exists instead. (Linux sends
    the death signal when the *thread* that started the worker ends; that thread runs the whole
    run and stops the workers before it returns, so this never ends a worker early.)
    """
    if os.getppid() == coordinator:
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            except (OSError, AttributeError):  # no libc symbol: the watchdog alone
                pass
        if os.getppid() != coordinator:  # it died before the prctl took effect
            os._exit(1)

        def gone() -> bool:
            return os.getppid() != coordinator
    else:
        def gone() -> bool:
            try:
                os.kill(coordinator, 0)
            except ProcessLookupError:
                return True
            except PermissionError:  # pragma: no cover - a pid reused by another user's process
                return True
            return False

    def watch() -> None:
        while not gone():
            time.sleep(WATCHDOG_S)
        os._exit(1)

    threading.Thread(target=watch, name="dlbkit-coordinator-watchdog", daemon=True).start()


class LocalTransport(Transport):
    """*n_workers* processes running ``target(conn, w, *args)``; each has one pipe to the coordinator
    and, with *mesh*, one to every other worker (:mod:`.local_mesh`)."""

    def __init__(self, n_workers: int, target: Callable, args: tuple = (), *, start_method: str | None = None,
                 mesh: bool = False):
        if start_method is None:
            start_method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        ctx = mp.get_context(start_method)
        self.n_workers = n_workers
        self.shares_items = start_method == "fork"
        self._conns = []
        self._procs = []
        self._dead: set[int] = set()  # deaths already reported by recv
        self._unwritable: set[int] = set()  # workers a send failed to reach
        # workers ignore Ctrl-C: the coordinator decides how the run ends and stops them itself.
        # Only the main thread may set a handler; a coordinator started from another thread (the
        # cluster's client thread) has its workers ignore SIGINT themselves, first thing.
        in_main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if in_main else None
        pipes: dict = {}
        try:
            pipes.update(mesh_pipes(ctx, n_workers) if mesh else {})
            for w in range(n_workers):
                parent, child = ctx.Pipe(duplex=True)
                if mesh:
                    own = ends_of(pipes, w)
                    # a forked worker inherits every pipe: it closes the ends that are not its own
                    # (spawn passes only what is named, so nothing to close there)
                    mine = {id(c) for c in own.values()}
                    others = ([c for pair in pipes.values() for c in pair if id(c) not in mine]
                              if start_method == "fork" else [])
                    main, head = _mesh_worker_main, (target, os.getpid(), child, own, others, w)
                else:
                    main, head = _worker_main, (target, os.getpid(), child, w)
                p = ctx.Process(target=main, args=(*head, *args), daemon=True, name=f"dlbkit-worker-{w}")
                self._conns.append(parent)
                p.start()
                child.close()
                self._procs.append(p)
        except BaseException as e:  # a failed start (no memory, no descriptors, SIGTERM): none left behind
            self._started_only()
            if isinstance(e, OSError) and e.errno == errno.EMFILE:
                raise ConfigError("workers", n_workers, "fewer local workers: this process ran out of file "
                                  "descriptors starting them (raise `ulimit -n`, or close files it holds)") from e
            raise
        finally:
            for a, b in pipes.values():  # the workers have their ends; the coordinator keeps none
                a.close()
                b.close()
            if in_main:
                signal.signal(signal.SIGINT, old)
        self._index = {c: w for w, c in enumerate(self._conns)}
        self._sentinel = {p.sentinel: w for w, p in enumerate(self._procs)}

    def _started_only(self) -> None:
        for p in self._procs:
            p.kill()
        for p in self._procs:
            p.join(timeout=5.0)
        for c in self._conns:
            c.close()

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
        """End every worker: politely (they were sent Stop) or by killing them; never leave orphans."""
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


class _Terminated(BaseException):
    """SIGTERM arrived while a run was in progress: the run stops as on Ctrl-C."""


def _on_sigterm(signum, frame) -> None:
    raise _Terminated


def prepare(program: Program, workers: int | None, start_method: str | None) -> tuple[int, str]:
    """Everything before the workers start, for a run or a persistent pool: the worker count
    checked, the family's problem raised, the user's objects checked for pickling, the
    oversubscription warning, ``program.setup`` (run time 0 is now); (workers, start method)."""
    if start_method is not None:  # multiprocessing's own error would be a ValueError with no field
        check.choice(start_method, "start_method", mp.get_all_start_methods())
    if mp.current_process().daemon:  # multiprocessing would only assert, from deep inside Process.start
        raise ConfigError("backend", "local", "used in a process that may start processes: this one is a daemonic "
                          "worker (of a dlbkit run, or of a multiprocessing pool), which cannot have children; "
                          "compute serially inside the worker's function, or call dlbkit from the main process")
    n = check_workers(workers or program.default_workers(default_workers()), mesh=program.mesh)
    problem = program.problem(n, "local")
    if problem is not None:
        raise problem
    if start_method is None:
        start_method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    if start_method != "fork":  # the workers receive the user's objects pickled: say which cannot be
        for name, obj in program.sent_to_workers():
            reason = unpicklable(obj)
            if reason is not None:
                raise ConfigError(name, short_repr(obj, 80), f"picklable with start method {start_method!r}, which "
                                  f"sends it to every worker (a module-level function or object, not a lambda or "
                                  f"a local one; or use start method 'fork'): {reason}")
    message = oversubscription_warning(n) if program.warns_oversubscription else None
    if message is not None:
        warnings.warn(message, DlbkitWarning, stacklevel=caller_level())
    program.setup(n, time.perf_counter(), program.shared())
    return n, start_method


def open_pool(program: Program, *, workers: int | None = None, start_method: str | None = None) -> LocalTransport:
    """Start *program*'s workers for a persistent pool (``dlbkit.Loop``) and return the transport; the
    caller drives each step and ends the pool with ``transport.stop()`` (``kill=True`` after a failure).

    The workers are tied to this process as in :func:`run` (killed with it however it ends: the death
    signal and the watchdog); a pool lives across the caller's code, so SIGTERM keeps whatever action
    the caller set (by default it ends this process, and the death signal then ends the workers)."""
    n, start_method = prepare(program, workers, start_method)
    return LocalTransport(n, program.serve, program.worker_args("local"), start_method=start_method, mesh=program.mesh)


def run(program: Program, *, workers: int | None = None, start_method: str | None = None) -> tuple:
    """Execute *program* on *workers* local processes (default: the family's choice from the usable
    CPUs); its outcome."""
    outcome = program.empty(workers, "local")
    if outcome is not None:
        return outcome
    n, start_method = prepare(program, workers, start_method)
    # SIGTERM (a scheduler's time limit) ends the run as Ctrl-C does, workers first; then its default
    # action ends this process. Only from the main thread, and only if nobody else handles SIGTERM.
    catch = (threading.current_thread() is threading.main_thread()
             and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    if catch:
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        transport = LocalTransport(n, program.serve, program.worker_args("local"), start_method=start_method,
                                   mesh=program.mesh)
        return drive(program, transport, "local")
    except _Terminated:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        catch = False
        signal.raise_signal(signal.SIGTERM)  # the workers are gone: end as SIGTERM would have
        raise  # pragma: no cover - not reached
    finally:
        # put the default back unless the user's code (a balancer, a callback) set a handler meanwhile
        if catch and signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
