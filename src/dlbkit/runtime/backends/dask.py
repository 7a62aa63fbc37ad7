"""The Dask backend: the workers of a running Dask cluster (``distributed``) are the run's workers.

The balancers decide as on the other backends; the engine is Dask. A family whose worker answers each
message on its own (:attr:`~.base.Program.answer`: the map's ``Work → Done``, the graph's ``Run →
Result``) has every message the coordinator sends to worker *w* run as one Dask task, pinned to the
Dask worker the balancer chose (``workers=[address]``, ``allow_other_workers=False``), its replies the
task's result. The task's key is the chunk's or the task's name (:meth:`~.base.Program.task_name`), so
Dask's dashboard shows the work as the balancer cut it. What every message needs (the user's function,
the graph's tasks, the emulation) is scattered to the workers once, before the first message.

What a backend owns, here:

* **start**: the Client given (or one connected to the address given, closed after the run), the
  workers named in the order the scheduler lists them, the first *workers* of them (default all);
* **clocks**: a worker's times are run times on its own clock; a Dask worker on this machine (the same
  boot) shares ``perf_counter``'s monotonic clock, a worker elsewhere gets run time 0 shifted by its
  clock's offset, measured once at start (one ``Client.run`` round trip, midpoint);
* **a dead worker**: the scheduler's list of workers is read every :data:`MEMBERSHIP_S` seconds while
  the coordinator waits; a worker that left it is reported as ``Died`` after every reply it sent (its
  pending tasks cancelled), and the family requeues what it held, as on the local backend. A worker
  that rejoins (a nanny's restart) has a new address and is not taken back into the run;
* **a task Dask cancels** (the Client lost its scheduler for a moment, or data the task needs was
  lost): its message is submitted again, at most :data:`RESUBMITS` times, its result taken once;
* **stop**: nothing to stop on the workers (no loop runs there); every pending task is cancelled and the
  scattered data released.

A family whose workers keep state from one message to the next (a tree's, an SPMD domain's, a job
cluster's nodes) has no ``answer``: its worker loops run as one long-running task each
(:mod:`.dask_loop`).
"""

from __future__ import annotations

import itertools
import pickle
import queue
import threading
import time
import uuid
from typing import Any

from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.runtime.backends.base import Program, Transport, drive
from dlbkit.runtime.messages import Died, Stop

__all__ = ["DaskTransport", "connect", "run", "open_pool", "MEMBERSHIP_S", "CONNECT_S", "RESUBMITS"]

#: seconds between two readings of the scheduler's workers while the coordinator waits (the longest a
#: dead worker's chunk waits before it is requeued, beyond Dask's own heartbeat)
MEMBERSHIP_S = 0.25
#: how long a future whose result() failed may take to show that Dask cancelled it (its status is set on
#: the client's event loop, after the error reached this thread)
CANCEL_SETTLE_S = 2.0
#: seconds to connect to a scheduler address, or to wait for the workers asked for
CONNECT_S = 10.0
#: times one message is submitted again after Dask itself cancelled its task (the Client lost the
#: scheduler for a moment, or the scattered data the task needs was lost) before the run gives up
RESUBMITS = 3
_INSTALL = "installed: pip install 'dlbkit[dask]' (Dask's distributed scheduler)"


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ConfigError("backend", "dask", f"used with distributed {_INSTALL}") from None
    return distributed


def connect(client: Any) -> tuple[Any, bool]:
    """The ``distributed.Client`` for *client* (a Client, a scheduler's address, or None for the Client
    already running in this process), and whether this backend opened it (and closes it)."""
    distributed = _distributed()
    if client is None:
        try:
            return distributed.get_client(), False
        except ValueError:
            raise ConfigError("client", None, "a distributed.Client or a scheduler's address (such as "
                              "'tcp://127.0.0.1:8786') with backend='dask': none was given and no Client is "
                              "running in this process") from None
    if isinstance(client, str):
        try:
            return distributed.Client(client, timeout=CONNECT_S, set_as_default=False), True
        except (OSError, TimeoutError, ValueError) as e:
            why = " ".join(str(e).split()) or type(e).__name__
            raise ConfigError("client", client, f"the address of a running Dask scheduler, reached within "
                              f"{CONNECT_S:g} s: {why}") from None
    if not isinstance(client, distributed.Client):
        raise ConfigError("client", type(client).__name__, "a distributed.Client, a scheduler's address (str) or None")
    if client.status != "running":
        raise ConfigError("client", repr(client), f"a running distributed.Client (this one is {client.status!r})")
    return client, False


def _addresses(client: Any, workers: int | None) -> list[str]:
    """The first *workers* Dask workers (all by default), waiting up to :data:`CONNECT_S` for them."""
    need = workers or 1
    try:
        client.wait_for_workers(need, timeout=CONNECT_S)
    except (TimeoutError, OSError) as e:
        have = len(_workers(client))
        raise ConfigError("workers", workers, f"at most the Dask cluster's workers ({have} after waiting "
                          f"{CONNECT_S:g} s for {need})") from e
    addrs = _workers(client)
    return addrs[:workers] if workers else addrs


