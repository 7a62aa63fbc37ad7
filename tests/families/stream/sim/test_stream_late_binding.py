"""Sparrow's late binding (``batch-sampling`` with ``late_binding=true``) on the stream engine: a
hand-worked run, conservation and FIFO order per node (hypothesis), same seed same trace, and the
cases it refuses."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, make
from dlbkit.families.stream.balancers.batch_sampling import BatchSampling
from dlbkit.face.cli import main
from dlbkit.model import Network, Node, Platform, Pulse
from dlbkit.families.stream.model.workload import Demand, Stream
from dlbkit.families.stream.sim.engine import simulate_stream

from support.profiles import examples
from support.streams import check_served_once_fifo


def two_nodes(latency=0.1):
    """a (speed 0.1) and b (speed 1), each with one background task of 1 unit: a busy until 10, b until 1."""
    p = Platform([Node("a", speed=0.1), Node("b", speed=1.0)], Network(latency=latency))
    return p, dict(initial=[1, 1], initial_demand=Demand("deterministic", 1.0))


def test_late_binding_by_hand():
    """One task (1 unit) arrives at a at t = 0; d·m = 2 ≥ n, so both nodes get a reservation. b's reaches
    b at 0.1 and waits behind b's background task; at t = 1 it takes b's slot and asks a (arrives 1.1);
    the task travels to b (1.2) and runs 1 s: done at 2.2, whatever the tie of the queue lengths (1, 1)
    at t = 0. a's reservation (local) reaches a's slot at 10 and is cancelled (no task left).
    Messages: the probe to b, b's request, the task (moved); a's are local."""
    p, init = two_nodes()
    w = Stream(trace=[(0.0, 0, 1.0)], **init)
    r = dlbkit.simulate(p, w, "batch-sampling", params={"late_binding": True}, seed=0, warmup=0.0)
    assert r.trace.series["job_done"].tolist() == pytest.approx([2.2], abs=1e-12)
    assert r.metrics["tasks_moved"] == 1 and r.metrics["messages"] == 3
    iv = r.trace.intervals()
    mine = iv["first"] == 0
    assert iv["node"][mine].tolist() == [1] and iv["t_ask"][mine].tolist() == pytest.approx([0.1])  # its reservation's
    assert iv["t_start"][mine].tolist() == pytest.approx([1.2])
    assert r.trace.end_time == pytest.approx(10.0)  # a's background task; the cancel frees a's slot then
    # early binding decides on the tie at t = 0: sometimes the slow node (done at 20)
    early = {float(dlbkit.simulate(p, w, "batch-sampling", seed=s, warmup=0.0).trace.series["job_done"][0])
             for s in range(8)}
    assert early == {2.0, 20.0}


def test_a_batch_binds_its_tasks_to_the_first_free_reservations():
    """Two tasks of 1 unit from a at t = 0, three idle nodes of speed 1, no latency: d·m = 4 ≥ 3, every node
    gets a reservation; a's own and the first other get the two tasks at once; the third is cancelled."""
    p = Platform([Node(x, speed=1.0) for x in "abc"], Network(latency=0.0))
    r = dlbkit.simulate(p, Stream(trace=[(0.0, 0, 1.0, 2)]), "batch-sampling", params={"late_binding": True},
                        seed=0, warmup=0.0)
    iv = r.trace.intervals()
    assert sorted(iv["first"].tolist()) == [0, 1] and iv["t_end"].tolist() == [1.0, 1.0]
    assert len(set(iv["node"].tolist())) == 2 and r.trace.series["job_done"].tolist() == [1.0]


def hetero(n=5):
    return Platform([Node(f"n{i}", speed=1.0 + (i % 3), cores=1 + (i % 2),
                          availability=Pulse(start=2.0, duration=5.0, level=0.3) if i == 0 else 1.0)
                     for i in range(n)], Network(latency=1e-3, bandwidth=1e6))


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**20), width=st.integers(1, 4), rate=st.floats(0.05, 2.0), d=st.integers(1, 3),
       info=st.sampled_from([None, {"model": "gossip", "period": 0.5}]))
def test_late_binding_conserves_jobs_and_keeps_fifo_order(seed, width, rate, d, info):
    """Every task served once, at most `cores` at a time, in the order its reservation reached the node
    up to a round trip (2 × the latency 1 ms; hypothesis found the case: a local origin's task starts at
    once, a remote one's a round trip after its slot was claimed); a job ends with its last task."""
    p = hetero()
    w = Stream(rates=rate, jobs=40, width=width, demand=Demand("lognormal", mean=0.7, sigma=0.5))
    tr = simulate_stream(p, w, make("batch-sampling", {"d": d, "late_binding": True}), seed=seed, info=info)
    check_served_once_fifo(tr, 40 * width, [nd.cores for nd in p.nodes], round_trip=2e-3)


def test_late_binding_same_seed_same_trace():
    p = hetero()
    w = Stream(rates=0.8, jobs=200, width=3)
    a, b, c = (simulate_stream(p, w, make("batch-sampling", {"late_binding": True}), seed=s) for s in (4, 4, 5))
    for col in ("node", "t_start", "t_end"):
        assert getattr(a, col) == getattr(b, col)
    assert a.t_end != c.t_end


