"""The stream engine's service disciplines and initial loads: processor sharing worked by hand (constant
and changing availability), tasks already in the nodes' systems at time 0, the convergence time, job
conservation and per-node order under both disciplines (hypothesis), same seed same trace, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, make
from dlbkit.face.cli import main
from dlbkit.model import Network, Node, Platform, Pulse, Step
from dlbkit.families.stream.model.workload import Demand, Stream, stream_from_dict
from dlbkit.families.stream.model.queues import convergence_time, queue_path
from dlbkit.families.stream.sim.engine import simulate_stream

from support.profiles import examples


def one_node(slots=1, speed=1.0, availability=1.0):
    return Platform([Node("a", speed=speed, cores=slots, availability=availability)], Network(latency=0.0))


def ends(tr):
    iv = tr.intervals()
    return dict(zip(iv["first"].tolist(), iv["t_end"].tolist()))


def run(p, rows, service, balancer="local", **kw):
    return simulate_stream(p, Stream(trace=rows, **kw), make(balancer), service=service, samples=0)


# --- processor sharing, by hand ----------------------------------------------------------------------

def test_two_tasks_share_one_slot():
    """Demands 1 and 3 at t = 0 on one slot: PS halves the rate, the short task ends at 2, the long one
    then runs alone (2 left) and ends at 4; FIFO ends them at 1 and 4."""
    rows = [(0.0, 0, 1.0), (0.0, 0, 3.0)]
    assert ends(run(one_node(), rows, "ps")) == pytest.approx({0: 2.0, 1: 4.0})
    assert ends(run(one_node(), rows, "fifo")) == pytest.approx({0: 1.0, 1: 4.0})


def test_three_tasks_on_two_slots_of_speed_two():
    """Each gets 2/3 of a slot at speed 2 (4/3 work units/s): demands 6 end at 4.5 together."""
    tr = run(one_node(slots=2, speed=2.0), [(0.0, 0, 6.0)] * 3, "ps")
    assert list(ends(tr).values()) == pytest.approx([4.5] * 3)
    assert tr.meta["busy_time"] == pytest.approx(2 * 4.5)  # both slots busy throughout


def test_a_later_arrival_slows_the_task_already_there():
    """A (demand 2) at 0 runs alone until 1 (1 left); B (demand 1) arrives: both at 1/2 with 1 left,
    both end at 3. Every PS task starts when it reaches the node."""
    tr = run(one_node(), [(0.0, 0, 2.0), (1.0, 0, 1.0)], "ps")
    assert ends(tr) == pytest.approx({0: 3.0, 1: 3.0})
    iv = tr.intervals()
    assert np.allclose(iv["t_start"], iv["t_ask"])


def test_processor_sharing_integrates_a_changing_availability():
    """Two demands of 2 on one slot, availability 1 then 0.5 from t = 1: each does 0.5 by t = 1 (1.5
    left), then 0.25 units/s: 6 s more, both end at 7."""
    tr = run(one_node(availability=Step(at=1.0, level=0.5)), [(0.0, 0, 2.0), (0.0, 0, 2.0)], "ps")
    assert list(ends(tr).values()) == pytest.approx([7.0, 7.0])


# --- initial loads and the convergence time ------------------------------------------------------------

def two_nodes():
    return Platform([Node("a"), Node("b")], Network(latency=0.0))


def test_initial_tasks_are_served_before_later_arrivals_and_belong_to_no_job():
    """Node a holds 2 tasks of 1 at t = 0 (FIFO, one slot): they end at 1 and 2; a job arriving at b at
    0.5 ends at 1.5. Task ids: the job's 0, the initial 1 and 2; one job in the series."""
    w = Stream(trace=[(0.5, 1, 1.0)], initial=[2, 0], initial_demand=Demand("deterministic", 1.0))
    tr = simulate_stream(two_nodes(), w, make("local"), samples=3)
    assert ends(tr) == pytest.approx({0: 1.5, 1: 1.0, 2: 2.0})
    assert tr.series["job_done"].tolist() == [1.5] and tr.series["queue"][0].tolist() == [2, 0]
    assert tr.meta["initial_tasks"] == 2


def test_convergence_time_is_the_first_time_the_queues_differ_by_at_most_the_threshold():
    """Same run: queues (a, b) are 2 0 from 0, 2 1 from 0.5, 1 1 from 1, 1 0 from 1.5, 0 0 from 2.
    Differences 2 1 0 1 0: at most 1 first at 0.5, at most 0 first at 1; at most 2 at once (0)."""
    w = Stream(trace=[(0.5, 1, 1.0)], initial=[2, 0], initial_demand=Demand("deterministic", 1.0))
    tr = simulate_stream(two_nodes(), w, make("local"), converge_maxdiff=1)
    t, hi, lo = queue_path(tr)
    assert t.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0] and (hi - lo).tolist() == [2, 1, 0, 1, 0]
    assert tr.meta["convergence_time"] == 0.5
    assert convergence_time(tr, 0) == 1.0 and convergence_time(tr, 2) == 0.0
    assert dlbkit.simulate(two_nodes(), w, "local", converge_maxdiff=0).metrics["convergence_time"] == 1.0