def _workers(client: Any) -> list[str]:
    """The scheduler's workers now, in its order. Not ``Client.scheduler_info()``: it returns the
    Client's cached identity, which the Client's own periodic refresh (every 2 s, with no per-worker
    part) can overwrite between the fetch and the return, so that a live cluster reads as empty
    (seen: every worker of a 10 000-task graph reported dead)."""
    return list(client.nthreads())


def _boot() -> str:
    """Which boot of which machine this clock is (a Dask worker on the same one shares perf_counter)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:  # not Linux: assume another clock, and measure its offset
        return uuid.uuid4().hex


def _probe() -> tuple[float, str]:
    return time.perf_counter(), _boot()


def _offsets(client: Any, addrs: list[str]) -> list[float]:
    """Each worker's ``perf_counter`` minus this process's at the same instant: 0 on this machine's boot,
    else measured over one round trip (its midpoint; the error at most half the round trip)."""
    t0 = time.perf_counter()
    seen = client.run(_probe, workers=addrs)
    mid = (t0 + time.perf_counter()) / 2
    here = _boot()
    return [0.0 if seen[a][1] == here else seen[a][0] - mid for a in addrs]


def _answer_task(answer, msg, w: int, origin: float, args: tuple) -> list[bytes]:
    """On a Dask worker: the family's answer to *msg*, each reply pickled here, as the local pipes
    pickle it, so that a reply that cannot be pickled is named by the family (``send_or_report``)."""
    out: list[bytes] = []
    answer(lambda m: out.append(pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL)), msg, w, origin, *args)
    return out


class DaskTransport(Transport):
    """The workers at *addrs* of *client*'s cluster, each message one Dask task (see the module)."""

    shares_items = False  # a map's items travel with each chunk (a graph's tasks are scattered once)

    def __init__(self, client: Any, addrs: list[str], program: Program, origin: float, *, owned: bool = False):
        self.client, self.addrs, self.program, self.owned = client, addrs, program, owned
        self.n_workers = len(addrs)
        self._origins = [origin + d for d in _offsets(client, addrs)]
        self._args = self._scatter()
        self._token = uuid.uuid4().hex[:8]
        self._seq = itertools.count()
        self._pending: dict[Any, tuple[int, Any, str, int]] = {}  # future -> (worker, message, name, resubmits)
        self._done: queue.Queue = queue.Queue()  # finished futures, from Dask's callback thread
        self._ready: list[tuple[int, tuple]] = []  # replies taken, not yet returned
        self._dead: set[int] = set()
        self._lock = threading.Lock()
        self._polled = time.monotonic()
        for w in range(self.n_workers):
            self._submit(w, None, "start")

    def _scatter(self) -> Any:
        return self.client.scatter([tuple(self.program.answer_args("dask"))], broadcast=True, hash=False,
                                   workers=self.addrs)[0]

    def _submit(self, w: int, msg: Any, name: str, resubmits: int = 0) -> None:
        key = (f"dlbkit {name}", self._token, next(self._seq))
        fut = self.client.submit(_answer_task, self.program.answer, msg, w, self._origins[w], self._args,
                                 key=key, workers=[self.addrs[w]], allow_other_workers=False, pure=False)
        with self._lock:
            self._pending[fut] = (w, msg, name, resubmits)
        fut.add_done_callback(self._done.put)

    def _resubmit(self, fut: Any, sent: tuple[int, Any, str, int]) -> None:
        """Submit *fut*'s message again: Dask cancelled its task, not this transport (which forgets a
        future before cancelling it), so its reply will never come. Its result was never taken, so the
        message's work is still delivered once; the user's function may run twice for it, as when a
        worker dies."""
        w, msg, name, resubmits = sent
        why = getattr(getattr(fut, "_state", None), "exception", None)  # Dask's FutureCancelledError
        if resubmits >= RESUBMITS:
            raise DlbkitError(f"Dask cancelled the task {fut.key!r} on worker {w} ({self.addrs[w]}) "
                              f"{resubmits + 1} times, the last for this reason: {why}")
        deadline = time.monotonic() + CONNECT_S
        while self.client.status != "running":  # reconnecting to the scheduler
            if self.client.status == "closed" or time.monotonic() > deadline:
                raise DlbkitError(f"the Dask Client lost its scheduler and is {self.client.status!r} "
                                  f"({why})")
            time.sleep(0.05)
        if self._args.cancelled():  # the scattered data went with it: scatter it again
            self._args = self._scatter()
        self._submit(w, msg, name, resubmits + 1)

    def send(self, w: int, msg: tuple) -> None:
        if type(msg) is Stop or w in self._dead:
            return
        self._submit(w, msg, self.program.task_name(msg))

    def recv(self, timeout: float | None = None) -> tuple[int, Any] | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._ready:
            wait = MEMBERSHIP_S if deadline is None else min(MEMBERSHIP_S, deadline - time.monotonic())
            if wait <= 0:
                return None
            try:
                self._take([self._done.get(timeout=wait)])
            except queue.Empty:
                pass
            if time.monotonic() - self._polled >= MEMBERSHIP_S:
                self._poll()
        return self._ready.pop(0)

    def _take(self, futs: list) -> None:
        """The replies of *futs* and of every other task finished by now. A result stays on its worker
        until fetched, and a worker that dies after finishing takes it along: a fetch that has not
        answered after :data:`MEMBERSHIP_S` asks whether the worker is still there, and a departed
        worker's result is dropped (its ``Died``, reported by :meth:`_poll`, requeues the work)."""
        while True:
            try:
                futs.append(self._done.get_nowait())
            except queue.Empty:
                break
        for fut in futs:
            with self._lock:
                sent = self._pending.pop(fut, None)
            if sent is None or sent[0] in self._dead:
                continue
            w = sent[0]
            if fut.cancelled():
                self._resubmit(fut, sent)
                continue
            if fut.status == "error":
                exc = fut.exception()
                raise DlbkitError(f"the Dask task {fut.key!r} on worker {w} ({self.addrs[w]}) failed in Dask, "
                                  f"outside the user's code: {type(exc).__name__}: {exc}") from exc
            while True:
                try:
                    out = fut.result(timeout=MEMBERSHIP_S)
                    break
                except TimeoutError:
                    if self.addrs[w] not in self._live():
                        out = []
                        break
                except Exception:
                    # cancelled by Dask while its result was fetched (distributed's sync() then raises
                    # UnboundLocalError, not CancelledError: seen in CI); the future's own status can say
                    # so a moment after that error (CI again: the error re-raised, the repr "cancelled")
                    settle = time.monotonic() + CANCEL_SETTLE_S
                    while not fut.cancelled() and time.monotonic() < settle:
                        time.sleep(0.01)
                    if not fut.cancelled():
                        raise
                    self._resubmit(fut, sent)
                    out = []
                    break
            self._ready.extend((w, pickle.loads(b)) for b in out)

    def _live(self) -> set[str]:
        try:
            return set(_workers(self.client))
        except (OSError, TimeoutError) as e:
            raise DlbkitError(f"the Dask scheduler cannot be reached: {e}") from e

    def _poll(self) -> None:
        """Report every worker that left the scheduler as dead, after the replies it sent."""
        self._polled = time.monotonic()
        live = self._live()
        for w, a in enumerate(self.addrs):
            if w not in self._dead and a not in live:
                self._take([])  # what it finished before leaving is kept
                self._dead.add(w)
                with self._lock:
                    lost = [f for f, x in self._pending.items() if x[0] == w]
                    for f in lost:
                        del self._pending[f]
                self.client.cancel(lost)
                self._ready.append((w, Died(exitcode=None)))

    def stop(self, *, kill: bool = False) -> None:
        with self._lock:
            pending, self._pending = list(self._pending), {}
        try:
            if pending:
                self.client.cancel(pending)
            self.client.cancel([self._args])
        except Exception:  # noqa: BLE001 - a closed client: nothing left to cancel
            pass
        if self.owned:
            self.client.close()


