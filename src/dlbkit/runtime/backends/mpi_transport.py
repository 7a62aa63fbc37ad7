"""The MPI backend's transport: rank 0's :class:`MPITransport` and a worker rank's :class:`RankConn`,
with the polled waits every MPI wait here uses (:mod:`.mpi` starts and ends the runs on them).

Messages. Rank 0 talks to worker rank r (worker index r - 1) with the family's messages on a
private duplicate of ``COMM_WORLD`` (the user's own MPI traffic cannot collide with it). The worker
loop is the same one the local backend runs, talking through a :class:`RankConn`. After leaving
it a worker rank waits for its Stop if it has not had it (it stopped after an Error), then says
Bye; rank 0 drains messages until every worker has said Bye, so no message is ever left unmatched
and the final broadcast cannot deadlock against a worker still sending a result.

Waiting without burning a core. A blocking MPICH receive (and ``Barrier``/``Bcast``) spins: a rank
waiting 2 s in ``comm.recv`` used 1.99 s of CPU. With more ranks than cores (4 ranks on a 2-core
machine) a spinning coordinator, or a spinning idle worker, takes CPU from the workers still
computing: measured, a busy-polling rank 0 used a whole core and made a 600-item ``ss`` run 30-60%
slower. So every wait here polls: ``comm.improbe`` (0.4 us) or ``Request.Test``, then
``time.sleep`` for :data:`POLL_FRACTION` (10%) of the time waited since the last message, within
[:data:`POLL_MIN_S`, :data:`POLL_MAX_S`] = [50 us, 5 ms]. A message is noticed within about 10% of
the wait before it (frequent requests within ~0.1 ms), and an idle rank costs about 1% of a core.
With this, ``ss`` and ``fac2`` on 1 ms items take as long as with the local backend.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from typing import NoReturn

from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.runtime.messages import Error, Stop
from dlbkit.runtime import status
from dlbkit.runtime.backends.base import COORDINATOR, Transport
from dlbkit.runtime.backends.deferred import Deferred
from dlbkit.runtime.backends.mpi_messages import Bye, Signalled

__all__ = ["GRACE_S", "POLL_FRACTION", "POLL_MAX_S", "POLL_MIN_S", "MPITransport", "RankConn", "abort_job", "load_mpi",
           "quiet_barrier"]

TAG = 7  # every message of a run between rank 0 and a worker, on the run's own duplicate of COMM_WORLD
PEER_TAG = 8  # a message between two worker ranks (a family with a mesh: Program.mesh)
PRUNE_SENDS = 16  # pending send requests kept before the completed ones are dropped from the list
POLL_MIN_S = 50e-6  # first sleep of a wait (Linux timer slack makes anything shorter pointless)
POLL_MAX_S = 5e-3  # longest sleep between two polls: the most a message waits to be noticed
POLL_FRACTION = 0.1  # sleep this fraction of the time waited so far
#: seconds rank 0 waits for the workers to stop after a failure before it aborts the job
GRACE_S = float(os.environ.get("DLBKIT_MPI_GRACE_S", "10"))
ABORT_FLUSH_S = 0.2  # before MPI_Abort: time for mpiexec to forward what we printed

def load_mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:  # pragma: no cover - exercised only without mpi4py
        raise ConfigError("backend", "mpi", "used with mpi4py installed (pip install 'dlbkit[mpi]') "
                          "and a script started by mpiexec") from e
    return MPI


class _Backoff:
    """Sleep between polls in proportion to the wait so far: added latency ≤ POLL_FRACTION of it.

    No sleep right after a message, then ``POLL_FRACTION`` × (time since the last message), kept
    within [POLL_MIN_S, POLL_MAX_S]: frequent messages are noticed within tens of microseconds, and
    a long idle wait costs a wake-up every POLL_MAX_S only.
    """

    def __init__(self):
        self.since = time.monotonic()
        self.first = True

    def reset(self) -> None:
        self.since = time.monotonic()
        self.first = True

    def sleep(self, deadline: float | None = None) -> None:
        if self.first:  # one more poll before the first sleep
            self.first = False
            return
        now = time.monotonic()
        d = min(POLL_MAX_S, max(POLL_MIN_S, POLL_FRACTION * (now - self.since)))
        if deadline is not None:
            d = min(d, deadline - now)
        if d > 0:
            time.sleep(d)


def _wait(req, deadline: float | None = None) -> bool:
    """Complete a request without spinning; False if *deadline* passed first."""
    poll = _Backoff()
    while not req.Test():
        if deadline is not None and time.monotonic() >= deadline:
            return False
        poll.sleep(deadline)
    return True


def quiet_barrier(comm) -> None:
    """A barrier whose waiting ranks sleep instead of spinning."""
    _wait(comm.Ibarrier())


def _signalled(signals: Deferred, e: BaseException) -> str:
    """*e*, raised by the handler of the signal *signals* was running, in one line."""
    text = " ".join(str(e).split())
    return f"its handler of {signal.Signals(signals.running).name} raised {type(e).__name__}: {text}".rstrip(": ")


class MPITransport(Transport):
    """Rank 0's side: worker *w* is rank w + 1 of *comm*. Non-blocking sends, polled receives."""

    shares_items = False

    def __init__(self, comm, *, grace: float | None = None, mesh: bool = False):
        self._MPI = load_mpi()
        self.comm = comm
        self.mesh = mesh  # the workers also talk to one another: stopping ends with their barrier (RankConn.close)
        self.n_workers = comm.Get_size() - 1
        self.grace = GRACE_S if grace is None else grace
        self.error_rank: int | None = None  # the rank whose Error message arrived first
        self._status = self._MPI.Status()
        self._sends: list = []  # pending isend requests
        self._stopped: set[int] = set()  # workers sent Stop
        self._gone: set[int] = set()  # workers that said Bye
        self._closed = False
        self._poll = _Backoff()
        self._interrupt: BaseException | None = None  # raised by the next recv (:meth:`interrupt`)
        self.signals: Deferred | None = None  # rank 0's signals held back: handled in recv's waits
        self.signalled: DlbkitError | None = None  # a worker rank's handler raised (a Signalled message)

    def send(self, w: int, msg: tuple) -> None:
        if w in self._stopped or w in self._gone:
            return
        self._sends.append(self.comm.isend(msg, dest=w + 1, tag=TAG))
        if type(msg) is Stop:
            self._stopped.add(w)
        if len(self._sends) > PRUNE_SENDS:
            self._sends = [r for r in self._sends if not r.Test()]

    def _take(self) -> tuple[int, tuple] | None:
        """A message already arrived, or None (Byes are booked and never returned)."""
        while True:
            m = self.comm.improbe(self._MPI.ANY_SOURCE, TAG, self._status)
            if m is None:
                return None
            w = self._status.Get_source() - 1
            msg = m.recv()
            kind = type(msg)
            if kind is Bye:
                self._gone.add(w)
                continue
            if kind is Signalled:  # ends the run at the next wait, or after it if it came while stopping
                if self.signalled is None:
                    self.signalled = DlbkitError(f"rank {w + 1} stopped the run: {msg.why}")
                    self._interrupt = self._interrupt or self.signalled
                continue
            if kind is Error and self.error_rank is None:
                self.error_rank = w + 1
            return w, msg

    def interrupt(self, error: BaseException) -> None:
        """End the run from a signal handler of rank 0 (a ``dlbkit.Loop`` closed during a step): the
        coordinator's next :meth:`recv` raises *error*, and the run fails as after any failure (the
        workers finish the unit in hand, are stopped, and are told why). Only a flag is set here: a
        handler runs between two bytecodes of whatever rank 0 was doing, maybe inside this transport."""
        self._interrupt = error

    def recv(self, timeout: float | None = None) -> tuple[int, tuple] | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.signals is not None:
                self.signals.run_pending()  # a safe point: what the handler raises ends the run here
            if self._interrupt is not None:
                raise self._interrupt
            got = self._take()
            if got is not None:
                self._poll.reset()
                return got
            if deadline is not None and time.monotonic() >= deadline:
                return None
            self._poll.sleep(deadline)

    def stop(self, *, kill: bool = False) -> None:
        """Send Stop to every worker not yet stopped, then drain until each has said Bye.

        Results still arriving (after a failure) are discarded. A worker finishes the chunk in hand
        before it reads Stop; if the workers are not all gone within ``grace`` seconds, or on
        Ctrl-C meanwhile, the job is aborted (``MPI_Abort``) after printing the error in flight.
        *kill* changes nothing else: MPI cannot end one rank alone.
        """
        if self._closed:
            return
        self._closed = True
        deadline = time.monotonic() + self.grace
        try:
            for w in range(self.n_workers):
                self.send(w, Stop())
            # a mesh's workers leave after a barrier that rank 0 joins at once (it sends no peer messages)
            barrier = self.comm.Ibarrier() if self.mesh else None
            poll = _Backoff()
            while len(self._gone) < self.n_workers:
                if barrier is not None:
                    barrier.Test()  # progress for the workers' barrier
                if self._take() is not None:
                    poll.reset()
                    continue
                if time.monotonic() >= deadline:
                    busy = sorted(w + 1 for w in range(self.n_workers) if w not in self._gone)
                    abort_job(f"worker rank(s) {busy} did not stop within {self.grace:g} s "
                           f"(DLBKIT_MPI_GRACE_S); aborting the MPI job")
                poll.sleep(deadline)
            if barrier is not None and not _wait(barrier, max(deadline, time.monotonic() + 1.0)):
                abort_job("the worker ranks' closing barrier did not complete; aborting the MPI job")
            last = max(deadline, time.monotonic() + 1.0)  # every worker has read all it was sent
            for r in self._sends:
                if not _wait(r, last):
                    abort_job("a message to a worker rank was never received; aborting the MPI job")
            self._sends.clear()
        except KeyboardInterrupt:
            abort_job("interrupted while stopping the worker ranks; aborting the MPI job")


