"""The cluster's nodes talk to one another directly (the backends' mesh), and the client only holds
the futures: it relays nothing, and a node that dies between handing a job to another node and
telling the client loses nothing and runs nothing twice (docs/cluster.md, "Where the decisions run"
and "Faults").
"""

from __future__ import annotations

import pickle
import time

import pytest

import dlbkit
from dlbkit.balancers.registry import resolve
from dlbkit.info import resolve as resolve_info
from dlbkit.runtime.backends.base import COORDINATOR
from dlbkit.runtime.backends.local import LocalTransport, max_workers
from dlbkit.families.stream.runtime.program import ClusterRun
from dlbkit.families.stream.runtime.agent import Agent
from dlbkit.families.stream.runtime.messages import (Forward, Held, Info, NodeDied, Placed, Result, Started, Stats,
                                                     Submit)
from dlbkit.runtime.messages import Died, Stop


def nap(x, s=0.01):
    time.sleep(s)
    return x


def test_the_client_relays_nothing(monkeypatch):
    seen: list[type] = []
    handle = ClusterRun._handle

    def spy(self, k, msg):
        seen.append(type(msg))
        handle(self, k, msg)

    monkeypatch.setattr(ClusterRun, "_handle", spy)
    with dlbkit.Cluster(3, balancer="round-robin-place", info={"model": "gossip", "period": 0.005}, seed=2) as c:
        got = [f.result(timeout=60) for f in [c.submit(nap, i) for i in range(60)]]
    assert got == list(range(60))
    tr = c.result().trace
    # round-robin placement forwards two jobs of three; gossip sent load messages between the nodes
    assert tr.meta["tasks_moved"] == seen.count(Placed) > 0 and tr.info_messages > 0
    assert set(seen) <= {Result, Placed, Started, Stats}  # results, placement notices, starts: no load message, no job
    assert seen.count(Result) == 60


def _probe(conn, w):
    """Worker 0 sends worker 1 two messages and ends; worker 1, told to, takes what it has not read
    with ``drain`` (up to the dead worker's end of file) and reports all it got from worker 0, with
    the seconds the drain waited; worker 2 waits."""
    if w == 0:
        conn.send_to(1, ("m", 1))
        conn.send_to(1, ("m", 2))
        conn.send_to(COORDINATOR, ("sent",))  # after both: the messages are written
        return
    seen = []  # what worker 1 read before the drain (recv takes every peer's messages too)
    while True:
        msg = conn.recv()
        if type(msg) is Stop:
            return
        if msg[0] == "m":
            seen.append(msg)
        if msg[0] == "drain":
            t = time.perf_counter()
            got = conn.drain(0, timeout=60.0)
            conn.send(("drained", seen + got, time.perf_counter() - t))


@pytest.mark.parametrize("start_method", ["fork", "spawn"])
def test_a_dead_workers_pipes_end_for_its_peers(start_method):
    # three workers: were worker 2 to keep a copy of worker 0's end (forked workers inherit every
    # pipe), worker 1 would never see the end of file and drain would wait its whole timeout
    tr = LocalTransport(3, _probe, start_method=start_method, mesh=True)
    try:
        assert tr.recv(timeout=60) == (0, ("sent",))
        w, msg = tr.recv(timeout=60)
        assert w == 0 and type(msg) is Died  # worker 0 has ended
        tr.send(1, ("drain",))
        w, (tag, got, waited) = tr.recv(timeout=90)
        assert (w, tag, got) == (1, "drained", [("m", 1), ("m", 2)])
        assert waited < 30.0  # the end of file came: no wait for the 60 s timeout
        for k in (1, 2):
            tr.send(k, Stop())
    finally:
        tr.stop()


def test_a_mesh_bounds_the_workers_by_descriptors():
    import resource
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    n, why = max_workers(mesh=True)
    assert 2 * n + n * (n - 1) <= soft - 64 < 2 * (n + 1) + (n + 1) * n  # the largest that fits
    assert "pair" in why or n == max_workers()[0]


# --- the client's side of a death, message by message ----------------------------------------------
def _run(n: int = 3) -> ClusterRun:
    run = ClusterRun(n, resolve("round-robin-place", None, kind="placement"), resolve_info("gossip"), seed=0)
    run.n, run.live = n, list(range(n))  # as coordinate() sets them, with no process started
    return run


