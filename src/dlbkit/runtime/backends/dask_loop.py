"""The Dask backend for a family whose workers keep state from one message to the next (a worker loop,
:attr:`~.base.Program.serve`: a tree's workers, an SPMD domain's, a job cluster's nodes).

Each worker's loop runs as one long-running Dask task, pinned to the Dask worker it stands for
(``workers=[address]``, ``allow_other_workers=False``), named ``dlbkit worker w`` on the dashboard; the
task leaves the worker's thread pool (``distributed.secede``), as Dask asks of a task that runs for a
long time. Dask starts, places and watches the loops; the messages do not go through the scheduler
(one round trip through it per message would cost milliseconds): the task connects back to this
process over TCP (``multiprocessing.connection``, with a key made for the run, so that nobody else's
connection is taken), and for a mesh (:attr:`~.base.Program.mesh`: the cluster's nodes) the workers
join one another pairwise the same way, each through a listener of its own, so that the loop gets the
same :class:`~.local_mesh.MeshConn` as on the local backend.

What a backend owns, here:

* **clocks**: each worker gets its arguments for its own clock's run time 0
  (:meth:`~.base.Program.worker_args_at`, from the offsets the map's Dask path measures);
* **a dead worker**: its connection ends (the process is gone) or the scheduler no longer lists it
  (read every :data:`~.dask.MEMBERSHIP_S` seconds while the coordinator waits): ``Died``, after every
  message it sent;
* **stop**: after Stop the loops end and their tasks finish; by force (a failure) the connections are
  closed, which ends a loop at its next read: Dask cannot stop a thread that is in the user's code,
  so a call in progress finishes first (the local backend kills the process instead).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from multiprocessing.connection import Client as connect_to, Listener, wait
from typing import Any, Callable

from dlbkit.errors import DlbkitError
from dlbkit.runtime.backends.base import Program, Transport
from dlbkit.runtime.backends.local_mesh import MeshConn
from dlbkit.runtime.messages import Died

__all__ = ["DaskLoopTransport"]


def _host_towards(host: str) -> str:
    """This machine's address on the route to *host* (no packet is sent: a UDP socket's connect only
    picks the route); the loopback address for a host on this machine."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect((host, 9))
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


#: connections a listener queues before it accepts them: the loops of a run connect at once, and a
#: listener's default (1) made the kernel drop the others and retry them seconds later (8 workers did
#: not start within 10 s)
BACKLOG = 128
#: what a poke sends in place of a worker number: wake a listener's accept() to give up
_POKE = -1
#: a mesh worker's word to the coordinator once its pairwise connections are made
READY = "ready"


def _poke(address: tuple, key: bytes) -> None:
    """Wake whoever waits in ``accept()`` on the listener at *address* (Listener.close does not)."""
    try:
        c = connect_to(address, authkey=key)
        c.send(_POKE)
        c.close()
    except (OSError, EOFError):  # nobody listens any more: nothing to wake
        pass


def _loop_task(serve, args: tuple, w: int, n: int, address: tuple, key: bytes, mesh: bool,
               connect_s: float = 10.0) -> None:
    """On a Dask worker: worker *w*'s loop, its connection the coordinator's at *address* (and, with
    *mesh*, one to every other worker, made within *connect_s*, then :data:`READY` said)."""
    import distributed

    try:
        distributed.secede()  # a long-running task: the worker's pool gets its thread back
    except (ValueError, KeyError, AttributeError):  # not in a worker thread (called directly)
        pass
    conn = connect_to(address, authkey=key)
    peers: dict[int, Any] = {}
    listener = None
    try:
        conn.send(w)
        if mesh:
            listener = Listener((_host_towards(address[0]), 0), authkey=key, backlog=BACKLOG)
            conn.send(listener.address)
            where = conn.recv()  # every worker's listener
            _join_mesh(conn, listener, where, peers, w, n, key, connect_s)
            listener.close()
            listener = None
            conn.send(READY)
            conn = MeshConn(conn, peers, w)
        serve(conn, w, *args)
    finally:
        # the Dask worker's process lives on: this loop's sockets close now, also when it failed
        conn.close()
        for c in peers.values():
            c.close()
        if listener is not None:
            listener.close()