def test_without_initial_loads_nothing_changes_and_convergence_is_not_defined():
    """A stream without initial loads draws nothing more: the same trace as before the option existed
    (compared with initial=[0, …]), and convergence_time NaN."""
    p = Platform([Node(f"n{i}", cores=2) for i in range(4)])
    a = simulate_stream(p, Stream(rates=0.5, jobs=300), make("power-of-d"), seed=4)
    b = simulate_stream(p, Stream(rates=0.5, jobs=300, initial=[0, 0, 0, 0]), make("power-of-d"), seed=4)
    assert a.intervals()["t_end"].tolist() == b.intervals()["t_end"].tolist()
    assert "convergence_time" not in a.meta and math.isnan(dlbkit.simulate(p, Stream(rates=0.5, jobs=50), "jsq")
                                                           .metrics["convergence_time"])


def test_nezha_drains_over_loaded_queues_faster_than_power_of_d():
    """16 single-slot nodes, two starting with 30 exponential tasks, λ = 0.5 per node: nezha sends
    nothing to the two (over-loaded), power-of-d sends them a task whenever both picks are theirs, so
    its convergence (max − min ≤ 4) is later. Mean over 5 seeds; the margin is the rate
    difference: power-of-d drains at 1 − λ·(2/16) = 0.94 of nezha's, ≈ 2 s over ~26 s."""
    w = Stream(rates=0.5, jobs=1500, initial=[30, 30] + [0] * 14)
    conv = {}
    for b in ("nezha", "power-of-d"):
        conv[b] = np.mean([simulate_stream(16, w, make(b), seed=s, converge_maxdiff=4).meta["convergence_time"]
                           for s in range(5)])
    assert 20 < conv["nezha"] < conv["power-of-d"] < 40


# --- invariants (hypothesis) ---------------------------------------------------------------------------

def hetero(n=5):
    return Platform([Node(f"n{i}", speed=1.0 + i % 3, cores=1 + i % 2,
                          availability=Pulse(start=2.0, duration=5.0, level=0.3) if i == 0 else 1.0)
                     for i in range(n)], Network(latency=1e-3, bandwidth=1e6))


def check_invariants(tr, n_tasks, slots, demand, service):
    iv = tr.intervals()
    assert sorted(iv["first"].tolist()) == list(range(n_tasks))  # every task served once, none lost
    assert np.all(iv["t_start"] >= iv["t_ask"] - 1e-12) and np.all(iv["t_end"] > iv["t_start"])
    for j in range(tr.n_nodes):
        m = iv["node"] == j
        ask, start, end, first = iv["t_ask"][m], iv["t_start"][m], iv["t_end"][m], iv["first"][m]
        order = np.lexsort((first, ask))  # arrival at the node, then task id
        if service == "fifo":
            assert np.all(np.diff(start[order]) >= -1e-12)  # first in, first started
        else:
            assert np.allclose(start, ask)  # service starts on arrival
            # equal service to all present tasks: one that came no later and needs no more work
            # ends no later (PS's order)
            w = np.asarray([demand[k] for k in first])
            for a in range(len(first)):
                later = (ask >= ask[a]) & (w >= w[a] - 1e-12)
                assert np.all(end[later] >= end[a] - 1e-9)
        if not np.any(m):
            continue
        # FIFO: never more tasks in service than slots
        ev = sorted([(t, 1) for t in start] + [(t, -1) for t in end], key=lambda x: (x[0], x[1]))
        run_, peak = 0, 0
        for _, dx in ev:
            run_ += dx
            peak = max(peak, run_)
        if service == "fifo":
            assert peak <= slots[j]


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**20), width=st.integers(1, 3), rate=st.floats(0.05, 2.0),
       balancer=st.sampled_from(["power-of-d", "nezha", "spillback", "jsq", "round-robin-place", "local"]),
       service=st.sampled_from(["fifo", "ps"]), initial=st.lists(st.integers(0, 4), min_size=5, max_size=5),
       kind=st.sampled_from(["exponential", "deterministic", "lognormal"]))
def test_jobs_are_conserved_and_each_node_keeps_its_order_under_both_services(seed, width, rate, balancer, service,
                                                                              initial, kind):
    p = hetero()
    w = Stream(rates=rate, jobs=40, width=width, demand=Demand(kind, mean=0.7, sigma=0.5), initial=initial)
    tr = simulate_stream(p, w, make(balancer), seed=seed, samples=5, service=service)
    n_tasks = 40 * width + sum(initial)
    iv = tr.intervals()
    s = tr.series
    assert np.all(np.isfinite(s["job_done"])) and len(s["job_done"]) == 40
    for b in range(40):  # a job is done when its last task is, and no task reached a node before its job arrived
        f, k = s["job_first"][b], s["job_width"][b]
        mine = np.isin(iv["first"], np.arange(f, f + k))
        assert s["job_done"][b] == iv["t_end"][mine].max() and iv["t_ask"][mine].min() >= s["job_time"][b]
    check_invariants(tr, n_tasks, [nd.cores for nd in p.nodes], _work(tr, w, p), service)


