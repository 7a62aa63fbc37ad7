"""The stream engine: every task served once, FIFO per node within its slots, same seed same trace,
the inlined decision equals decide.place's, information models, and the supermarket model's mean queue."""


import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, make
from dlbkit.families.stream.model.workload import Burst, Demand, Stream
from dlbkit.families.stream.sim.engine import simulate_stream
from dlbkit.model import Network, Node, Platform, Pulse

from support.profiles import examples
from support.streams import check_served_once_fifo


def hetero(n=6, latency=1e-3):
    return Platform([Node(f"n{i}", speed=1.0 + i % 3, cores=1 + i % 2,
                          availability=Pulse(start=2.0, duration=5.0, level=0.3) if i == 0 else 1.0)
                     for i in range(n)], Network(latency=latency, bandwidth=1e6))


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**20), width=st.integers(1, 4), rate=st.floats(0.05, 2.0),
       balancer=st.sampled_from(["power-of-d", "nezha", "jsq", "round-robin-place", "hybrid-batch", "speed-d", "jiq",
                                 "batch-sampling"]),
       kind=st.sampled_from(["exponential", "deterministic", "lognormal"]))
def test_jobs_are_conserved_and_each_node_serves_fifo_within_its_slots(seed, width, rate, balancer, kind):
    p = hetero()
    w = Stream(rates=rate, jobs=60, width=width, demand=Demand(kind, mean=0.7, sigma=0.5))
    tr = simulate_stream(p, w, make(balancer), seed=seed, samples=5)
    check_served_once_fifo(tr, 60 * width, [n.cores for n in p.nodes])


def test_a_recorded_trace_runs_as_given():
    p = hetero(3, latency=0.0)
    rows = [(0.0, "n0", 1.0, 1), (0.5, 1, 2.0, 2), (0.5, "n2", 0.5, 1), (3.0, 0, 1.0, 1)]
    tr = simulate_stream(p, Stream(trace=rows), make("local"), samples=0)
    check_served_once_fifo(tr, 5, [1, 2, 1])
    assert tr.series["job_time"].tolist() == [0.0, 0.5, 0.5, 3.0]
    assert tr.intervals()["node"].tolist().count(1) == 2


def test_same_seed_same_trace_and_another_seed_another():
    p = hetero()
    w = Stream(rates=0.8, jobs=300, width=2, bursts=(Burst(5.0, 10.0, 3.0),))
    a, b, c = (simulate_stream(p, w, make("nezha"), seed=s) for s in (4, 4, 5))
    for col in ("node", "t_start", "t_end"):
        assert getattr(a, col) == getattr(b, col)
    assert a.t_end != c.t_end


@pytest.mark.parametrize("name", ["power-of-d", "jsq", "nezha", "random-place"])
def test_the_inlined_decision_gives_decide_places_trace(name):
    p = hetero()
    w = Stream(rates=0.6, jobs=400)
    a = simulate_stream(p, w, make(name), seed=2, inline=True)
    b = simulate_stream(p, w, make(name), seed=2, inline=False)
    assert a.node == b.node and a.t_end == b.t_end


def test_recorded_decisions_replay_through_decide_place():
    p = hetero()
    tr = simulate_stream(p, Stream(rates=0.5, jobs=50, width=3), make("hybrid-batch"), seed=1, record_decisions=True)
    assert len(tr.decisions) == 50
    from dlbkit.families.stream.balancers import decide
    for d in tr.decisions[:5]:
        assert d.hook == "place" and len(d.answer) == 3 and d.view.node == d.node
    # a deterministic rule's recorded views, replayed in order through decide.place, give its answers
    tr = simulate_stream(p, Stream(rates=0.5, jobs=50, width=3), make("round-robin-place"), seed=1,
                         record_decisions=True)
    b = make("round-robin-place")
    b.start(copy.deepcopy(tr.decisions[0].view))
    assert [decide.place(b, copy.deepcopy(d.view), 3) for d in tr.decisions] == [list(d.answer) for d in tr.decisions]
    assert len({tuple(d.answer) for d in tr.decisions}) > 1


def test_bursts_raise_the_arrival_rate_inside_the_window():
    w = Stream(rates=1.0, jobs=30000, bursts=(Burst(1000.0, 2000.0, 4.0),))
    t = w.arrivals([str(i) for i in range(2)], np.random.default_rng(0)).time
    inside = ((t >= 1000) & (t < 2000)).sum()
    before = (t < 1000).sum()
    assert inside / before == pytest.approx(4.0, rel=0.1)


def test_gossip_information_costs_messages_and_ages_the_view():
    p = hetero()
    w = Stream(rates=0.5, jobs=300)
    ex = dlbkit.simulate(p, w, "power-of-d", seed=1).metrics
    go = dlbkit.simulate(p, w, "power-of-d", seed=1, info={"model": "gossip", "period": 0.5}).metrics
    assert ex["info_messages"] == 0 and go["info_messages"] > 0 and go["info_bytes"] > 0
    assert go["info_age_mean"] > 0
    nb = dlbkit.simulate(p, w, "jsq", seed=1, info={"model": "neighbour", "period": 0.5}).metrics
    assert nb["info_messages"] > 0


def test_periodic_information_is_refused_naming_why():
    with pytest.raises(ConfigError, match="info.model must be a model that tells every node the loads"):
        simulate_stream(hetero(), Stream(rates=0.5, jobs=10), make("jsq"), info="periodic")


