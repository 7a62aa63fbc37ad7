"""The local backend's mesh: every pair of workers joined by a pipe of its own (socketpairs, no listener).

For a family whose workers talk to one another (:attr:`~.base.Program.mesh`: the cluster's nodes send
their load messages and forward jobs straight to the node that runs them). :func:`mesh_pipes` makes one
duplex pipe per pair before the workers start; worker w keeps its n - 1 ends and wraps them, with its
pipe to the coordinator, in a :class:`MeshConn`.

Why a sender thread: two workers that write to each other while neither reads block for ever once
both pipes' buffers are full (a forwarded job's payload can be large). ``send_to`` only queues; one
thread per worker writes, in the order posted, so the worker's own loop always gets back to reading.
The order is kept across destinations: a message posted after another leaves after it (the cluster
relies on it: a forwarded job is written to its node before the notice of it goes to the coordinator).
That is this backend's guarantee; under MPI (:class:`~.mpi_transport.RankConn`) the order holds per destination
only, which is enough there since a rank's death ends the job.

A peer that dies: its pipe ends (end of file on reading, an error on writing) and is dropped
without a word: the coordinator sees every death and tells the family (the cluster's ``X``).
"""

from __future__ import annotations

import queue
import select
import threading
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from dlbkit.runtime.backends.base import COORDINATOR

__all__ = ["MeshConn", "mesh_pipes", "ends_of", "close_others", "DRAIN_WAIT_S"]

#: seconds a worker waits for a dead peer's pipe to end (see :meth:`MeshConn.drain`)
DRAIN_WAIT_S = 5.0


def mesh_pipes(ctx, n: int) -> dict[tuple[int, int], tuple[Connection, Connection]]:
    """One duplex pipe per pair of *n* workers: ``{(i, j): (end of i, end of j)}`` for i < j (none
    left open if making them fails: out of descriptors)."""
    pipes: dict[tuple[int, int], tuple[Connection, Connection]] = {}
    try:
        for i in range(n):
            for j in range(i + 1, n):
                pipes[i, j] = ctx.Pipe(duplex=True)
    except BaseException:
        for a, b in pipes.values():
            a.close()
            b.close()
        raise
    return pipes


def ends_of(pipes: dict[tuple[int, int], tuple[Connection, Connection]], w: int) -> dict[int, Connection]:
    """Worker *w*'s ends of *pipes*: ``{peer: connection}``."""
    out = {}
    for (i, j), (a, b) in pipes.items():
        if i == w:
            out[j] = a
        elif j == w:
            out[i] = b
    return out