def _work(tr, w, p):
    """Every task's work: the jobs' from the series, the initial tasks' drawn again as the engine does."""
    from dlbkit.families.stream.model.seeding import STREAM
    from dlbkit.model.seeding import streams
    rng = streams(tr.seed, STREAM).rng("arrivals")
    w.arrivals([nd.name for nd in p.nodes], rng)
    return tr.series["demand"].tolist() + w.initial_tasks(p.n_nodes, rng)[1]


@settings(max_examples=examples(10), deadline=None)
@given(seed=st.integers(0, 2**20), service=st.sampled_from(["fifo", "ps"]))
def test_same_seed_same_trace_under_both_services(seed, service):
    p = hetero()
    w = Stream(rates=0.8, jobs=60, initial=[3, 0, 1, 0, 2])
    a = simulate_stream(p, w, make("nezha"), seed=seed, service=service)
    b = simulate_stream(p, w, make("nezha"), seed=seed, service=service)
    assert a.intervals()["t_end"].tolist() == b.intervals()["t_end"].tolist()
    assert a.meta["convergence_time"] == b.meta["convergence_time"] or (math.isnan(a.meta["convergence_time"])
                                                                         and math.isnan(b.meta["convergence_time"]))


def test_under_processor_sharing_a_node_does_its_slots_worth_of_work():
    """Work conservation: over a PS run on identical constant nodes, busy slot-time equals the work
    done divided by the speed (all tasks' demands, initial ones included)."""
    p = Platform([Node(f"n{i}", speed=2.0, cores=3) for i in range(4)])
    w = Stream(rates=1.5, jobs=400, initial=[5, 0, 0, 9], initial_demand=Demand("deterministic", 2.0))
    tr = simulate_stream(p, w, make("power-of-d"), seed=2, service="ps")
    assert tr.meta["busy_time"] == pytest.approx(tr.total_work / 2.0, rel=1e-9)


# --- bad input -----------------------------------------------------------------------------------------

def test_bad_service_and_initial_loads_name_the_field():
    p = two_nodes()
    with pytest.raises(ConfigError, match="engine.service.*'fifo', 'ps'"):
        simulate_stream(p, Stream(rates=1.0, jobs=5), make("local"), service="lifo")
    with pytest.raises(ConfigError, match="engine.converge_maxdiff"):
        simulate_stream(p, Stream(rates=1.0, jobs=5), make("local"), converge_maxdiff=-1)
    with pytest.raises(ConfigError, match=r"workload.initial\[1\]"):
        Stream(rates=1.0, jobs=5, initial=[1, -2])
    with pytest.raises(ConfigError, match="workload.initial.*one count per platform node"):
        simulate_stream(p, Stream(rates=1.0, jobs=5, initial=[1, 2, 3]), make("local"))
    with pytest.raises(ConfigError, match="workload.initial_demand.mean"):
        stream_from_dict({"rates": 1.0, "jobs": 5, "initial": [1, 0], "initial_demand": {"mean": 0}})


def test_bad_service_in_an_experiment_file_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "x.toml"
    f.write_text('name = "x"\n[platform]\nnodes = [{name = "a", speed = 1.0}, {name = "b", speed = 1.0}]\n'
                 '[workload]\nkind = "stream"\nrates = 1.0\njobs = 5\n'
                 '[engine]\nservice = "lifo"\n[[balancers]]\nname = "local"\n')
    assert main(["simulate", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "service" in err[0] and "'ps'" in err[0]


def test_an_experiment_table_gives_initial_loads_and_the_service():
    """[workload] initial and initial_demand parse into the Stream; [engine] service reaches the engine."""
    w = stream_from_dict({"trace": [[0.5, 1, 1.0]], "initial": [2, 0],
                          "initial_demand": {"kind": "deterministic", "mean": 1.0}})
    assert w.initial == (2, 0) and w.initial_demand == Demand("deterministic", 1.0)
    r = dlbkit.simulate(two_nodes(), w, "local", service="ps")
    # node a: two tasks of 1 sharing one slot end together at 2; the job on b alone: 0.5 → 1.5
    assert sorted(r.trace.intervals()["t_end"].tolist()) == pytest.approx([1.5, 2.0, 2.0])


def test_queue_path_in_blocks_is_the_same(monkeypatch):
    """The events are handled in blocks of CELLS // n rows: a block of one event gives the same path."""
    from dlbkit.families.stream.model import queues as stream_queues
    w = Stream(rates=0.7, jobs=200, initial=[6, 0, 0, 3])
    tr = simulate_stream(4, w, make("power-of-d"), seed=9)
    whole = queue_path(tr)
    monkeypatch.setattr(stream_queues, "CELLS", 4)
    parts = queue_path(tr)
    assert all(np.array_equal(a, b) for a, b in zip(whole, parts))
    assert whole[1].max() >= 6 and whole[2].min() == 0
