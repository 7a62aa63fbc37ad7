"""The client side of :class:`dlbkit.Cluster`: the process that holds the futures.

Where the decisions run: in the nodes (:mod:`.cluster_agent`), each with its own queue, its own
information model and its own balancer object; a job is handed to its origin node, which places it.
The nodes talk to one another over the backend's mesh (:attr:`ClusterProgram.mesh`): a forwarded job
and a load message go from node to node, never through here. The client decides nothing and relays
nothing: it assigns each job an origin (round-robin over the live nodes, or the one the caller
names if it is alive; a dead one is replaced by round-robin), keeps the futures, and learns where
each job went from its origin's placement notice (:class:`~.messages.Placed`, sent after the
job itself), which is what fault recovery needs:

* a node that dies (its pipe ends: the transport's ``Died``, after every message it sent before) is
  announced to every other node (``NodeDied``), which drops it from its view at once. The jobs placed on it
  are submitted again at once. The jobs still at it as their origin may have left it just before
  (written to their node, the notice lost): the announcement lists them, each survivor takes what
  the dead node sent it and answers which it holds (``Held``), and once every survivor has answered
  the rest are submitted again (:meth:`ClusterRun._died`). A notice naming a dead node resubmits
  its job too. Each future is set once: a result is delivered exactly once.
* a job whose function raised sets its future's exception (the original exception, its cause the
  worker's traceback); the cluster goes on.
* with a journal (:mod:`dlbkit.runtime.journal`, a stream's: each job keyed by its pickled function and
  arguments and how many equal jobs came before it), each job's result is appended as it arrives, before
  its future is set; a job the journal holds is not sent to any node: its future is set at once.

The client's clock and the nodes' are the same ``time.perf_counter`` (one machine), read from the
run's time 0, so a job's submit, start and end times are comparable.
"""

from __future__ import annotations

import math
import pickle
import queue
import threading
import time
from concurrent.futures import BrokenExecutor, Future
from dataclasses import dataclass
from typing import Any

import numpy as np

from dlbkit.errors import RemoteTraceback
from dlbkit.model.trace import Trace
from dlbkit.runtime.backends import execute
from dlbkit.runtime.backends.base import Program, Transport, task_error
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.journal import Journal, stream_key
from dlbkit.runtime.messages import Died, Stop
from dlbkit.families.stream.runtime.agent import serve
from dlbkit.families.stream.runtime.messages import Held, NodeDied, Placed, Result, Started, Stats, Submit, SubmitBatch

__all__ = ["ClusterRun", "ClusterProgram", "Job", "SERIES_POINTS"]

#: points of the per-node queue and view-age series in the trace (resampled from the nodes' rounds)
SERIES_POINTS = 200
#: seconds the client waits for a node's goodbye before stopping it by force
STOP_WAIT_S = 5.0
#: seconds the client waits for every survivor's answer about a dead node's jobs (Held) before it
#: submits them again without the missing answers: a survivor first waits up to
#: local_mesh.DRAIN_WAIT_S for the dead node's pipe to end, so this is longer
ANSWER_WAIT_S = 10.0


@dataclass
class Job:
    """One job as :meth:`ClusterRun.ps` shows it (times in seconds from the cluster's time 0)."""

    job: int
    origin: int
    node: int  # where it is now: its origin until placed elsewhere (-1: nowhere, it failed or was cancelled)
    state: str  # "submitted" (at its origin), "placed" (on its node, queued), "running" (started on its node;
    #             learnt from the node's next message, piggybacked), "done", "error",
    #             "cancelled", "lost" (no node left to run it)
    submitted: float
    started: float = math.nan
    ended: float = math.nan
    busy: float = math.nan  # seconds of this machine the function took (before the emulated stretch)
    resubmitted: int = 0  # times it was submitted again after its node died


def _resolved(data: bytes) -> Future:
    """A future already done with the result pickled as *data* (a journal's)."""
    f: Future = Future()
    f.set_running_or_notify_cancel()
    try:
        f.set_result(pickle.loads(data))
    except BaseException as e:  # noqa: BLE001 - a result that cannot be rebuilt here is its error
        f.set_exception(e)
    return f


