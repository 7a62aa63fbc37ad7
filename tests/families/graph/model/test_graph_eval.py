"""The graph evaluator: hand-worked schedules under both cost models, and properties of every schedule."""

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, Network, Node, Platform, TaskGraph
from dlbkit.families.graph.model.costs import costs_for, critical_path_bound, upward_rank
from dlbkit.families.graph.sim.static import Evaluator, evaluate

from support.profiles import examples


def diamond():
    return TaskGraph(["a", "b", "c", "d"], loads=[1, 2, 3, 1],
                     edges=[("a", "b", 2), ("a", "c", 3), ("b", "d", 1), ("c", "d", 1)])


ALLOC = [0, 0, 1, 0]  # a, b, d on node 0; c on node 1


def test_standard_model_by_hand():
    """a 0–1; b same node 1–3; c waits for a's 3 units of data: 4–7; d waits for c's: 8–9."""
    ready, start, finish = evaluate(costs_for(diamond(), 2), ALLOC)
    assert start == [0, 1, 4, 8] and finish == [1, 3, 7, 9] and ready == [0, 1, 4, 8]


def test_thesis_model_by_hand():
    """a computes 1 then sends 3 to c (both busy): 0–4; c is ready when a's message to it starts (1) and
    runs receive 3 + compute 3 + send 1 on node 1: 1–8; b (lower precedence) runs 4–6; d receives 1:
    ready at 7 (c's message starts), runs 7–9 (002 §2.4, the note's App. A.2)."""
    ready, start, finish = evaluate(costs_for(diamond(), 2, "thesis"), ALLOC)
    assert start == [0, 4, 1, 7] and finish == [4, 6, 8, 9] and ready == [0, 4, 1, 7]


def test_a_given_order_is_followed_and_a_bad_one_refused():
    c = costs_for(diamond(), 1)
    _, start, _ = evaluate(c, [0] * 4, order=[0, 1, 2, 3])
    assert start == [0, 1, 3, 6]
    _, start, _ = evaluate(c, [0] * 4, order=[0, 2, 1, 3])
    assert start == [0, 4, 1, 6]
    with pytest.raises(ConfigError, match=r"order must be a topological order"):
        evaluate(c, [0] * 4, order=[1, 0, 2, 3])
    with pytest.raises(ConfigError, match=r"order must be every task exactly once"):
        evaluate(c, [0] * 4, order=[0, 1, 2])


def test_without_an_order_the_highest_priority_ready_task_goes_first():
    """One node: after a, c (rank 5) runs before b (rank 4)."""
    _, start, _ = evaluate(costs_for(diamond(), 1), [0] * 4)
    assert start == [0, 4, 1, 6]


def test_a_platform_costs_latency_per_hop_plus_data_over_bandwidth_and_cores_share_a_machine():
    p = Platform([Node("x", speed=1.0, cores=2), Node("y", speed=2.0)], Network(latency=0.5, bandwidth=1.0))
    c = costs_for(diamond(), p)
    assert c.n_nodes == 3 and c.host == (0, 0, 1) and c.exec[2] == [3.0, 3.0, 1.5]
    assert c.comm(3, 0, 1) == 0.0 and c.comm(3, 0, 2) == 3.5
    _, start, finish = evaluate(c, [0, 0, 2, 1])  # c on y (speed 2), d on x's second core
    assert start == [0, 1, 4.5, 7.5] and finish == [1, 3, 6, 8.5]  # 6 + 0.5 + 1
    t = costs_for(diamond(), p, "thesis")
    assert t.comm(3, 0, 2) == 3.0 and t.comm(3, 0, 1) == 0.0


def test_availability_stretches_a_task():
    from dlbkit import Step
    p = Platform([Node("x", availability=Step(at=1.0, level=0.5))])
    c = costs_for(diamond(), p)
    prof = [n.availability.realise(None) for n in p.nodes]
    _, _, finish = evaluate(c, [0] * 4, availability=prof)
    assert finish[-1] == pytest.approx(1 + 2 * 6)


# --- properties ---------------------------------------------------------------------------------------
@st.composite
def graphs(draw):
    n = draw(st.integers(1, 10))
    loads = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    edges = [(i, j, draw(st.integers(0, 9))) for i in range(n) for j in range(i + 1, n) if draw(st.booleans())]
    m = draw(st.integers(1, 4))
    a = draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n))
    perm = draw(st.permutations(range(n)))  # relabel so that index order is not topological
    g = TaskGraph([perm[i] for i in range(n)], loads=loads, edges=[(perm[i], perm[j], d) for i, j, d in edges])
    return g, m, a


def _one_at_a_time(a, start, finish, m):
    for p in range(m):
        iv = sorted((s, f) for s, f, q in zip(start, finish, a) if q == p)
        assert all(f0 <= s1 + 1e-9 for (_, f0), (s1, _) in zip(iv, iv[1:]))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(), st.booleans())