def _posted(run: ClusterRun) -> list[tuple[int, tuple]]:
    out = []
    while not run.outbox.empty():
        out.append(run.outbox.get())
    return out


def test_a_dead_origins_jobs_are_asked_about_then_resubmitted_unless_a_survivor_holds_them():
    run = _run()
    futures = [run.submit([pickle.dumps((nap, (i,), {}))], origin=0)[0] for i in range(4)]
    run._handle(1, Placed(3, 1, []))  # job 3: its origin 0 placed it on node 1 (and said so)
    _posted(run)
    run._handle(0, Died(exitcode=-9))
    posted = _posted(run)
    # jobs 0–2 may have left node 0 just before it died: both survivors are asked, nothing resubmitted yet
    assert sorted(posted) == [(1, NodeDied(0, [0, 1, 2])), (2, NodeDied(0, [0, 1, 2]))]
    assert {type(m) for _, m in posted} == {NodeDied}
    run._handle(1, Held(0, [1], []))  # node 1 got job 1 from node 0 before it died
    assert _posted(run) == [] and run.jobs[1].node == 1 and run.jobs[1].state == "placed"
    run._handle(2, Held(0, [], []))
    again = _posted(run)
    assert sorted(m.jid for _, m in again) == [0, 2] and {type(m) for _, m in again} == {Submit}
    assert all(k in (1, 2) for k, _ in again)
    assert [j.resubmitted for j in run.jobs] == [1, 0, 1, 0]
    assert not any(f.done() for f in futures)


def test_a_survivor_that_dies_before_answering_is_not_waited_for():
    run = _run()
    run.submit([pickle.dumps((nap, (0,), {}))], origin=0)
    run._handle(0, Died(exitcode=-9))
    _posted(run)
    run._handle(2, Died(exitcode=-9))  # node 2 will never answer about node 0
    assert [m for _, m in _posted(run) if type(m) is Submit] == []  # node 1 has not answered yet
    run._handle(1, Held(0, [], []))
    assert [(k, type(m), m.jid) for k, m in _posted(run)] == [(1, Submit, 0)]  # the only survivor


def test_a_job_placed_on_a_node_that_dies_is_resubmitted_at_once():
    run = _run()
    run.submit([pickle.dumps((nap, (0,), {}))], origin=0)
    run._handle(0, Placed(0, 2, []))
    _posted(run)
    run._handle(2, Died(exitcode=-9))
    assert [m.jid for _, m in _posted(run) if type(m) is Submit] == [0]


def test_a_start_heard_before_its_placement_notice_is_kept():
    run = _run()
    run.submit([pickle.dumps((nap, (0,), {}))], origin=0)
    run._handle(2, Started([(0, 1.25)]))  # node 2 says it started job 0: its origin's notice is late
    assert run.jobs[0].state == "submitted"
    run._handle(0, Placed(0, 2, []))
    assert (run.jobs[0].state, run.jobs[0].node, run.jobs[0].started) == ("running", 2, 1.25)


# --- the node's side: what it answers about a dead node --------------------------------------------
class _Conn:
    """A node's connections, recorded (the backend's mesh is tested above)."""

    def __init__(self, late):
        self.late, self.out = late, []

    def send(self, msg):
        self.out.append((COORDINATOR, msg))

    def send_to(self, dst, msg):
        self.out.append((dst, msg))

    def drain(self, peer):
        return self.late.pop(peer, [])


def test_a_node_answers_which_of_the_dead_nodes_jobs_it_holds():
    job = pickle.dumps((nap, (0, 0.0), {}))
    conn = _Conn({0: [Forward(7, job, 0)]})  # job 7 was still in node 0's pipe when it died
    agent = Agent(1, 3, conn, time.perf_counter(), [1.0] * 3, None, resolve_info("gossip"),
                  resolve("round-robin-place", None, kind="placement"), 0, False)
    try:
        agent.handle(Forward(5, job, 0))  # job 5 arrived from node 0 before its death
        agent.handle(Forward(6, job, 2))  # job 6 from node 2: not asked about
        agent.handle(NodeDied(0, [5, 7, 9]))  # the client believes 5, 7 and 9 were still at node 0
        answers = [m for dst, m in conn.out if dst == COORDINATOR and type(m) is Held]
        assert [(m.dead, m.jobs) for m in answers] == [(0, [5, 7])]
        assert agent.live == [1, 2] and agent.enq == 3  # 5, 6 and the drained 7 are queued here
    finally:
        agent.stop()