class RankConn:
    """A worker rank's connection to rank 0, with the ``send``/``recv`` of a pipe end; with *mesh*,
    also to the other worker ranks (``send_to``; ``poll``/``recv`` take their messages too).

    A message to another worker is a synchronous non-blocking send (``issend``), kept until it
    completes: it completes when the peer has received it, so no send ever blocks this rank's loop
    (two ranks sending each other large messages while neither receives would), and :meth:`close`
    knows when nothing it sent is still in flight. Closing a mesh is the non-blocking consensus of
    Hoefler, Siebert and Lumsdaine (PPoPP 2010, "NBX"): once all its peer sends have completed, a
    rank enters a non-blocking barrier (rank 0 enters at once, :meth:`MPITransport.stop`) and goes
    on receiving, and discarding, peer messages until the barrier completes; then no message to it
    is left in flight, and it says Bye.
    """

    def __init__(self, comm, *, mesh: bool = False):
        self.comm = comm
        self.mesh = mesh
        self.stopped = False
        self._poll = _Backoff()
        self._peer_sends: list = []  # issend requests to other worker ranks not yet completed
        self._any = load_mpi().ANY_SOURCE if mesh else None
        self.signals: Deferred | None = None  # this rank's signals held back: handled in the waits
        self.signalled: BaseException | None = None  # what its handler raised: the rank stops

    def _safe_point(self) -> None:
        """Run the handlers of signals held back; if one raises, tell rank 0 (a :class:`Signalled`
        message), keep the exception for the end of the run and take no more work."""
        if self.signals is None or not self.signals.pending or self.signalled is not None:
            return
        try:
            self.signals.run_pending()
        except BaseException as e:  # noqa: BLE001 - the handler's own exit: raised when the run has ended
            self.signalled = e
            _wait(self.comm.isend(Signalled(why=_signalled(self.signals, e)), dest=0, tag=TAG))

    def send(self, msg: tuple) -> None:
        _wait(self.comm.isend(msg, dest=0, tag=TAG))

    def send_to(self, dst: int, msg: tuple, *, droppable: bool = False) -> None:
        """To worker *dst* (not waiting; in the order posted to that worker, MPI's non-overtaking
        rule: there is no order across destinations), or to rank 0 (:data:`~.base.COORDINATOR`:
        :meth:`send`, which waits until the message has left). *droppable* changes nothing here:
        a send that is not received stays pending without holding up the others."""
        if dst == COORDINATOR:
            self.send(msg)
            return
        self._peer_sends.append(self.comm.issend(msg, dest=dst + 1, tag=PEER_TAG))
        if len(self._peer_sends) > PRUNE_SENDS:
            self._peer_sends = [r for r in self._peer_sends if not r.Test()]

    def drain(self, peer: int) -> list:
        """Nothing: under MPI a rank's death ends the whole job, so no node outlives a peer."""
        return []

    def _take(self) -> tuple | None:
        """A message already here (rank 0's first), or None."""
        m = self.comm.improbe(0, TAG)
        if m is None and self.mesh:
            m = self.comm.improbe(self._any, PEER_TAG)
        if m is None:
            return None
        msg = m.recv()
        if type(msg) is Stop:
            self.stopped = True
        return msg

    def recv(self) -> tuple:
        self._poll.reset()
        while True:
            self._safe_point()
            msg = self._take()
            if msg is not None and (self.signalled is None or type(msg) is Stop):  # signalled: Stop alone
                return msg
            self._poll.sleep()

    def poll(self, timeout: float | None = None) -> bool:
        """True when a message is waiting (within *timeout* seconds; None: until one is), as a
        pipe end's ``poll`` (a worker loop with periodic work of its own, the cluster's node)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        poll = _Backoff()
        while not (self.comm.iprobe(0, TAG) or (self.mesh and self.comm.iprobe(self._any, PEER_TAG))):
            self._safe_point()
            if self.signalled is not None:
                return True  # its recv waits for the Stop that will come
            if deadline is not None and time.monotonic() >= deadline:
                return False
            poll.sleep(deadline)
        return True

    def close(self) -> None:
        """After the worker loop returned: wait for Stop if it has not come (we stopped after an
        Error), drain the mesh (class docstring), say Bye."""
        while not self.stopped:
            self.recv()  # rank 0 never answers an Error with work: this is the Stop (peer messages: dropped)
        if self.mesh:
            barrier, poll = None, _Backoff()
            while True:
                m = self.comm.improbe(self._any, PEER_TAG)
                if m is not None:
                    m.recv()  # after Stop a peer's message has no use
                    poll.reset()
                    continue
                if barrier is None:
                    self._peer_sends = [r for r in self._peer_sends if not r.Test()]
                    if not self._peer_sends:
                        barrier = self.comm.Ibarrier()
                elif barrier.Test():
                    break
                poll.sleep()
        _wait(self.comm.isend(Bye(), dest=0, tag=TAG))


def abort_job(reason: str, rank: int = 0) -> NoReturn:
    """Print the exception in flight (if any) and *reason*, then end the whole job."""
    exc = sys.exception()
    status.doing("aborting the MPI job (%s)", reason)
    try:
        if exc is not None:
            traceback.print_exception(exc)
        print(f"dlbkit: rank {rank}: {reason}", file=sys.stderr, flush=True)
        # MPI_Abort makes mpiexec kill the job at once; its I/O forwarder may not have passed our
        # stderr on yet (seen under load: an empty stderr), so give it a moment
        time.sleep(ABORT_FLUSH_S)
    finally:
        load_mpi().COMM_WORLD.Abort(1)
        os._exit(1)  # not reached: MPI_Abort does not return
