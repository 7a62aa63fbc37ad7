"""The local backend's mesh: every pair of workers joined by a pipe of its own (socketpairs, no listener).

For a family whose workers talk to one another (:attr:`~.base.Family.mesh`: the cluster's nodes send
their load messages and forward jobs straight to the node that runs them). :func:`mesh_pipes` makes one
duplex pipe per pair before the workers start; worker w keeps its n - 1 ends and wraps them, with its
pipe to the coordinator, in a :class:`MeshConn`.

Why a sender thread: two workers that write to each other while neither reads block for ever once
both pipes' buffers are full (a forwarded job's payload can be large). ``send_to`` only queues; one
thread per worker writes, in the order posted, so the worker's own loop always gets back to reading.
The order is kept across destinations: a message posted after another leaves after it (the cluster
relies on it: a forwarded job is written to its node before the notice of it goes to the coordinator).

A peer that dies: its pipe ends (end of file on reading, an error on writing) and is dropped
without a word: the coordinator sees every death and tells the family (the cluster's ``X``).
"""

from __future__ import annotations

import queue
import threading
import time
from multiprocessing.connection import Connection, wait
from typing import Any

from .base import COORDINATOR

__all__ = ["MeshConn", "mesh_pipes", "ends_of", "close_others", "mesh_descriptors"]


def mesh_pipes(ctx, n: int) -> dict[tuple[int, int], tuple[Connection, Connection]]:
    """One duplex pipe per pair of *n* workers: ``{(i, j): (end of i, end of j)}`` for i < j."""
    return {(i, j): ctx.Pipe(duplex=True) for i in range(n) for j in range(i + 1, n)}


def ends_of(pipes: dict[tuple[int, int], tuple[Connection, Connection]], w: int) -> dict[int, Connection]:
    """Worker *w*'s ends of *pipes*: ``{peer: connection}``."""
    out = {}
    for (i, j), (a, b) in pipes.items():
        if i == w:
            out[j] = a
        elif j == w:
            out[i] = b
    return out


def mesh_descriptors(n: int) -> int:
    """File descriptors the coordinator holds while *n* workers of a mesh start (two per pair)."""
    return n * (n - 1)


class MeshConn:
    """A worker's connections: ``send`` (to the coordinator, now), ``send_to`` (queued, ordered),
    ``poll``/``recv`` (the next message from the coordinator or any live peer), ``drain`` (what a
    dead peer sent)."""

    def __init__(self, conn: Connection, peers: dict[int, Connection], w: int):
        self._conn = conn
        self._peers = dict(peers)
        self._of = {c: j for j, c in self._peers.items()}
        self._lock = threading.Lock()  # the coordinator's pipe: the sender thread and the worker's threads write it
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        self._inbox: list[tuple[int, Any]] = []  # (sender: a peer, or COORDINATOR; message), read, not yet taken
        self._gone: BaseException | None = None  # the coordinator's pipe ended
        self._sender = threading.Thread(target=self._send_loop, name=f"dlbkit-worker-{w}-sender", daemon=True)
        self._sender.start()

    # --- sending ----------------------------------------------------------------------------------------
    def send(self, msg: Any) -> None:
        """To the coordinator, at once (it always reads, so this cannot block for ever)."""
        with self._lock:
            self._conn.send(msg)

    def send_to(self, dst: int, msg: Any) -> None:
        """To worker *dst* (or :data:`~.base.COORDINATOR`), after everything posted before."""
        self._out.put((dst, msg))

    def _send_loop(self) -> None:
        while True:
            item = self._out.get()
            if item is None:
                return
            dst, msg = item
            try:
                if dst == COORDINATOR:
                    self.send(msg)
                else:
                    c = self._peers.get(dst)
                    if c is not None and not c.closed:
                        c.send(msg)
            except (OSError, EOFError):  # that peer died (its death reaches us from the coordinator)
                if dst == COORDINATOR:
                    return  # the coordinator is gone: the worker's loop finds out at its next read

    # --- receiving -------------------------------------------------------------------------------------
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
                        self._of.pop(c, None)
                        c.close()
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

    def drain(self, peer: int, timeout: float = 5.0) -> list[Any]:
        """Every message from *peer*, which has died, not yet taken: those already read, then the rest
        of its pipe up to its end of file (a dead process's pipe holds what it wrote, then ends; only
        this worker holds the other end, :class:`~.local.LocalTransport`). *timeout*: at most this
        long waiting for the end of file."""
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
        self._of.pop(c, None)
        c.close()
        return out

    def close(self) -> None:
        """Write what is queued (within a second), then close every pipe."""
        self._out.put(None)
        self._sender.join(timeout=1.0)
        for c in [self._conn, *self._of]:
            c.close()


def close_others(others: list[Connection]) -> None:
    """In a forked worker: close the mesh ends it inherited that are not its own, so that a dead
    worker's pipes end (end of file, a broken pipe) for the one peer at their other end."""
    for c in others:
        c.close()