def test_standard_schedules_are_valid_and_above_the_critical_path_bound(case, ordered):
    g, m, a = case
    c = costs_for(g, m)
    ready, start, finish = evaluate(c, a, g.topo if ordered else None)
    for i in range(g.n_tasks):
        assert math.isclose(finish[i] - start[i], c.exec[i][a[i]]) and start[i] >= ready[i] - 1e-9
        for j, d in g.succs[i]:
            assert start[j] >= finish[i] + c.comm(d, a[i], a[j]) - 1e-9
    _one_at_a_time(a, start, finish, m)
    assert max(finish) >= critical_path_bound(c) - 1e-9


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_thesis_schedules_are_valid_and_above_the_critical_path_bound(case):
    g, m, a = case
    c = costs_for(g, m, "thesis")
    ready, start, finish = evaluate(c, a)
    for i in range(g.n_tasks):
        recv = sum(d for p, d in g.preds[i] if a[p] != a[i])
        send = sum(d for s, d in g.succs[i] if a[s] != a[i])
        assert math.isclose(finish[i] - start[i], c.exec[i][a[i]] + recv + send)
        for j, _ in g.succs[i]:  # a successor starts once its predecessor computed and received
            assert start[j] >= start[i] + c.exec[i][a[i]] + recv - 1e-9
    _one_at_a_time(a, start, finish, m)
    assert max(finish) >= critical_path_bound(c) - 1e-9


def test_the_prepared_evaluator_equals_the_one_shot_form():
    g = diamond()
    c = costs_for(g, 2, "thesis")
    ev = Evaluator(c, upward_rank(c))
    assert ev.times(ALLOC) == evaluate(c, ALLOC) and ev.makespan(ALLOC) == 9


# --- the standard model with one-port contention (Bhat, Raghavendra & Prasanna 2003) -----------------
def test_one_port_contention_serialises_a_forks_sends_by_hand():
    """a (node 0) sends 4 to b (node 1) and 4 to c (node 2). Without contention both arrive at 1 + 4 = 5
    and finish at 6. One send port: b's message (the higher priority: load 2) 1–5, then c's 5–9; c runs 9–10."""
    g = TaskGraph(list("abc"), loads=[1, 2, 1], edges=[("a", "b", 4), ("a", "c", 4)])
    assert evaluate(costs_for(g, 3), [0, 1, 2])[2] == [1, 7, 6]
    ready, start, finish = evaluate(costs_for(g, 3, contention=True), [0, 1, 2])
    assert ready == [0, 5, 9] and finish == [1, 7, 10]


def test_one_port_contention_serialises_a_joins_receives_by_hand():
    """x (node 0) and y (node 1), load 1, each send 3 to z (node 2). One receive port: x's message 1–4
    (x is timed first: equal priority, lower index), y's 4–7; z runs 7–8 (without contention 4–5)."""
    g = TaskGraph(list("xyz"), loads=[1, 1, 1], edges=[("x", "z", 3), ("y", "z", 3)])
    assert evaluate(costs_for(g, 3), [0, 1, 2])[1][2] == 4
    assert evaluate(costs_for(g, 3, contention=True), [0, 1, 2])[1][2] == 7


def test_ports_belong_to_machines_and_cores_of_one_machine_talk_for_free():
    """u and a run on x's two cores 0–1; b (x) has a's data for free at 1. u's message to w (y) holds x's
    send port and y's receive port 1–11 (u is timed first: rank 12 against a's 7); a's message to c (y)
    needs both ports: 11–12."""
    p = Platform([Node("x", cores=2), Node("y", cores=2)], Network(latency=0.0, bandwidth=1.0))
    g = TaskGraph(list("uabwc"), loads=[1, 1, 1, 1, 1], edges=[("u", "w", 10), ("a", "b", 5), ("a", "c", 1)])
    ready, start, finish = evaluate(costs_for(g, p, contention=True), [0, 1, 0, 2, 3])
    assert ready == [0, 0, 1, 11, 12]
    assert evaluate(costs_for(g, p), [0, 1, 0, 2, 3])[0] == [0, 0, 1, 11, 2]


def test_port_placement_uses_a_gap_when_both_ports_are_free():
    from dlbkit.families.graph.model.evaluate import Port, _both_free
    out, inp = Port(), Port()
    out.add(0, 2)
    out.add(5, 9)
    inp.add(2, 4)
    assert _both_free(out, inp, 0, 1) == 4 and _both_free(out, inp, 0, 2) == 9 and _both_free(out, inp, 9.5, 1) == 9.5