def test_late_binding_needs_fifo_service_and_a_boolean():
    p = hetero()
    with pytest.raises(ConfigError, match="engine.service"):
        simulate_stream(p, Stream(rates=0.5, jobs=10), make("batch-sampling", {"late_binding": True}), service="ps")
    with pytest.raises(ConfigError, match="late_binding"):
        make("batch-sampling", {"late_binding": "yes"})


def test_without_late_binding_nothing_changes():
    """The default (early binding) gives the same trace as before the option existed: the engine's
    late-binding rules are never reached (and the fast path still applies where it did)."""
    w = Stream(rates=0.9, jobs=2000)
    a = simulate_stream(50, w, make("batch-sampling"), seed=1, samples=0, record=False)
    b = simulate_stream(50, w, make("batch-sampling", {"late_binding": False}), seed=1, samples=0, record=False)
    assert a.meta["path"] == b.meta["path"] == "fast" and a.meta["queue_mean"] == b.meta["queue_mean"]
    late = simulate_stream(50, w, make("batch-sampling", {"late_binding": True}), seed=1, samples=0, record=False)
    assert late.meta["path"] == "kernel (late binding)"
    assert np.isfinite(late.series["job_done"]).all()


def test_late_binding_from_an_experiment_file(tmp_path):
    p = tmp_path / "e.toml"
    p.write_text("""name = "s"
[platform]
nodes = [{name = "a", speed = 1.0, cores = 2}, {name = "b", speed = 2.0}, {name = "c", speed = 1.0}]
[workload]
kind = "stream"
rates = 0.5
jobs = 50
width = 2
[[balancers]]
name = "batch-sampling"
params = {late_binding = true}
""")
    assert main(["simulate", str(p), "--out", str(tmp_path / "o"), "--no-progress"]) == 0


@pytest.mark.parametrize("warmup", [0.0, 0.3])
@pytest.mark.parametrize("late", [False, True])
def test_queue_mean_is_the_integral_of_the_trace_intervals(late, warmup):
    """queue_mean is ∫ (tasks in the system) dt / (window × n) between the warm-up job's arrival and the
    last arrival; a task is in the system from its t_ask (with late binding: when its reservation reached
    the node, though the engine learns which reservation it took only at the bind) to its t_end."""
    p = Platform([Node(f"n{i}", speed=1.0) for i in range(10)], Network(latency=0.05))
    w = Stream(rates=0.3, jobs=3000, width=2)
    tr = simulate_stream(p, w, BatchSampling(d=2, late_binding=late), seed=3, warmup=warmup, samples=0)
    ta, te = np.asarray(tr.t_ask), np.asarray(tr.t_end)
    t0, t1 = tr.series["job_time"][tr.meta["warmup_job"]], tr.series["job_time"][-1]
    integral = (np.clip(te, t0, t1) - np.clip(ta, t0, t1)).sum() / (t1 - t0) / 10
    assert tr.meta["queue_mean"] == pytest.approx(integral, rel=1e-9)


def test_a_job_wider_than_the_platform_gets_a_reservation_per_task():
    """3 nodes, jobs of 4 tasks, d = 2: 8 reservations per job (each node twice, two drawn nodes a third
    time); every task is served exactly once and every job ends."""
    p = Platform([Node(x, speed=1.0) for x in "abc"], Network(latency=0.01))
    bs = BatchSampling(d=2, late_binding=True)
    w = Stream(rates=0.2, jobs=50, width=4)
    tr = simulate_stream(p, w, bs, seed=2, warmup=0.0)
    check_served_once_fifo(tr, 200, [1, 1, 1], round_trip=2 * 0.01)
    from dlbkit.families.stream.model.view import StreamView
    view = StreamView(3, queue=[0] * 3, slots=[1] * 3, speeds=[1.0] * 3, updated_at=[0.0] * 3)
    bs.start(view, np.random.default_rng(0))
    probes = bs.probes(view, 4)
    assert len(probes) == 8 and sorted(probes.count(j) for j in range(3)) == [2, 3, 3]


def test_late_binding_refuses_to_record_decisions():
    """Late binding's reservations go through probes(), not decide.place: a run asked to record decisions
    would record none, so the combination is refused, naming both options."""
    with pytest.raises(ConfigError, match="engine.record_decisions.*late_binding"):
        simulate_stream(hetero(), Stream(rates=0.5, jobs=10), make("batch-sampling", {"late_binding": True}),
                        record_decisions=True)
    tr = simulate_stream(hetero(), Stream(rates=0.5, jobs=10), make("batch-sampling"), record_decisions=True)
    assert len(tr.decisions) == 10


def test_messages_between_distinct_nodes_count_without_latency():
    """On a node-count platform (no latency): one task from node 0, d = 3 on 3 nodes, so the probes are
    all 3 nodes. Node 0's reservation (local) takes the task; nodes 1 and 2 each get a probe, send a
    request and receive a cancel: 6 messages, though none takes time; no task moved."""
    tr = simulate_stream(3, Stream(trace=[(0.0, 0, 1.0)]), make("batch-sampling", {"d": 3, "late_binding": True}),
                         seed=0, warmup=0.0)
    assert tr.messages == 6 and tr.node == [0] and tr.t_end == [1.0]