def _start(program: Program, client: Any, workers: int | None) -> Transport:
    client, owned = connect(client)
    try:
        for attempt in (1, 2):
            addrs = _addresses(client, workers)
            problem = program.problem(len(addrs), "dask")
            if problem is not None:
                raise problem
            program.setup(len(addrs), time.perf_counter(), program.shared())
            try:
                if program.answer is None:  # a worker loop: one long-running task per worker
                    from dlbkit.runtime.backends.dask_loop import DaskLoopTransport
                    origins = [program.origin + d for d in _offsets(client, addrs)]
                    return DaskLoopTransport(client, addrs, program, origins, live=_workers, owned=owned,
                                             connect_s=CONNECT_S, membership_s=MEMBERSHIP_S)
                return DaskTransport(client, addrs, program, program.origin, owned=owned)
            except OSError as e:  # a worker left while the run started (Dask's CommClosedError): again on those left
                if attempt == 2:
                    raise DlbkitError(f"the Dask cluster's workers kept leaving while the run started: {e}") from e
    except BaseException:
        if owned:
            client.close()
        raise


def run(program: Program, *, workers: int | None = None, client: Any = None) -> tuple:
    """Execute *program* on a Dask cluster's workers (*client*: see :func:`connect`); its outcome."""
    outcome = program.empty(workers, "dask")
    if outcome is not None:
        return outcome
    return drive(program, _start(program, client, workers), "dask")


def open_pool(program: Program, *, workers: int | None = None, client: Any = None) -> DaskTransport:
    """The Dask workers as a persistent pool (``dlbkit.Loop``): the transport, driven step by step."""
    return _start(program, client, workers)