def test_contention_is_an_option_of_the_standard_model_only():
    with pytest.raises(ConfigError, match="contention"):
        costs_for(diamond(), 2, "thesis", contention=True)
    with pytest.raises(ConfigError, match="contention must be true, false or 'link'"):
        costs_for(diamond(), 2, contention="yes")


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10 ** 6), st.integers(1, 4))
def test_contention_never_makes_a_fixed_plan_faster(seed, m):
    """With the plan's order fixed, every message arrives no earlier than without contention, so no task
    finishes earlier; on one node nothing changes."""
    import numpy as np

    from dlbkit.families.graph.model.generate import layered
    rng = np.random.default_rng(seed)
    g = layered(12, width=3, density=0.5, ccr=2.0, seed=seed)
    a = rng.integers(m, size=g.n_tasks).tolist()
    order = list(g.topo)
    free = evaluate(costs_for(g, m), a, order)[2]
    busy = evaluate(costs_for(g, m, contention=True), a, order)[2]
    assert all(y >= x - 1e-9 for x, y in zip(free, busy))
    if m == 1:
        assert busy == free


def _chain(names):
    from dlbkit.model.platform import Network, Node, Platform
    return Platform([Node(k) for k in names], Network(latency=0.0, bandwidth=1.0, topology="chain"))


def test_link_contention_by_hand():
    """Sinnen & Sousa 2005's link contention on a chain, full duplex, cut-through; messages of 4.

    A-B-C-D, s1 on A → x on C (links A→B, B→C), s2 on B → y on D (B→C, C→D): both end at 1 and share
    B→C, so y's data arrives at 1 + 4 + 4 = 9 (one-port: distinct ports, both at 5).
    A-B-C, s1 on A → x on B, s2 on C → y on B: links A→B and C→B are distinct, both at 5 (one-port:
    B receives one at a time, 9)."""
    from dlbkit.families.graph.model.costs import costs_for
    g = TaskGraph(["s1", "s2", "x", "y"], loads=[1, 1, 1, 1], edges=[("s1", "x", 4), ("s2", "y", 4)])
    four, three = _chain("ABCD"), _chain("ABC")
    assert evaluate(costs_for(g, four, contention="link"), [0, 1, 2, 3])[0] == [0.0, 0.0, 5.0, 9.0]
    assert evaluate(costs_for(g, four, contention=True), [0, 1, 2, 3])[0] == [0.0, 0.0, 5.0, 5.0]
    assert evaluate(costs_for(g, three, contention="link"), [0, 2, 1, 1])[0] == [0.0, 0.0, 5.0, 5.0]
    assert evaluate(costs_for(g, three, contention=True), [0, 2, 1, 1])[0] == [0.0, 0.0, 5.0, 9.0]
    # B → A and A → B are two links (full duplex): opposite messages do not wait
    h = TaskGraph(["s1", "s2", "x", "y"], loads=[1, 1, 1, 1], edges=[("s1", "x", 4), ("s2", "y", 4)])
    assert evaluate(costs_for(h, _chain("AB"), contention="link"), [0, 1, 1, 0])[0] == [0.0, 0.0, 5.0, 5.0]


@pytest.mark.parametrize("bad, field", [({"nodes": 3, "contention": "link"}, "Platform"),
                                        ({"kind": "thesis", "contention": "link"}, "standard"),
                                        ({"contention": "links"}, "'link'")])
def test_link_contention_bad_input(bad, field):
    from dlbkit.families.graph.model.costs import costs_for
    kw = {"nodes": _chain("ABC"), "kind": "standard", **bad}
    with pytest.raises(ConfigError, match=field):
        costs_for(_two_tasks(), kw.pop("nodes"), kw.pop("kind"), **kw)


def _two_tasks():
    return TaskGraph(["a", "b"], loads=[1, 2], edges=[("a", "b", 3)])


@settings(max_examples=examples(30), deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 1000), topo=st.sampled_from(["chain", "ring", "star", "complete"]))
def test_link_contention_only_delays_a_plan_replayed_in_its_order(n, seed, topo):
    """With the plan's order fixed, contention only delays data, so every task starts no earlier than
    without it; every message's links are each busy with one message at a time (checked through the
    timing: ready times never precede the uncontended ones)."""
    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.model.generate import layered
    from dlbkit.model.platform import Network, Node, Platform
    g = layered(n, width=4, seed=seed, ccr=2.0)
    p = Platform([Node(f"n{k}") for k in range(4)], Network(latency=0.01, bandwidth=1.0, topology=topo))
    a = [(i * 7 + seed) % 4 for i in range(g.n_tasks)]
    order = list(g.topo)
    r0, s0, f0 = evaluate(costs_for(g, p), a, order)
    r1, s1, f1 = evaluate(costs_for(g, p, contention="link"), a, order)
    assert all(x >= y - 1e-12 for x, y in zip(s1, s0)) and max(f1) >= max(f0) - 1e-12
