"""A node of :class:`dlbkit.Cluster`: the daemon of 003 §1.2–1.4 (§5.1 of its note), one per node.

Each node runs in its own process (a local worker, or an MPI rank) and holds, as the seed's daemon does:

* a **load monitor**: its own copy of the information model (``gossip`` by default). Every period
  the node asks the model for one round, keeps only the messages whose sender is this node (the
  model is a pure policy over every node's table; in this process only this node's row is
  true, so only its messages are sent), and sends them over the transport; a message that arrives
  is merged with :meth:`~dlbkit.info.base.InfoModel.deliver`. Before a decision,
  :meth:`~dlbkit.info.base.InfoModel.fill` writes what this node knows into its
  :class:`~dlbkit.families.stream.model.view.StreamView` — exactly as the stream simulator does;
* a **scheduler**: the placement balancer object, asked through :func:`dlbkit.families.stream.balancers.decide.place`
  for each job that arrives here (the job's origin), on the view of the nodes this node knows
  to be alive (indices compacted; a dead node is not a node of the view);
* a **dispatcher** and a queue: a job placed here is queued for the runner threads, one per slot
  (the node's cores: ``slots``), each running the user's function one job at a time (slowed to the emulated node's speed with
  :meth:`~dlbkit.runtime.emulation.Emulation.stretch`); a job placed elsewhere leaves with a
  forward message.

The load a node reports is its jobs in the system (queued + running), the supermarket model's queue
(``StreamView.queue``). The agent thread keeps answering (gossip, forwards) while a job runs: the
runner is a second thread, so a long job does not silence the node's load monitor.

Messages (:mod:`.messages`). From the client: :class:`Submit` a job submitted here,
:class:`SubmitBatch` several; :class:`NodeDied` a node died, and the client asks which of the jobs it
still has at the dead node as their origin were forwarded here; ``Stop()``. From another node, over
the mesh: :class:`Forward` a job its origin placed here; :class:`Info` load entries. To the client:
:class:`Placed` this origin placed a job on another node (sent after the job); :class:`Started` jobs
started; :class:`Held` the answer about a dead node; :class:`Result` a job's result; :class:`Stats`
when it stops. Each but the last carries the jobs started here since this node's previous message.
"""

from __future__ import annotations

import contextlib
import copy
import pickle
import queue
import sys
import threading
import time
from typing import Any

import numpy as np


from dlbkit.families.stream.balancers import decide
from dlbkit.families.stream.model.seeding import STREAM
from dlbkit.model.seeding import streams
from dlbkit.families.stream.model.view import StreamView
from dlbkit.runtime.backends.base import COORDINATOR, error_message, pickled
from dlbkit.runtime.messages import Error, Stop
from dlbkit.families.stream.runtime.messages import Forward, Held, Info, NodeDied, Placed, Result, Started, Stats, Submit, SubmitBatch

__all__ = ["Agent", "serve", "MAX_SAMPLES"]

#: the node processes' GIL switch interval (s): the longest the agent thread waits while a job computes
SWITCH_INTERVAL_S = 0.0005
#: samples of (time, queue, view age) a node keeps (one per information round; older ones are thinned)
MAX_SAMPLES = 100_000