def test_a_silent_survivor_holds_up_the_resubmission_only_until_the_answers_are_due(monkeypatch):
    import dlbkit.families.stream.runtime.program as client
    monkeypatch.setattr(client, "ANSWER_WAIT_S", 0.0)
    run = _run()
    run.submit([pickle.dumps((nap, (0,), {}))], origin=0)
    _posted(run)  # the submission itself
    run._handle(0, Died(exitcode=-9))
    run._handle(1, Held(0, [], []))  # node 2 never answers (stopped, starved)
    assert [m for _, m in _posted(run) if type(m) is Submit] == []
    run._overdue()
    assert [m.jid for _, m in _posted(run) if type(m) is Submit] == [0] and run.asking == {}


def test_a_start_heard_before_the_answer_that_finds_the_job_is_kept():
    run = _run()
    run.submit([pickle.dumps((nap, (0,), {}))], origin=0)
    run._handle(0, Died(exitcode=-9))
    run._handle(1, Started([(0, 2.5)]))  # node 1 started job 0, which node 0 had forwarded it
    run._handle(1, Held(0, [0], []))
    assert (run.jobs[0].state, run.jobs[0].node, run.jobs[0].started) == ("running", 1, 2.5)


def test_a_node_forgets_a_forwarded_job_once_its_result_is_sent():
    job = pickle.dumps((nap, (0, 0.0), {}))
    conn = _Conn({})
    agent = Agent(1, 3, conn, time.perf_counter(), [1.0] * 3, None, resolve_info("gossip"),
                  resolve("round-robin-place", None, kind="placement"), 0, False)
    try:
        agent.handle(Forward(5, job, 0))
        deadline = time.perf_counter() + 30
        while not any(type(m) is Result for _, m in conn.out) and time.perf_counter() < deadline:
            time.sleep(0.01)
        assert agent.received == {}  # the result went: the client has it before any later answer
        agent.handle(NodeDied(0, [5]))
        assert [(m.dead, m.jobs) for _, m in conn.out if type(m) is Held] == [(0, [])]
    finally:
        agent.stop()


# --- the local mesh's connection: its sender thread outlives a dead or stalled peer ------------------
def _mesh():
    import multiprocessing as mp

    from dlbkit.runtime.backends.local_mesh import MeshConn
    coord, coord_far = mp.Pipe(duplex=True)
    peer, peer_far = mp.Pipe(duplex=True)
    return MeshConn(coord, {1: peer}, 0), coord_far, peer_far


def test_the_sender_outlives_a_peer_that_dies_mid_write():
    conn, coord, peer = _mesh()
    try:
        conn.send_to(1, Forward(0, b"x" * (8 << 20), 1))  # far more than the pipe holds: the write blocks
        time.sleep(0.2)
        peer.close()  # the peer dies with the job half written
        conn.send_to(COORDINATOR, Placed(0, 1, []))
        got = coord.recv() if coord.poll(10.0) else None
        assert type(got) is Placed and got == (0, 1, [])  # the sender thread still works
        # the failed write is behind us (messages leave in order): the reader still waits on the dead
        # peer's pipe, reads its end of file and takes nothing (the sender used to close the pipe
        # under the reader: "handle is closed", seen once in a full run)
        assert conn.poll(2.0) is False
    finally:
        conn.close()
        coord.close()


def test_load_messages_to_a_peer_that_stopped_reading_are_dropped_not_queued():
    conn, coord, peer = _mesh()
    try:
        for k in range(20_000):  # ~300 B each: far more than the pipe holds
            conn.send_to(1, Info(b"y" * 300), droppable=True)
        conn.send_to(COORDINATOR, Held(0, [], []))
        got = coord.recv() if coord.poll(30.0) else None
        assert type(got) is Held and got == (0, [], [])  # not held up behind the stalled peer
        assert conn.dropped > 0
        got = 0
        while peer.poll(0.5):
            peer.recv()
            got += 1
        assert got + conn.dropped == 20_000  # each load message either written whole or dropped
    finally:
        conn.close()
        coord.close()
        peer.close()