class ClusterRun:
    """Nodes started on the local backend and the client's state. Thread-safe: ``submit`` from any
    thread; one thread (``dlbkit-cluster``) reads the nodes' messages and sets the futures."""

    def __init__(self, n: int | None, balancer, info, *, backend: str = "local",
                 emulation: Emulation | None = None, seed: int = 0, start_method: str | None = None,
                 record_decisions: bool = False, balancer_name: str = "", suspect_after: float | None = None,
                 slots: int | list[int] = 1, client: Any = None, journal: Journal | None = None):
        self.n = n or 0
        self.journal = journal
        self.keys: dict[int, tuple[str, int]] = {}  # job → its key in the journal (with a journal)
        self.seen: dict[str, int] = {}  # a job's pickle's digest → how many were submitted (stream_key)
        self.journaled = 0  # futures set from the journal (those jobs ran in an earlier run)
        self.client = client  # the Dask backend's (a Client, a scheduler's address, or None)
        self.backend = backend
        self.balancer_name = balancer_name or getattr(balancer, "name", "")
        self.info_name = getattr(info, "name", "")
        self.info_params = info.get_params() if hasattr(info, "get_params") else {}
        self.balancer_params = balancer.get_params() if hasattr(balancer, "get_params") else {}
        self.seed = seed
        self.emulation = emulation
        self.lock = threading.RLock()
        self.jobs: list[Job] = []
        self.futures: dict[int, Future] = {}
        self.payloads: dict[int, bytes] = {}
        self.live: list[int] = []
        self.rr = 0
        self.closing = False
        self.cancel = False
        self.stats: dict[int, dict] = {}
        self.pids: list[int] = []
        self.error: BaseException | None = None
        self.duplicates = 0  # results of jobs already delivered (none expected; counted to show it)
        self.early: dict[int, tuple[int, float]] = {}  # job → (node, start) heard before its placement notice
        # dead node → (jobs asked about, nodes yet to answer, when the answers are due: time.monotonic)
        self.asking: dict[int, tuple[list[int], set[int], float]] = {}
        self.end_time = math.nan
        self.origin = time.perf_counter()
        self.program = ClusterProgram(self, balancer, info, emulation, seed, record_decisions, suspect_after, slots)
        self._started = threading.Event()
        self._start_method = start_method
        self.transport: Transport | None = None
        # every message to a node leaves through one sender thread, so the thread that reads the
        # nodes' messages never blocks on a full pipe (a node blocked sending to the client, the
        # client blocked sending to it: the deadlock of two full pipes)
        self.outbox: queue.SimpleQueue = queue.SimpleQueue()
        self.sender = threading.Thread(target=self._send_loop, name="dlbkit-cluster-sender", daemon=True)
        # the client's thread starts the nodes and runs until they stop: Linux's PDEATHSIG is tied to
        # the thread that started a worker, so it must not be a short-lived one
        self.thread = threading.Thread(target=self._main, name="dlbkit-cluster", daemon=True)

    def start(self) -> None:
        """Start the nodes (local) or the MPI run (rank 0; worker ranks call :meth:`serve_rank`)."""
        self.thread.start()
        self._started.wait()
        if self.error is not None:
            raise self.error

    def serve_rank(self) -> None:
        """A worker rank under MPI: be a node until the client shuts the cluster down."""
        execute(self.program, "mpi")

    @property
    def speeds(self) -> list[float]:
        return list(self.program.emulation.speeds) if self.program.emulation is not None else [1.0] * self.n

    # --- the client's calls ---------------------------------------------------------------------------
    def now(self) -> float:
        return time.perf_counter() - self.origin

    def _origin(self, origin: int | None) -> int:
        # a named origin that has died cannot receive: the job goes to the next live node by
        # round-robin instead, and that node is the job's origin in ps() (where it really arrived)
        if origin is not None and origin in self.live:
            return origin
        k = self.live[self.rr % len(self.live)]
        self.rr += 1
        return k

    def submit(self, payloads: list[bytes], origin: int | None = None) -> list[Future]:
        """Hand *payloads* (pickled ``(fn, args, kwargs)``) to one origin node: one job, or a batch
        that the origin places at once with its balancer's batch rule."""
        with self.lock:
            if self.closing:
                raise RuntimeError("cannot submit to a cluster that is shut down")
            if not self.live:
                raise BrokenExecutor("every node of the cluster has died")
            k = self._origin(origin)
            t = self.now()
            out, batch = [], []
            for p in payloads:
                if self.journal is not None:
                    key = stream_key(p, self.seen)
                    if key in self.journal.done:  # ran in an earlier run: its result, at once
                        out.append(_resolved(self.journal.done[key]))
                        self.journaled += 1
                        continue
                jid = len(self.jobs)
                if self.journal is not None:
                    self.keys[jid] = key
                self.jobs.append(Job(jid, k, k, "submitted", t))
                f: Future = Future()
                self.futures[jid] = f
                self.payloads[jid] = p
                out.append(f)
                batch.append((jid, p))
            if len(batch) == 1:
                self._post(k, Submit(*batch[0]))
            elif batch:
                self._post(k, SubmitBatch(batch))
            return out

    def pending(self) -> int:
        with self.lock:
            return len(self.futures)

    def ps(self) -> list[Job]:
        with self.lock:
            return [Job(**vars(j)) for j in self.jobs]

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self.lock:
            self.closing = True
            if cancel_futures:
                self.cancel = True
                for jid, f in list(self.futures.items()):
                    f.cancel()
                    self.jobs[jid].state, self.jobs[jid].node = "cancelled", -1
                self.futures.clear()
                self.payloads.clear()
        if wait:
            self.thread.join()

    # --- the client's threads: start, send, deliver, recover, stop ---------------------------------------------
    def _post(self, k: int, msg: tuple) -> None:
        self.outbox.put((k, msg))

    def _send_loop(self) -> None:
        tr = self.transport
        while True:
            item = self.outbox.get()
            if item is None:
                return
            tr.send(*item)

    def _main(self) -> None:
        try:
            execute(self.program, self.backend, workers=self.n or None, start_method=self._start_method,
                    client=self.client)
        except BaseException as e:  # noqa: BLE001 - raised in the caller's thread (at start) or kept
            self.error = e
            self._fail_pending(e)
        finally:
            if self.journal is not None:
                self.journal.close()
            self._started.set()

    def _fail_pending(self, e: BaseException) -> None:
        with self.lock:
            self.closing = True
            for f in self.futures.values():
                if not f.done() and f.set_running_or_notify_cancel():
                    f.set_exception(BrokenExecutor(f"the cluster's client failed: {e!r}"))
            self.futures.clear()

    def coordinate(self, tr: Transport) -> tuple:
        """The client's loop (the family's ``coordinate``), in the client's thread."""
        self.transport = tr
        self.n = tr.n_workers
        self.live = list(range(self.n))
        self.pids = list(getattr(tr, "pids", []))
        self.sender.start()
        self._started.set()
        try:
            while True:
                got = tr.recv(timeout=0.05)
                if got is not None:
                    self._handle(*got)
                with self.lock:
                    if self.asking:
                        self._overdue()
                    if self.closing and (self.cancel or not self.futures):
                        break
            self._stop(tr)
        except BaseException:
            self.outbox.put(None)
            raise
        return (self.trace(),)

    def _stop(self, tr: Transport) -> None:
        """Stop every live node: each sends its statistics (:class:`Stats`) and leaves; then the transport's stop."""
        with self.lock:
            live = list(self.live)
        for k in live:
            self._post(k, Stop())
        waiting = set(live)
        deadline = time.monotonic() + STOP_WAIT_S
        while waiting and time.monotonic() < deadline:
            got = tr.recv(timeout=0.1)
            if got is None:
                continue
            k, msg = got
            if type(msg) is Stats:
                self.stats[k] = msg.stats
                waiting.discard(k)
            elif type(msg) is Died:
                waiting.discard(k)
        self.outbox.put(None)
        self.sender.join(timeout=STOP_WAIT_S)
        self.end_time = self.now()
        tr.stop(kill=bool(waiting) or self.sender.is_alive())

    def _handle(self, k: int, msg: tuple) -> None:
        """Act on node *k*'s message (or the transport's word of its death)."""
        kind = type(msg)
        with self.lock:
            if kind is Result:
                self._running(k, msg.started)
                self._done(k, msg)
            elif kind is Placed:
                self._running(k, msg.started)
                self._placed(msg.jid, msg.node)
            elif kind is Started:
                self._running(k, msg.started)
            elif kind is Held:
                self._running(k, msg.started)
                self._answered(k, msg.dead, msg.jobs)
            elif kind is Died:
                self._died(k)
            elif kind is Stats:
                self.stats[k] = msg.stats

    def _placed(self, jid: int, node: int) -> None:
        """Its origin placed job *jid* on *node* (and sent it there itself, before this notice)."""
        if jid not in self.futures:
            return  # its result is in already
        if node not in self.live:  # placed on a node that died meanwhile: submitted again
            self._resubmit(jid)
            return
        self._move(jid, node)

    def _move(self, jid: int, node: int) -> None:
        """Job *jid* is now on *node* (placed there, or found there after its origin's death)."""
        j = self.jobs[jid]
        j.node, j.state = node, "placed"
        early = self.early.pop(jid, None)
        if early is not None and early[0] == node:  # its node's word that it started came first
            j.state, j.started = "running", early[1]

    def _running(self, k: int, started: list) -> None:
        """Node *k* started these jobs (piggybacked on its message): they are running there. A job
        whose notice of placement (Placed, from its origin) is still on its way is kept in ``early``."""
        for jid, t in started:
            if jid not in self.futures:
                continue
            j = self.jobs[jid]
            if j.node == k:
                j.state, j.started = "running", t
            else:
                self.early[jid] = (k, t)

    def _done(self, k: int, msg: Result) -> None:
        jid, ok, data, t_start, t_busy, t_end, _started = msg
        f = self.futures.pop(jid, None)
        if f is None:  # delivered already (or cancelled): exactly once
            self.duplicates += self.jobs[jid].state in ("done", "error")
            return
        self.payloads.pop(jid, None)
        self.early.pop(jid, None)
        j = self.jobs[jid]
        j.node, j.started, j.ended, j.busy = k, t_start, t_end, t_busy - t_start
        if not f.set_running_or_notify_cancel():  # the caller cancelled it
            j.state = "cancelled"
            return
        if ok:
            try:
                value = pickle.loads(data)
            except BaseException as e:  # noqa: BLE001 - a result that cannot be rebuilt here is its error
                f.set_exception(e)
                j.state = "error"
                return
            if self.journal is not None:  # journaled before the caller can see it: a kill after loses nothing
                self.journal.append([self.keys.pop(jid)], [data])
            f.set_result(value)
            j.state = "done"
            return
        j.state = "error"
        err = task_error(data, what="job", index=jid)
        cause = err.__cause__
        # the original exception (as concurrent.futures gives it), the worker's traceback its cause;
        # the TaskError when it could not be rebuilt here
        f.set_exception(cause if cause is not None and not isinstance(cause, RemoteTraceback) else err)

    def _resubmit(self, jid: int) -> None:
        j = self.jobs[jid]
        if not self.live:
            f = self.futures.pop(jid)
            self.payloads.pop(jid, None)
            j.state, j.node = "lost", -1
            if f.set_running_or_notify_cancel():
                f.set_exception(BrokenExecutor(f"job {jid}: every node of the cluster has died"))
            return
        k = self._origin(None)
        j.node, j.state, j.started = k, "submitted", math.nan
        j.resubmitted += 1
        self._post(k, Submit(jid, self.payloads[jid]))

    def _died(self, k: int) -> None:
        """Node *k* died. The jobs placed on it are lost with it: submitted again at once. Those
        still at it as their origin may have left it just before (sent to their node, the notice
        lost with *k*): every survivor is told of the death with the list of them, takes what *k*
        sent it (its pipe, to the end) and answers which it holds (Held, :meth:`_answered`); the rest
        are submitted again once every survivor has answered (or died), so none runs twice — or,
        should a survivor not answer within :data:`ANSWER_WAIT_S`, then (:meth:`_overdue`)."""
        if k not in self.live:
            return
        self.live.remove(k)
        at_k = [jid for jid in self.futures if self.jobs[jid].node == k]
        asked = [jid for jid in at_k if self.jobs[jid].state == "submitted"]
        for other in self.live:
            self._post(other, NodeDied(k, asked))
        for jid in at_k:
            if self.jobs[jid].state != "submitted":
                self._resubmit(jid)
        self.asking[k] = (asked, set(self.live), time.monotonic() + ANSWER_WAIT_S)
        for dead, (_, waiting, _) in list(self.asking.items()):  # k cannot answer any more
            waiting.discard(k)
            self._settle(dead)

    def _overdue(self) -> None:
        """Deaths whose survivors have not all answered within :data:`ANSWER_WAIT_S` (a survivor
        alive but not reading: stopped, starved): their jobs are submitted again without the
        missing answers. A job that a silent survivor holds may then run twice; its first result
        is delivered (at-least-once execution, exactly-once delivery, as for a running job)."""
        now = time.monotonic()
        for dead in [d for d, (_, _, due) in self.asking.items() if now >= due]:
            self._settle(dead, late=True)

    def _answered(self, k: int, dead: int, held: list[int]) -> None:
        """Node *k* holds these jobs that the dead node *dead* had forwarded to it."""
        for jid in held:
            if jid in self.futures and self.jobs[jid].node == dead:
                self._move(jid, k)
        if dead in self.asking:
            self.asking[dead][1].discard(k)
            self._settle(dead)

    def _settle(self, dead: int, *, late: bool = False) -> None:
        """Every survivor has answered about *dead* (or, *late*, the time to answer is up): its jobs
        no survivor said it holds are submitted again."""
        asked, waiting, _ = self.asking[dead]
        if waiting and not late:
            return
        del self.asking[dead]
        for jid in asked:
            if jid in self.futures and self.jobs[jid].node == dead:
                self._resubmit(jid)

    # --- the record of the run ---------------------------------------------------------------------------
    def trace(self) -> Trace:
        """The run as the stream simulator's Trace (``family="stream"``, ``source`` the backend): one
        interval per finished job, the jobs' series, each node's queue and view age resampled on
        :data:`SERIES_POINTS` times, the information layer's cost.

        ``meta["queue_mean"]`` is the mean, over the nodes that sent their final statistics, of each
        node's time-averaged queue (the mean of its queue sampled at its information rounds, which are
        evenly spaced in time). With no node dead this is the stream simulator's ``queue_mean``
        (∫ N dt / T / n: the time-average number of jobs in the system per node). A killed node never
        sends its statistics, so its queue before the death is unknown: it is left out of the mean
        (not counted as a queue of 0); the survivors were alive the whole run, so each weighs the same.
        NaN when no node sampled (a model with no rounds)."""
        with self.lock:
            jobs = [j for j in self.jobs if j.state in ("done", "error")]
        n = self.n
        tr = Trace(n_nodes=n, node_of=list(range(n)), balancer=self.balancer_name, seed=self.seed, source=self.backend,
                   family="stream")
        for j in jobs:
            tr.add_interval(j.node, j.job, 1, j.submitted, j.started, j.ended)
        end = max([j.ended for j in jobs], default=0.0)
        tr.end_time = end
        fastest = max(self.speeds)
        busy = np.asarray([j.busy for j in jobs], dtype=float)
        tr.series.update({"job_time": np.asarray([j.submitted for j in jobs]),
                          "job_origin": np.asarray([j.origin for j in jobs], dtype=np.int64),
                          "job_width": np.ones(len(jobs), dtype=np.int64),
                          "job_first": np.arange(len(jobs), dtype=np.int64),
                          "job_done": np.asarray([j.ended for j in jobs]),
                          "job_ideal": busy / fastest, "demand": busy})
        grid = np.linspace(0.0, end, SERIES_POINTS) if end > 0 else np.zeros(1)
        queue = np.zeros((len(grid), n), dtype=np.int64)
        age = np.full((len(grid), n), np.nan)
        qmax = np.zeros(n, dtype=np.int64)
        messages, nbytes, age_sum, age_count, moved, suspected = 0, 0.0, 0.0, 0, 0, 0
        node_means = []  # each reporting node's time-averaged queue (see queue_mean in the docstring)
        for k, st in self.stats.items():
            s = np.asarray(st["samples"], dtype=float).reshape(-1, 3)
            messages += st["messages"]
            nbytes += st["bytes"]
            age_sum += st["age_sum"]
            age_count += st["age_count"]
            moved += st["forwarded"]
            suspected += st.get("suspected", 0)
            if len(s):
                idx = np.searchsorted(s[:, 0], grid, side="right") - 1
                ok = idx >= 0
                queue[ok, k] = s[idx[ok], 1].astype(np.int64)
                age[ok, k] = s[idx[ok], 2]
                qmax[k] = int(s[:, 1].max())
                node_means.append(float(np.mean(s[:, 1])))
            if st.get("decisions"):
                tr.decisions.extend(st["decisions"])
        tr.series.update({"queue": queue, "queue_time": grid, "view_age": age, "queue_max": qmax})
        tr.total_work = float(busy.sum())
        tr.max_item = float(busy.max()) if len(busy) else 0.0
        tr.speeds = list(self.speeds)
        tr.messages = moved
        tr.info_messages, tr.info_bytes = float(messages), float(nbytes)
        tr.info_age_mean = age_sum / age_count if age_count else math.nan
        tr.meta.update({"warmup_job": 0, "queue_mean": float(np.mean(node_means)) if node_means else math.nan,
                        "busy_time": float(sum(j.ended - j.started for j in jobs)), "slots": list(self.program.slots),
                        "info": self.info_name, "info_params": {"model": self.info_name, **self.info_params},
                        "balancer_params": self.balancer_params, "tasks_moved": moved, "workload": "cluster",
                        "resubmitted": int(sum(j.resubmitted for j in self.jobs)), "suspected": suspected, "duplicates": self.duplicates,
                        **({"journal": {"path": str(self.journal.path), "reused": self.journaled,
                                        "computed": len(jobs)}} if self.journal is not None else {}),
                        "dead": [k for k in range(n) if k not in self.live]})
        return tr