class Agent:
    """One node's daemon on *conn*, its connections to the client and to the other nodes (the
    backend's mesh: ``send``, ``send_to``, ``poll``, ``recv``, and ``drain`` on the local backend)."""

    def __init__(self, w: int, n: int, conn, origin: float, speeds: list[float], emulation, info, balancer,
                 seed: int, record_decisions: bool, suspect_after: float | None = None,
                 slots: list[int] | None = None):
        self.w, self.n, self.conn, self.origin = w, n, conn, origin
        self._send_raw = conn.send  # to the client at once (a result, the final statistics)
        self.slots = list(slots) if slots is not None else [1] * n
        self.speeds = speeds
        self.emulation = emulation
        self.lock = threading.Lock()  # the runner and the agent both send
        # the stream simulator's streams (dlbkit.families.stream.model.seeding.STREAM): its one balancer decides for
        # every origin from the "balancer" stream; here each node's balancer draws from its child w
        st = streams(int(seed), STREAM)
        rng_balancer = np.random.default_rng(st.seq("balancer").spawn(n)[w])
        # one stream for every node's copy of the information model, the simulator's "info": each copy
        # draws what the model would draw for all nodes, and this node sends its own part, so the
        # nodes' sends together are one round of the model (a selection that coordinates the nodes,
        # such as a permutation of peers, stays coordinated)
        rng_info = st.rng("info")
        self.model = copy.deepcopy(info)
        self.model.start(n, [[j for j in range(n) if j != i] for i in range(n)], [0] * n, rng_info)
        self.balancer = copy.deepcopy(balancer)
        self.rng = rng_balancer
        self.live = list(range(n))  # the nodes not known to be dead (the transport announces deaths)
        # the nodes of the view: the live ones whose entry is at most suspect_after old (all live ones
        # without suspect_after); a node that went silent drops out, and comes back with its next entry.
        # The age counts from this node's start at the earliest: a peer not heard from yet keeps the
        # stamp of the start's loads (run time 0, true: the tables' stamps are when a load was measured,
        # and the gossip merge compares them), but is suspected only suspect_after after this node
        # began to listen, so a node started late (spawn, imports under load) does not begin alone
        self.suspect_after = suspect_after
        self.began = self.now()  # run time (s) at which this node's agent began
        self.model.began_listening(w, self.began)  # a model that ages silence (scatter-4.3) counts from here
        self.members = list(self.live)
        self.suspected = 0  # times a node dropped out of this node's view by age
        self.decisions: list | None = [] if record_decisions else None
        self.enq = 0  # jobs queued here so far (written by the agent thread only)
        self.done = 0  # jobs finished here so far (written by the runner threads, under self.lock)
        self.sent_messages = 0
        self.sent_bytes = 0.0
        self.forwarded = 0
        self.samples: list[tuple[float, int, float]] = []
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        # jobs started since the last message to the client, (jid, run time): piggybacked on the next
        # Placed or Result, or sent alone (Started) at the next information round (guarded by
        # self.lock, as the sends are)
        self.started: list[tuple[int, float]] = []
        # the jobs other nodes forwarded here whose result has not gone yet (job → its origin): what
        # this node answers when the client asks, after an origin's death, which of its jobs had
        # already left it (Held). A job leaves it with its result: the result goes to the client on the
        # same pipe before any later answer, so the client has it first (guarded by self.lock)
        self.received: dict[int, int] = {}
        self.stopped = False  # after STOP nothing more is sent (under MPI the client may be gone)
        self.balancer.start(self._view(0.0), self.rng)
        # one runner thread per slot: threads, so a job that computes in Python shares this process's
        # GIL with the node's other slots (parallel only while jobs release it: I/O, sleeps, numpy, the
        # emulation's stretch); docs/cluster.md, "Slots"
        self.runners = [threading.Thread(target=self._run_jobs, name=f"dlbkit-node-{w}-runner-{i}", daemon=True)
                        for i in range(self.slots[w])]
        for r in self.runners:
            r.start()

    # --- time, load, view -----------------------------------------------------------------------------
    def now(self) -> float:
        return time.perf_counter() - self.origin

    def load(self) -> int:
        return self.enq - self.done

    def tell_client(self, kind: type, *fields) -> None:
        """Send a message of *kind* (:class:`Placed`, :class:`Started`, :class:`Held`) with *fields*
        to the client after everything posted before it (on the local backend; under MPI messages
        keep their order per destination only), with the jobs started since the last message
        (piggybacked). A :class:`Result` goes at once instead, by the runner thread: the client
        takes messages about a job it has settled as stale, so their relative order does not matter."""
        with self.lock:
            self.conn.send_to(COORDINATOR, kind(*fields, self._started()))

    def _started(self) -> list[tuple[int, float]]:
        out, self.started = self.started, []
        return out

    def _view(self, t: float) -> StreamView:
        values: list = []
        stamps: list = []
        self.model.fill(self.w, t, self.load(), values, stamps, integer=True)
        members = self.live
        if self.suspect_after is not None:
            members = [j for j in self.live if j == self.w or t - max(stamps[j], self.began) <= self.suspect_after]
        view = StreamView(len(members), queue=[int(values[j]) for j in members], slots=[self.slots[j] for j in members],
                          speeds=[self.speeds[j] for j in members], time=t, node=members.index(self.w),
                          updated_at=[float(stamps[j]) for j in members])
        if members != self.members:  # the view's nodes changed: the balancer starts again on it
            self.suspected += len(set(self.members) - set(members) - (set(range(self.n)) - set(self.live)))
            self.members = list(members)
            self.balancer.start(view, self.rng)
        return view

    # --- the scheduler and the dispatcher ------------------------------------------------------------------
    def place(self, jobs: list[tuple[int, bytes]]) -> None:
        """Place *jobs*, which arrived here (one job: ``place``; several: the batch rule)."""
        view = self._view(self.now())
        nodes = decide.place(self.balancer, view, len(jobs), record=self.decisions)
        for (jid, payload), k in zip(jobs, nodes):
            node = self.members[k]
            if node == self.w:
                self.enqueue(jid, payload)
            else:
                # to its node directly, then the notice to the client, in this order: should this node
                # die between the two, the client still finds the job (it asks the survivors: Held)
                self.forwarded += 1
                self.conn.send_to(node, Forward(jid, payload, self.w))
                self.tell_client(Placed, jid, node)

    def enqueue(self, jid: int, payload: bytes) -> None:
        self.enq += 1
        self.jobs.put((jid, payload))

    def _run_jobs(self) -> None:
        """A runner thread (one per slot): run queued jobs one at a time; send each result (or error)."""
        while True:
            item = self.jobs.get()
            if item is None:
                return
            jid, payload = item
            t_start = time.perf_counter()
            with self.lock:
                self.started.append((jid, t_start - self.origin))
            try:
                fn, args, kwargs = pickle.loads(payload)
                value = fn(*args, **kwargs)
                t_busy = time.perf_counter()
                if self.emulation is not None:
                    self.emulation.stretch(self.w, self.origin, t_start, t_busy)
                try:
                    data: Any = pickle.dumps(value)
                    ok = True
                except Exception as e:  # noqa: BLE001 - an unpicklable result reaches the caller as its error
                    data = Error(index=jid, exception=pickled(e), traceback=f"the result of job {jid} cannot be "
                                 f"pickled to cross to the client: {type(e).__name__}: {e}\n")
                    ok = False
            except BaseException as e:  # noqa: BLE001 - the user's exception goes to that job's future
                t_busy = time.perf_counter()
                data, ok = error_message(jid, e), False
            t_end = time.perf_counter()
            o = self.origin
            with self.lock:
                self.done += 1  # several runners
                self.received.pop(jid, None)  # its result goes now: the client will have it before any answer
                if self.stopped:
                    return
                self._send_raw(Result(jid, ok, data, t_start - o, t_busy - o, t_end - o, self._started()))

    # --- the load monitor ----------------------------------------------------------------------------------
    def info_round(self, t: float) -> None:
        m = self.model
        loads = m.values_[self.w].copy()
        loads[self.w] = self.load()
        for msg in m.round(t, loads):
            if msg.src == self.w and msg.dst in self.live:
                self.sent_messages += 1
                self.sent_bytes += msg.bytes
                self.conn.send_to(int(msg.dst), Info(msg), droppable=True)  # the next round replaces it
        if self.started:  # unlocked peek; the list is taken under the lock
            self.tell_client(Started)
        self.sample(t)

    def sample(self, t: float) -> None:
        others = [j for j in self.live if j != self.w]
        age = float(np.mean(t - self.model.stamps_[self.w, others])) if others else 0.0
        if len(self.samples) >= MAX_SAMPLES:
            self.samples = self.samples[::2]
        self.samples.append((t, self.load(), age))

    def deliver(self, msg) -> None:
        """Merge load entries that reached this node (an :class:`~dlbkit.info.base.InfoMessage`; the
        runtime imports no module of the info layer, it only carries the model's own messages)."""
        self.model.deliver(msg)

    def dead(self, node: int, asked: list[int]) -> None:
        """*node* died: it leaves this node's view (the balancer restarts on the smaller view). First
        take everything it sent that is still on its way here (the backend's ``drain``: its pipe,
        up to its end), then tell the client which of the jobs it *asked* about (those it believed
        still at the dead node) that node had forwarded here (:class:`Held`): those are here, not lost."""
        if node in self.live and node != self.w:
            for msg in self.conn.drain(node):
                if type(msg) in (Forward, Info):
                    self.handle(msg)
            self.live.remove(node)
            self._view(self.now())  # the view's nodes change: the balancer starts again
        with self.lock:
            held = [j for j in asked if self.received.get(j) == node]
        self.tell_client(Held, node, held)  # always an answer: the client waits for every survivor's

    # --- the daemon's loop ---------------------------------------------------------------------------------
    def handle(self, msg: tuple) -> bool:
        """Act on one message; False on :class:`~dlbkit.runtime.messages.Stop`."""
        kind = type(msg)
        if kind is Submit:
            self.place([(msg.jid, msg.payload)])
        elif kind is Forward:
            with self.lock:
                self.received[msg.jid] = msg.origin
            self.enqueue(msg.jid, msg.payload)
        elif kind is Info:
            self.deliver(msg.message)
        elif kind is SubmitBatch:
            self.place(list(msg.jobs))
        elif kind is NodeDied:
            self.dead(msg.node, msg.asked)
        elif kind is Stop:
            return False
        return True

    def stats(self) -> dict:
        return {"node": self.w, "samples": self.samples, "messages": self.sent_messages, "bytes": self.sent_bytes,
                "forwarded": self.forwarded, "suspected": self.suspected, "decisions": self.decisions, "age_sum": self.model.age_sum_,
                "age_count": self.model.age_count_}

    def stop(self) -> None:
        for _ in self.runners:
            self.jobs.put(None)
        with self.lock:
            self.stopped = True
            self._send_raw(Stats(self.stats()))