def test_metrics_and_figures_of_a_run():
    r = dlbkit.simulate(hetero(), Stream(rates=0.5, jobs=400), "nezha", seed=0)
    m = r.metrics
    assert m["response_p50"] <= m["response_p95"] <= m["response_p99"]
    assert m["slowdown_mean"] >= 1.0 - 1e-9  # a job never beats its longest task alone at full speed
    assert 0 < m["utilisation"] < 1 and m["throughput"] > 0 and m["queue_max"] >= 1
    assert m["queue_maxdiff"] >= 0
    figs = r.figures()
    assert set(figs) == {"queues", "response_cdf"}


def test_metrics_by_hand_on_one_node():
    """One node of speed 1, jobs (time, demand) (0, 2), (1, 1), (5, 1), kept local, no warm-up: done at
    2, 3, 6, responses 2, 2, 1 (mean 5/3, p50 2), slowdowns 1, 2, 1 (mean 4/3), busy 4 of 6 s
    (utilisation 2/3), 3 jobs in 6 s (throughput 1/2); tasks in the system 1, 2, 1, 0 over [0, 1),
    [1, 2), [2, 3), [3, 5): queue_mean between the first and the last arrival 4/5, queue_max 2."""
    p = Platform([Node("a", speed=1.0)], Network(latency=0.0))
    r = dlbkit.simulate(p, Stream(trace=[(0.0, 0, 2.0), (1.0, 0, 1.0), (5.0, 0, 1.0)]), "local", seed=0, warmup=0.0)
    m = r.metrics
    assert list(r.trace.series["job_done"]) == [2.0, 3.0, 6.0]
    assert m["response_mean"] == pytest.approx(5 / 3) and m["response_p50"] == 2.0 and m["response_p99"] == 2.0
    assert m["slowdown_mean"] == pytest.approx(4 / 3) and m["utilisation"] == pytest.approx(2 / 3)
    assert m["throughput"] == pytest.approx(0.5) and m["queue_mean"] == pytest.approx(0.8) and m["queue_max"] == 2
    assert m["info_messages"] == 0 and m["tasks_moved"] == 0


def test_fifo_service_follows_speed_times_availability():
    """A node of speed 2 whose availability drops to 0.5 at t = 1 (another user takes half its CPU):
    a task of 4 units from t = 0 does 2 by t = 1, then the other 2 at rate 1: done at 3; the next task
    (2 units, arriving at 0.5, FIFO behind it) at rate 1: done at 5."""
    from dlbkit.model import Step
    p = Platform([Node("a", speed=2.0, availability=Step(at=1.0, level=0.5))], Network(latency=0.0))
    r = dlbkit.simulate(p, Stream(trace=[(0.0, 0, 4.0), (0.5, 0, 2.0)]), "local", seed=0, warmup=0.0)
    assert r.trace.series["job_done"].tolist() == pytest.approx([3.0, 5.0], abs=1e-12)


def test_transfer_time_and_the_cost_of_a_move_by_hand():
    """Node a (speed 1) holds one background task of work 10; a job of demand 2 arrives at a at t = 0 and
    jsq sends it to the idle node b (speed 2): it reaches b after the latency 0.5 s and is served in
    2 / 2 = 1 s: done at 1.5 (slowdown 1.5 over its 1 s alone on b), one task moved, one message;
    utilisation (10 + 1) / (2 nodes × 10 s)."""
    p = Platform([Node("a", speed=1.0), Node("b", speed=2.0)], Network(latency=0.5))
    w = Stream(trace=[(0.0, 0, 2.0)], initial=[1, 0], initial_demand=Demand("deterministic", 10.0))
    r = dlbkit.simulate(p, w, "jsq", seed=0, warmup=0.0)
    m = r.metrics
    assert list(r.trace.series["job_done"]) == [1.5] and m["slowdown_mean"] == pytest.approx(1.5)
    assert m["tasks_moved"] == 1 and m["messages"] == 1 and m["utilisation"] == pytest.approx(0.55)
    assert m["queue_max"] == 1 and m["queue_maxdiff"] == 1  # queues (1, 0) until b's task arrives, then (1, 1)


def supermarket_mean(lam, d, terms=60):
    return sum(lam ** ((d ** i - 1) / (d - 1)) if d > 1 else lam ** i for i in range(1, terms))


@pytest.mark.parametrize("lam, d, n, jobs", [(0.5, 2, 100, 200_000), (0.7, 3, 100, 200_000)])
def test_supermarket_mean_queue_is_within_3_percent_of_the_fixed_point(lam, d, n, jobs):
    """003 §3.2 / §3.5 item 3. Job counts chosen from measured seed-to-seed spread: at n = 100 and
    2·10^5 jobs (2000 time units at λ = 0.5) five seeds gave means within ±0.8% of each other and
    within +1.2% of the fixed point (the finite-n bias is positive), inside the ±3% band. λ = 0.9 needs
    n ≥ 1000 to bring the finite-n bias under 3% (n = 100 gives +3.1%): `dlbkit reproduce nezha`."""
    tr = simulate_stream(n, Stream(rates=lam, jobs=jobs), make("power-of-d", {"d": d}), seed=11, samples=0,
                         record=False)
    assert tr.meta["queue_mean"] == pytest.approx(supermarket_mean(lam, d), rel=0.03)