class ClusterProgram(Program):
    """The cluster as a backend runs it: the nodes' loop (:func:`.cluster_agent.serve`) and the
    client's (:meth:`ClusterRun.coordinate`)."""

    serve = staticmethod(serve)
    mesh = True  # the nodes send load messages and forward jobs to one another directly
    warns_oversubscription = False  # dlbkit.Cluster warns at its caller's line, before the nodes start
    # not interruptible: a node runs the jobs in runner threads, and Python runs a signal handler in the
    # main thread only, where the node's own loop is: marked, Ctrl-C would stop that loop, not the job
    interruptible = False

    def __init__(self, run: ClusterRun, balancer, info, emulation: Emulation | None, seed: int, record: bool,
                 suspect_after: float | None = None, slots: int | list[int] = 1):
        self.run, self.balancer, self.info, self.seed, self.record = run, balancer, info, seed, record
        self.slots_asked = slots  # an int (every node) or one per node; the list once the nodes are known
        self.slots: list[int] = [slots] * run.n if isinstance(slots, int) else list(slots)
        self.suspect_after = suspect_after
        self.emulation = emulation
        self.origin = run.origin

    def default_workers(self, cpus: int) -> int:
        return self.emulation.n_workers if self.emulation is not None else cpus

    def problem(self, n_workers: int, backend: str):
        from dlbkit.errors import ConfigError  # noqa: PLC0415
        # dlbkit.Cluster makes these checks for the local backend before anything starts; with MPI the
        # node count is the world's size, known only here (the backend's problem hook), so they stay
        if self.emulation is not None and self.emulation.n_workers != n_workers:
            return ConfigError("emulate", f"{self.emulation.n_workers} nodes", f"one per node ({n_workers})")
        if not isinstance(self.slots_asked, int) and len(self.slots_asked) != n_workers:
            return ConfigError("slots", self.slots_asked, f"an integer or one per node ({n_workers})")
        return None

    def setup(self, n_workers: int, origin: float, shared) -> None:
        self.emulation = shared
        self.origin = origin
        self.n = n_workers
        self.run.origin = origin
        self.slots = [self.slots_asked] * n_workers if isinstance(self.slots_asked, int) else list(self.slots_asked)

    def worker_args(self, backend: str) -> tuple:
        speeds = list(self.emulation.speeds) if self.emulation is not None else [1.0] * self.n
        return (self.n, self.origin, speeds, self.emulation, self.info, self.balancer, self.seed, self.record,
                self.suspect_after, self.slots)

    def worker_args_at(self, backend: str, origin: float) -> tuple:
        n, _, *rest = self.worker_args(backend)
        return (n, origin, *rest)

    def coordinate(self, transport: Transport, backend: str) -> tuple:
        return self.run.coordinate(transport)

    def for_workers(self, outcome: tuple) -> tuple:
        return (None,)  # the worker ranks need nothing back: the client holds the results