class MeshConn:
    """A worker's connections: ``send`` (to the coordinator, now), ``send_to`` (queued, ordered),
    ``poll``/``recv`` (the next message from the coordinator or any live peer), ``drain`` (what a
    dead peer sent).

    Which thread touches what: the worker's loop (one thread) reads, and only reads, the peers'
    pipes; the sender thread alone writes them and closes them, and only the pipes the reader hands
    it once it has read their end of file (closing a connection under a write in progress would
    break the write midway; closing one the reader waits on would break the wait), so a write that
    fails only stops the writes; the coordinator's pipe is written under a lock by the
    sender and the worker's other threads (a job's result goes out at once).
    """

    def __init__(self, conn: Connection, peers: dict[int, Connection], w: int):
        self._conn = conn
        self._peers = dict(peers)
        self._of = {c: j for j, c in self._peers.items()}  # the peers' pipes still read (the reader's)
        self._lock = threading.Lock()  # the coordinator's pipe: the sender thread and the worker's threads write it
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        self._inbox: list[tuple[int, Any]] = []  # (sender: a peer, or COORDINATOR; message), read, not yet taken
        self._gone: BaseException | None = None  # the coordinator's pipe ended
        self.dropped = 0  # droppable messages not sent because their peer was not reading (sender thread)
        self._sender = threading.Thread(target=self._send_loop, name=f"dlbkit-worker-{w}-sender", daemon=True)
        self._sender.start()

    # --- sending ----------------------------------------------------------------------------------------
    def send(self, msg: Any) -> None:
        """To the coordinator, at once (it always reads, so this cannot block for ever)."""
        with self._lock:
            self._conn.send(msg)

    def send_to(self, dst: int, msg: Any, *, droppable: bool = False) -> None:
        """To worker *dst* (or :data:`~.base.COORDINATOR`), after everything posted before. A
        *droppable* message (a load message: the next one replaces it) is dropped rather than
        written when *dst*'s pipe is backed up, so that a peer that has stopped reading (stopped,
        starved) cannot hold up everything this worker sends after it."""
        self._out.put((dst, msg, droppable))

    def _send_loop(self) -> None:
        broken: set[int] = set()  # peers whose pipe failed a write: written no more
        while True:
            item = self._out.get()
            if item is None:
                return
            dst, msg, droppable = item
            if dst == COORDINATOR:
                try:
                    self.send(msg)
                except (OSError, EOFError, ValueError):
                    return  # the coordinator is gone: the worker's loop finds out at its next read
                continue
            if msg is _CLOSE:  # the reader found this peer's pipe ended: close it here, between writes
                broken.add(dst)
                self._peers[dst].close()
                continue
            c = self._peers.get(dst)
            if c is None or dst in broken:
                continue
            try:
                if droppable and not _writable(c):
                    self.dropped += 1
                    continue
                c.send(msg)
            except (OSError, EOFError, ValueError):  # that peer died (its death reaches us from the coordinator)
                # not closed here: the reader may be waiting on this pipe at this moment; it will
                # read its end of file and hand it back (_CLOSE) to be closed
                broken.add(dst)

    # --- receiving -------------------------------------------------------------------------------------
    def _ended(self, c: Connection) -> None:
        """The peer at the other end of *c* is gone: stop reading it; the sender closes it."""
        j = self._of.pop(c, None)
        if j is not None:
            self._out.put((j, _CLOSE, False))

    def poll(self, timeout: float | None = None) -> bool:
        """True when a message is waiting (within *timeout* seconds; None: until one is)."""
        if self._inbox or self._gone is not None:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait([self._conn, *self._of], left)
            if not ready:
                return False
            for c in ready:
                try:
                    self._inbox.append((self._of.get(c, COORDINATOR), c.recv()))
                except (EOFError, OSError) as e:
                    if c is self._conn:
                        self._gone = e
                    else:  # a peer that died: its pipe is done
                        self._ended(c)
            if self._inbox or self._gone is not None:
                return True
            # only ends of file were ready: wait again for the rest of the time

    def recv(self) -> Any:
        """The next message (waiting for one); EOFError when the coordinator's pipe has ended."""
        while not self._inbox:
            if self._gone is not None:
                raise EOFError("the coordinator is gone") from self._gone
            self.poll(None)
        return self._inbox.pop(0)[1]

    def drain(self, peer: int, timeout: float = DRAIN_WAIT_S) -> list[Any]:
        """Every message from *peer*, which has died, not yet taken: those already read, then the rest
        of its pipe up to its end of file (a dead process's pipe holds what it wrote, then ends; only
        this worker holds the other end, :class:`~.local.LocalTransport`). *timeout*: at most this
        long waiting for the end of file (it does not come if another process still holds the dead
        worker's end: a process its job forked and left running)."""
        out = [m for src, m in self._inbox if src == peer]
        self._inbox = [(src, m) for src, m in self._inbox if src != peer]
        c = self._peers.get(peer)
        if c is None or c not in self._of:
            return out
        deadline = time.monotonic() + timeout
        while wait([c], max(0.0, deadline - time.monotonic())):
            try:
                out.append(c.recv())
            except (EOFError, OSError):
                break
        self._ended(c)
        return out

    def close(self) -> None:
        """Write what is queued (within a second), then close the coordinator's pipe (the sender
        thread, a daemon, ends with the process; the peers' pipes with it)."""
        self._out.put(None)
        self._sender.join(timeout=1.0)
        with self._lock:
            self._conn.close()


_CLOSE = object()  # the reader's word to the sender thread: close this peer's pipe


def _writable(c: Connection) -> bool:
    """Whether *c* can take a small message now: the kernel calls a socket writable while at most a
    quarter of its send buffer is in use, so a load message of a few hundred bytes does not block."""
    return bool(select.select([], [c.fileno()], [], 0)[1])


def close_others(others: list[Connection]) -> None:
    """In a forked worker: close the mesh ends it inherited that are not its own, so that a dead
    worker's pipes end (end of file, a broken pipe) for the one peer at their other end."""
    for c in others:
        c.close()
