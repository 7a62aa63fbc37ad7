"""The job stream's lower bound on the makespan (dlbkit.families.stream.model.bounds): three streams worked by
hand, each decided by a different one of its bounds; none for a trace without availability profiles; and a
property: no run of any placement rule, information model or service discipline ends before it."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

import dlbkit
from dlbkit import Node, Platform, Pulse, Step, Stream
from dlbkit.balancers import registry
from dlbkit.families.stream.face.family import metrics
from dlbkit.families.stream.model.bounds import stream_lower_bound


def run(platform, rows, balancer="local", **kw):
    return dlbkit.simulate(platform, Stream(trace=rows), balancer, seed=1, **kw)


def test_the_suffix_of_the_arrivals_decides():
    """Nodes of speed 1 and 2, one slot each (3 work units per second). Job 0 at t = 0: one task of 4; job 1
    at t = 10: two tasks of 3. All the work from 0: 10 / 3 = 3.33 s; the 6 units arriving at 10: 10 + 6/3 =
    12 s; each task alone at the fast node: 0 + 4/2 = 2, 10 + 3/2 = 11.5 s. Bound 12 s. Run locally at the
    fast node (origin 1): 0–2, then 10–11.5 and 11.5–13: makespan 13 s."""
    r = run(Platform([Node("slow", speed=1.0), Node("fast", speed=2.0)]), [(0.0, 1, 4.0, 1), (10.0, 1, 3.0, 2)])
    assert stream_lower_bound(r.trace) == 12.0
    assert r.metrics["lower_bound"] == 12.0 and r.metrics["makespan"] == pytest.approx(13.0)
    assert r.metrics["efficiency"] == pytest.approx(12.0 / 13.0)


def test_a_late_long_task_alone_decides():
    """Speeds 1 and 4, one slot each (5 per second). Job 0 at 0: a task of 1; job 1 at 3: a task of 8.
    Fluid: 9/5 = 1.8 s from 0, 3 + 8/5 = 4.6 s from 3; the task of 8 alone on the fast node: 3 + 8/4 = 5 s.
    Bound 5 s: the last arrival plus its job's fastest time."""
    r = run(Platform([Node("slow", speed=1.0), Node("fast", speed=4.0)]), [(0.0, 0, 1.0, 1), (3.0, 1, 8.0, 1)])
    assert r.metrics["lower_bound"] == 5.0
    assert r.metrics["makespan"] == pytest.approx(5.0)  # local at the fast node: the bound is reached


def test_availability_and_slots_are_integrated_exactly():
    """One node of speed 1 with 2 slots, its availability 1 until t = 5 and 0.5 after: the platform does 2
    units per second before 5 and 1 after (C(5) = 10). Job 0 at 0: a task of 8; job 1 at 6: four tasks of 2.
    From 0, all 16 units: C(t) = 16 at 5 + 6/1 = 11 s; from 6 (C(6) = 11), 8 units: C(t) = 19 at 14 s; the
    task of 8 alone: 5 units by t = 5, 3 more at 0.5: 11 s; a task of 2 from 6: 6 + 2/0.5 = 10 s. Bound 14 s.
    The run: slot A 0–11 (the task of 8), slot B 6–10 and 10–14, slot A 11–15, slot B 14–18: 18 s."""
    p = Platform([Node("n", speed=1.0, cores=2, availability=Step(at=5.0, level=0.5))])
    r = run(p, [(0.0, 0, 8.0, 1), (6.0, 0, 2.0, 4)])
    assert r.metrics["lower_bound"] == 14.0
    assert r.metrics["makespan"] == pytest.approx(18.0) and r.metrics["efficiency"] == pytest.approx(14.0 / 18.0)


def test_a_trace_without_availability_profiles_has_no_bound():
    """A real run's trace (dlbkit.Cluster) records no availability profiles and measured busy seconds as
    demands: no bound, and no efficiency."""
    r = run(Platform([Node("a"), Node("b")]), [(0.0, 0, 1.0, 1)])
    r.trace.availability = []
    assert math.isnan(stream_lower_bound(r.trace))
    m = metrics(r.trace)
    assert math.isnan(m["lower_bound"]) and math.isnan(m["efficiency"]) and m["makespan"] == pytest.approx(1.0)


@st.composite
def streams(draw):
    n = draw(st.integers(1, 4))
    nodes = []
    for i in range(n):
        avail = draw(st.sampled_from([1.0, 0.5, "step", "pulse"]))
        if avail == "step":
            avail = Step(at=draw(st.floats(0.5, 6.0)), level=draw(st.sampled_from([0.2, 0.5])))
        elif avail == "pulse":
            avail = Pulse(start=draw(st.floats(0.0, 4.0)), duration=draw(st.floats(0.5, 4.0)), level=0.25)
        nodes.append(Node(f"n{i}", speed=draw(st.sampled_from([0.5, 1.0, 2.0, 3.0])), cores=draw(st.integers(1, 3)),
                          availability=avail))
    k = draw(st.integers(1, 12))
    times = sorted(draw(st.lists(st.floats(0.0, 10.0), min_size=k, max_size=k)))
    rows = [(t, draw(st.integers(0, n - 1)), draw(st.floats(0.05, 5.0)), draw(st.integers(1, 3))) for t in times]
    return Platform(nodes), rows


@settings(max_examples=examples(60), deadline=None)
@given(streams(), st.sampled_from(registry.names("placement")), st.sampled_from(["exact", "gossip"]),
       st.sampled_from(["fifo", "ps"]))
def test_no_run_ends_before_the_bound(case, balancer, info, service):
    """Invariant: lower_bound ≤ makespan (up to rounding, 1e-9 relative: a bound one task decides equals the
    makespan it is reached at), and the bound is at least the two a reader checks at a glance: all the work
    at the full speed of every slot, and every job's arrival plus its largest task at the fastest speed."""
    platform, rows = case
    kw = {"info": {"model": "gossip", "period": 0.5}} if info == "gossip" else {}
    r = run(platform, rows, balancer, service=service, **kw)
    lb, makespan = r.metrics["lower_bound"], r.metrics["makespan"]
    assert lb <= makespan * (1 + 1e-9), (lb, makespan)
    fastest = max(nd.speed for nd in platform.nodes)
    capacity = sum(nd.speed * nd.cores for nd in platform.nodes)
    assert lb >= sum(d * w for _, _, d, w in rows) / capacity * (1 - 1e-12)
    assert lb >= max(t + d / fastest for t, _, d, _ in rows) * (1 - 1e-12)