def _join_mesh(conn, listener, where: list, peers: dict, w: int, n: int, key: bytes, connect_s: float) -> None:
    """Connect to the workers before *w* and accept those after it: a worker's connects finish once
    every worker before it accepts, so there is no cycle of waits. A watchdog wakes the accepts when
    the coordinator ends the run (its connection ends: another worker failed) or after *connect_s*."""
    done = threading.Event()
    gave_up: list[str] = []

    def watch() -> None:
        deadline = time.monotonic() + connect_s
        while not done.is_set():
            if wait([conn], 0.05):  # the coordinator sends nothing now: its end closed
                gave_up.append("the coordinator ended the run")
                break
            if time.monotonic() > deadline:
                gave_up.append(f"not every peer connected within {connect_s:g} s")
                break
        else:
            return
        _poke(listener.address, key)

    t = threading.Thread(target=watch, name=f"dlbkit-mesh-watch-{w}", daemon=True)
    t.start()
    try:
        for j in range(w):
            c = connect_to(tuple(where[j]), authkey=key)
            peers[j] = c
            c.send(w)
        for _ in range(n - 1 - w):
            c = listener.accept()
            j = c.recv()
            if j == _POKE:
                c.close()
                raise DlbkitError(f"worker {w}'s mesh was not made: {gave_up[0] if gave_up else 'woken'}")
            peers[j] = c
    finally:
        done.set()
        t.join()