def serve(conn, w: int, n: int, origin: float, speeds: list[float], emulation, info, balancer, seed: int,
          record_decisions: bool, suspect_after: float | None = None, slots: list[int] | None = None) -> None:
    """A node's process: its daemon on its connection to the client (a pipe end, or an MPI rank's)."""
    # the runner thread holds the GIL while a job computes; the agent thread gets it at each switch
    # interval, which is how late a message (a job to place, a load entry) is read: 5 ms by default
    with _fast_switching():
        _serve(conn, w, n, origin, speeds, emulation, info, balancer, seed, record_decisions, suspect_after, slots)


_switching = {"nodes": 0, "before": 0.0}
_switching_lock = threading.Lock()


@contextlib.contextmanager
def _fast_switching():
    """The process's switch interval at :data:`SWITCH_INTERVAL_S` while a node runs in it, set back when
    the last node in it ends (on a Dask worker the process outlives its nodes, and threads of one
    process may be several nodes)."""
    with _switching_lock:
        if _switching["nodes"] == 0:
            _switching["before"] = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        _switching["nodes"] += 1
    try:
        yield
    finally:
        with _switching_lock:
            _switching["nodes"] -= 1
            if _switching["nodes"] == 0:
                sys.setswitchinterval(_switching["before"])


def _serve(conn, w, n, origin, speeds, emulation, info, balancer, seed, record_decisions, suspect_after,
           slots) -> None:
    agent = Agent(w, n, conn, origin, speeds, emulation, info, balancer, seed, record_decisions, suspect_after,
                  slots)
    period = agent.model.interval
    next_round = period
    try:
        while True:
            timeout = None if period == float("inf") else max(0.0, next_round - agent.now())
            if conn.poll(timeout):
                if not agent.handle(conn.recv()):
                    break
            t = agent.now()
            if t >= next_round:
                agent.info_round(t)
                next_round += period
                if next_round <= t:  # a late round is not repeated to catch up
                    next_round = t + period
        agent.stop()
    except (EOFError, OSError):  # the client is gone: so is this node (its watchdog would end it anyway)
        return