class DaskLoopTransport(Transport):
    """The loops of *program* on the Dask workers at *addrs* (see the module)."""

    shares_items = False

    def __init__(self, client: Any, addrs: list[str], program: Program, origins: list[float], *,
                 live: Callable[[Any], list[str]], owned: bool = False, connect_s: float = 10.0,
                 membership_s: float = 0.25):
        # *live*: the scheduler's workers now (the Dask backend's reading, which avoids the Client's cache)
        self.client, self.addrs, self.owned, self._membership_s = client, addrs, owned, membership_s
        self._workers = live
        self.n_workers = n = len(addrs)
        key = os.urandom(16)
        host = _scheduler_host(client)
        self._key = key
        self._listener = Listener((_host_towards(host), 0), authkey=key, backlog=BACKLOG)
        token = uuid.uuid4().hex[:8]
        self._futures = []
        for w in range(n):
            args = tuple(program.worker_args_at("dask", origins[w]))
            self._futures.append(client.submit(
                _loop_task, program.serve, args, w, n, self._listener.address, key, program.mesh, connect_s,
                key=(f"dlbkit worker {w}", token), workers=[addrs[w]], allow_other_workers=False, pure=False))
        self._conns: list[Any] = [None] * n
        try:
            self._accept(connect_s, program.mesh)
        except BaseException:
            self.stop(kill=True)
            raise
        self._index = {c: w for w, c in enumerate(self._conns)}
        self._dead: set[int] = set()
        self._unwritable: set[int] = set()
        self._polled = time.monotonic()

    def _accept(self, connect_s: float, mesh: bool) -> None:
        """Every loop's connection (and, for a mesh, every listener's address sent to all and every
        worker's :data:`READY`), or a DlbkitError naming the loop's task that failed, or the workers
        that did not connect within *connect_s*; on failure every connection taken is closed."""
        got: list = []
        failed: list[BaseException] = []
        stop = threading.Event()

        def accept() -> None:
            try:
                while len(got) < self.n_workers and not stop.is_set():
                    c = self._listener.accept()
                    w = c.recv()
                    if w == _POKE:
                        c.close()
                        return
                    got.append((w, c))
            except BaseException as e:  # noqa: BLE001 - the listener closed, a bad handshake
                failed.append(e)

        t = threading.Thread(target=accept, name="dlbkit-dask-accept", daemon=True)
        t.start()
        deadline = time.monotonic() + connect_s
        try:
            while t.is_alive():
                t.join(0.05)
                self._check_started(deadline, connect_s, [w for w, _ in got])
            if failed:
                raise DlbkitError(f"a Dask worker's loop connected wrongly: {failed[0]!r}") from failed[0]
            for w, c in got:
                self._conns[w] = c
            if mesh:
                where = [self._recv_starting(w, deadline, connect_s) for w in range(self.n_workers)]
                for c in self._conns:
                    c.send(where)
                for w in range(self.n_workers):
                    said = self._recv_starting(w, deadline, connect_s)
                    if said != READY:  # pragma: no cover - a protocol error is a bug, never silent
                        raise DlbkitError(f"worker {w}'s loop said {said!r} while its mesh was made")
        except BaseException:
            stop.set()
            if t.is_alive():
                _poke(self._listener.address, self._key)
                t.join(1.0)
            for _, c in got:
                c.close()
            raise

    def _check_started(self, deadline: float, connect_s: float, connected: list[int]) -> None:
        """A DlbkitError if a loop's task failed, or if *deadline* passed (naming who did not connect)."""
        for w, f in enumerate(self._futures):
            if f.status == "error":
                exc = f.exception()
                raise DlbkitError(f"worker {w}'s loop failed to start on the Dask worker {self.addrs[w]}: "
                                  f"{type(exc).__name__}: {exc}") from exc
        if time.monotonic() > deadline:
            missing = [w for w in range(self.n_workers) if w not in connected] or "none: the mesh was not made"
            raise DlbkitError(f"the Dask workers' loops did not start within {connect_s:g} s (not connected: "
                              f"{missing}; this process listens at {self._listener.address}, which the Dask "
                              "workers must reach)")

    def _recv_starting(self, w: int, deadline: float, connect_s: float) -> Any:
        """Worker *w*'s next word while the run starts, waiting until *deadline*."""
        c = self._conns[w]
        while not wait([c], 0.05):
            self._check_started(deadline, connect_s, list(range(self.n_workers)))
        try:
            return c.recv()
        except (EOFError, OSError):  # its loop ended: its task's error says why, once Dask has it
            end = time.monotonic() + 2.0
            while time.monotonic() < end and self._futures[w].status not in ("error", "finished"):
                time.sleep(0.02)
            self._check_started(deadline, connect_s, list(range(self.n_workers)))
            raise DlbkitError(f"worker {w}'s loop ended while the run started, on the Dask worker "
                              f"{self.addrs[w]}") from None

    def send(self, w: int, msg: tuple) -> None:
        if w in self._dead or w in self._unwritable:
            return
        try:
            self._conns[w].send(msg)
        except (OSError, EOFError):  # gone: recv reports its death after what it sent
            self._unwritable.add(w)

    def recv(self, timeout: float | None = None) -> tuple[int, Any] | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            live = [c for w, c in enumerate(self._conns) if w not in self._dead]
            if not live:
                return None
            wait_s = self._membership_s if deadline is None else min(self._membership_s, deadline - time.monotonic())
            ready = wait(live, max(0.0, wait_s))
            for c in ready:
                w = self._index[c]
                try:
                    return w, c.recv()
                except (EOFError, OSError):
                    return self._died(w)
            if time.monotonic() - self._polled >= self._membership_s:
                self._polled = time.monotonic()
                gone = self._gone()
                if gone is not None:
                    return gone
            if deadline is not None and time.monotonic() >= deadline:
                return None

    def _gone(self) -> tuple[int, Any] | None:
        """A worker the scheduler no longer lists, or whose loop's task ended in error: dead (what its
        connection still holds is read first, by the next recv, since its socket is read until its end)."""
        try:
            live = set(self._workers(self.client))
        except (OSError, TimeoutError) as e:
            raise DlbkitError(f"the Dask scheduler cannot be reached: {e}") from e
        for w, a in enumerate(self.addrs):
            if w in self._dead:
                continue
            if a not in live:
                c = self._conns[w]
                if wait([c], 0):  # what it sent before going, first
                    continue
                return self._died(w)
            f = self._futures[w]
            if f.status == "error":
                exc = f.exception()
                raise DlbkitError(f"worker {w}'s loop failed on the Dask worker {a}, outside the user's code: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return None

    def _died(self, w: int) -> tuple[int, Any]:
        """Worker *w*'s connection ended: ``Died``, unless its loop's task failed in dlbkit's own code
        (then that error, which a death would hide): Dask reports a task's error within moments."""
        end = time.monotonic() + 0.5
        f = self._futures[w]
        while time.monotonic() < end and f.status == "pending":
            time.sleep(0.02)
        if f.status == "error":
            exc = f.exception()
            raise DlbkitError(f"worker {w}'s loop failed on the Dask worker {self.addrs[w]}, outside the user's "
                              f"code: {type(exc).__name__}: {exc}") from exc
        self._dead.add(w)
        self._conns[w].close()
        return w, Died(exitcode=None)

    def stop(self, *, kill: bool = False) -> None:
        if not kill:  # the loops were sent Stop: let them finish (their tasks end)
            try:
                import distributed

                distributed.wait([f for w, f in enumerate(self._futures) if w not in getattr(self, "_dead", ())],
                                 timeout=5.0)
            except Exception:  # noqa: BLE001 - a loop that does not end in time is ended below
                pass
        for c in getattr(self, "_conns", []):
            if c is not None:
                c.close()
        self._listener.close()
        try:
            self.client.cancel(self._futures)
        except Exception:  # noqa: BLE001 - a closed client: nothing left to cancel
            pass
        if self.owned:
            self.client.close()


def _scheduler_host(client: Any) -> str:
    """The scheduler's host (the loops connect back along the route to it); this machine for a
    scheduler in this process (``inproc://``)."""
    from distributed.comm import get_address_host

    address = client.scheduler.address
    if address.startswith("inproc://"):
        return "127.0.0.1"
    return get_address_host(address)
