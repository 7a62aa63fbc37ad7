"""GDEM, Loadserver and PhaseAdaptive as pure decisions: a TreeView and a seeded Generator, no engine."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.balancers.base import Transfer
from dlbkit.families.tree.balancers import GDEM, Loadserver, PhaseAdaptive
from dlbkit.families.tree.balancers.gdem import exchange_for, optimal_exchange, shape_of
from dlbkit.model.topology import kary_ncube, neighbour_lists
from dlbkit.families.tree.model.view import TreeView

from support.profiles import examples

SIN8 = 1 / (1 + math.sin(math.pi / 8))  # 0.7232: ring 16, chain 8, mesh 8x4, 16-ary 2-cube (001 §2.1)


def view_of(dims, wrap=True, queue=None):
    g = kary_ncube(dims, wrap=wrap)
    n = g.number_of_nodes()
    return TreeView(n, neighbours=neighbour_lists(g), queue=list(queue) if queue is not None else [0] * n)


def started(b, view, seed=0):
    b.start(view, np.random.default_rng(seed))
    return b


def apply(loads, transfers):
    """Loads after the transfers in order; a transfer may never take more than the sender holds."""
    out = list(loads)
    for t in transfers:
        assert 0 < t.n <= out[t.src], t
        out[t.src] -= t.n
        out[t.dst] += t.n
    return out


def test_registered_under_their_names():
    assert REGISTRY["gdem"] is GDEM and REGISTRY["ldsv"] is Loadserver
    assert REGISTRY["phase-adaptive"] is PhaseAdaptive
    assert {REGISTRY[n].kind for n in ("gdem", "ldsv", "phase-adaptive")} == {"migration"}


# --- the exchange parameter ----------------------------------------------------------------------------
@pytest.mark.parametrize("dims, wrap, expected", [
    ((2, 2, 2), True, 0.5),                                   # hypercube
    ((16, 8), True, 1 / (1 + math.sin(2 * math.pi / 16))),    # 2-D torus, k = 16 (001 §5.2.5, p = 128)
    ((4, 4), True, 0.5),                                      # torus k = 4: sin(π/2) = 1
    ((16,), True, SIN8), ((16, 16), True, SIN8), ((8,), False, SIN8), ((8, 4), False, SIN8),  # Table 4.11
    ((2, 1), True, 0.5), ((2, 2), True, 0.5), ((2,), False, 0.5),  # k <= 2 rule (001 §2.1 [INF])
    ((3,), True, 1 / (1 + math.sin(2 * math.pi / 3))),
])
def test_optimal_exchange_per_topology(dims, wrap, expected):
    assert optimal_exchange(dims, wrap) == pytest.approx(expected, rel=1e-15)
    assert exchange_for(neighbour_lists(kary_ncube(dims, wrap=wrap))) == pytest.approx(expected, rel=1e-15)


def test_shape_is_recognised_from_the_neighbour_lists_or_not_at_all():
    assert shape_of(neighbour_lists(kary_ncube((16, 8)))) == ((16, 8), True)
    assert shape_of(neighbour_lists(kary_ncube((8, 4), wrap=False))) == ((8, 4), False)
    assert shape_of(neighbour_lists(kary_ncube((8,), wrap=False))) == ((8,), False)
    star = [[1, 2, 3], [0], [0], [0]]
    assert shape_of(star) is None and exchange_for(star) == 0.5


@pytest.mark.parametrize("bad", [0, -0.1, 1.5, float("nan"), "half"])
def test_exchange_outside_zero_one_is_a_config_error_naming_the_field(bad):
    with pytest.raises(ConfigError, match="exchange"):
        make("gdem", {"exchange": bad})
    with pytest.raises(ConfigError, match="exchange"):
        GDEM(exchange=bad).start(TreeView(4), np.random.default_rng(0))


def test_exchange_one_is_allowed():
    assert started(GDEM(exchange=1), view_of((4,))).exchange_ == 1.0


# --- GDEM decisions ------------------------------------------------------------------------------------
def test_gdem_hand_worked_sweep_on_a_4x2_torus():
    """λ = 1/2; colours x-A, x-B, y (001 §3.1): 10 tasks on node 0 spread in one sweep."""
    v = view_of((4, 2), queue=[10, 0, 0, 0, 0, 0, 0, 0])
    b = started(GDEM(), v)
    assert b.colours_ == [[(0, 1), (2, 3), (4, 5), (6, 7)], [(1, 2), (3, 0), (5, 6), (7, 4)],
                          [(0, 4), (1, 5), (2, 6), (3, 7)]]
    got = b.balance(v)
    assert got == [Transfer(0, 1, 5, 0), Transfer(1, 2, 2, 1), Transfer(0, 3, 2, 1), Transfer(0, 4, 1, 2),
                   Transfer(1, 5, 1, 2), Transfer(2, 6, 1, 2), Transfer(3, 7, 1, 2)]
    assert apply(v.queue, got) == [2, 2, 1, 1, 1, 1, 1, 1]


def test_gdem_floors_the_exchange_and_ignores_a_difference_of_one():
    v = TreeView(2, neighbours=[[1], [0]], queue=[7, 0])
    assert started(GDEM(exchange=0.723), v).balance(v) == [Transfer(0, 1, 5, 0)]  # floor(0.723 · 7)
    v.queue = [3, 2]
    assert started(GDEM(), v).balance(v) == []


def test_gdem_uses_the_engines_colours_when_given():
    v = view_of((4,), queue=[0, 0, 0, 8])
    v.colours = [[(2, 3)], [(0, 1)]]
    assert started(GDEM(), v).balance(v) == [Transfer(3, 2, 4, 0)]


@settings(max_examples=examples(150), deadline=None)
@given(d=st.integers(1, 7), data=st.data())
def test_gdem_on_a_hypercube_balances_in_one_sweep(d, data):
    """Exact when every pairwise average is an integer (loads multiples of 2^d); otherwise each
    dimension's rounding can leave one task: max − min ≤ d."""
    n = 2 ** d
    base = data.draw(st.lists(st.integers(0, 500), min_size=n, max_size=n))
    v = view_of((2,) * d, queue=[x * n for x in base])
    b = started(GDEM(), v)
    after = apply(v.queue, b.balance(v))
    assert max(after) == min(after) == sum(base)
    v.queue = base
    after = apply(base, b.balance(v))
    assert max(after) - min(after) <= d and sum(after) == sum(base)


@settings(max_examples=examples(150), deadline=None)
@given(shape=st.sampled_from([((8, 4), True), ((8, 4), False), ((16,), True), ((5,), False), ((3, 3), True)]),
       data=st.data(), lam=st.floats(0.05, 1.0))
def test_gdem_conserves_tasks_and_a_balanced_state_triggers_nothing(shape, data, lam):
    dims, wrap = shape
    n = math.prod(dims)
    loads = data.draw(st.lists(st.integers(0, 300), min_size=n, max_size=n))
    v = view_of(dims, wrap, loads)
    b = started(GDEM(exchange=lam), v)
    got = b.balance(v)
    after = apply(loads, got)
    assert sum(after) == sum(loads)
    assert [t.step for t in got] == sorted(t.step for t in got)  # colour order
    level = data.draw(st.integers(0, 50))
    v.queue = data.draw(st.lists(st.integers(level, level + 1), min_size=n, max_size=n))  # no pair differs by > 1
    assert b.balance(v) == []


def test_gdem_vectorised_colours_decide_like_the_plain_loop():
    """Colours above 24 pairs go through numpy; the decision equals a scalar reference."""
    rng = np.random.default_rng(3)
    v = view_of((16, 16))
    b = started(GDEM(), v)
    for _ in range(20):
        loads = rng.integers(0, 50, 256).tolist()
        v.queue = loads
        ref, L = [], list(loads)
        for step, c in enumerate(b.colours_):
            for a, bb in c:
                dlt = L[a] - L[bb]
                if abs(dlt) > 1:
                    m = math.floor(b.exchange_ * abs(dlt))
                    s, t = (a, bb) if dlt > 0 else (bb, a)
                    L[s] -= m
                    L[t] += m
                    ref.append(Transfer(s, t, m, step))
        assert b.balance(v) == ref


def test_gdem_requires_the_engines_generator():
    with pytest.raises(ConfigError, match="rng"):
        GDEM().start(TreeView(4), None)


# --- Loadserver ---------------------------------------------------------------------------------------
def test_loadserver_hand_worked_invocation():
    """LIS = node 4 (the last); lights 1, 2, 3 register first; node 0 (5 tasks, heavy) is served one light
    per round until it is no longer heavy... or the LIS runs dry, then told NO_LIGHT_NODE."""
    v = TreeView(5, queue=[5, 0, 0, 0, 0])
    b = started(Loadserver(), v)
    assert b.server_ == 4 and b.workers_ == [0, 1, 2, 3]
    assert b.balance(v) == [Transfer(0, 1, 1, 0), Transfer(0, 2, 1, 1), Transfer(0, 3, 1, 2)]
    assert b.log_ == [("register", 1), ("register", 2), ("register", 3), ("query", 0, 0, ((1, 1),)),
                      ("query", 0, 1, ((2, 1),)), ("query", 0, 2, ((3, 1),)), ("query", 0, 3, ())]
    assert not any(b.registered_) and not b.lis_


def test_loadserver_stops_serving_a_node_once_it_is_no_longer_heavy():
    v = TreeView(5, queue=[2, 0, 0, 0, 0])  # heavy = load > 1: gives one, keeps one
    b = started(Loadserver(), v)
    assert b.balance(v) == [Transfer(0, 1, 1, 0)]
    assert list(b.lis_) == [2, 3] and b.registered_[2] and not b.registered_[1]
    v.queue = [1, 1, 0, 0, 0]
    assert b.balance(v) == [] and b.log_ == []  # already registered: no second registration


def test_loadserver_lights_per_reply_and_migration_factor():
    v = TreeView(5, queue=[9, 0, 0, 0, 0])
    b = started(Loadserver(lights_per_reply=3, tasks=2), v)
    assert b.balance(v) == [Transfer(0, 1, 2, 0), Transfer(0, 2, 2, 0), Transfer(0, 3, 2, 0)]
    assert b.log_[3] == ("query", 0, 0, ((1, 2), (2, 2), (3, 2)))


def test_loadserver_never_moves_work_to_or_from_the_server():
    rng = np.random.default_rng(1)
    for server in (0, 2, -1):
        v = TreeView(6, queue=[0] * 6)
        b = started(Loadserver(server=server), v)
        for _ in range(30):
            v.queue = [0 if j == b.server_ else int(x) for j, x in enumerate(rng.integers(0, 5, 6))]
            for t in b.balance(v):
                assert b.server_ not in (t.src, t.dst)


def test_loadserver_same_seed_same_decisions_with_several_heavy_nodes():
    def decide(seed):
        v = TreeView(9, queue=[6, 5, 4, 0, 0, 0, 0, 3, 0])
        b = started(Loadserver(), v, seed)
        return b.balance(v), b.log_
    assert decide(5) == decide(5)
    assert any(decide(5)[0] != decide(s)[0] for s in range(6, 12))  # the random visiting order matters


@pytest.mark.parametrize("params, field", [({"server": 5}, "server"), ({"light": 2, "heavy": 1}, "light")])
def test_loadserver_bad_settings_are_config_errors(params, field):
    with pytest.raises(ConfigError, match=field):
        Loadserver(**params).start(TreeView(5), np.random.default_rng(0))


# --- PhaseAdaptive -------------------------------------------------------------------------------------
def barrier(b, view, n):
    view.queue = [n] + [0] * (view.n_nodes - 1)
    b.observe(view)


def test_phase_state_machine_is_one_way_and_t2_waits_for_phase_two():
    v = TreeView(4)
    b = started(PhaseAdaptive(balancers=("ldsv", "gdem", "none"), intervals=(1, 16, math.inf)), v)
    assert (b.phase_, b.interval, b.acting().name) == (1, 1, "ldsv")
    barrier(b, v, 1)
    assert b.phase_ == 1  # n = 1 < c1·p, and t2 is not evaluated in phase I
    barrier(b, v, 4)
    assert (b.phase_, b.interval, b.acting().name, b.protocol) == (2, 16, "gdem", "pairwise")
    barrier(b, v, 9)
    assert b.phase_ == 2
    barrier(b, v, 4)
    assert (b.phase_, b.interval, b.acting(), b.protocol) == (3, math.inf, None, "none")
    barrier(b, v, 100)
    assert b.phase_ == 3 and b.transitions_ == {"t1": 2, "t2": 4}
    assert b.balance(v) == []


def test_without_t1_phase_one_runs_phase_two_settings_and_without_t2_phase_three_never_comes():
    v = TreeView(4)
    b = started(PhaseAdaptive(balancers=("ldsv", "gdem", "none"), intervals=(1, 16, math.inf), t1=False, t2=False), v)
    assert (b.interval, b.acting().name) == (16, "gdem")
    for n in (5, 1, 0):
        barrier(b, v, n)
    assert b.phase_ == 2


def test_c2_moves_the_switch_off_earlier():
    """p = 4, the same falling counts 30, 20, 10, 4: c2 = 1 (threshold 4) switches off at the fourth
    barrier, c2 = 5 (threshold 20) already at the second."""
    off = {}
    for c2 in (1, 5):
        v = TreeView(4)
        b = started(PhaseAdaptive(c2=c2), v)
        for k, n in enumerate((30, 20, 10, 4), start=1):
            barrier(b, v, n)
            if b.phase_ == 3:
                off[c2] = k
                break
    assert off == {1: 4, 5: 2}


def test_work_detector_reads_the_largest_local_remaining_work():
    v = TreeView(4)
    b = started(PhaseAdaptive(detector="work", intervals=(1, 16, math.inf)), v)
    assert b.reads_work
    barrier(b, v, 8)
    v.queue, v.work = [1, 1, 1, 0], [4095.0, 1.0, 1.0, 0.0]  # 3 tasks, but one stands for 4095 nodes
    b.observe(v)
    assert b.phase_ == 2
    v.work = [16.0, 3.0, 1.0, 0.0]  # nobody has more than one interval (c2 · i2 = 16 nodes) left
    b.observe(v)
    assert b.phase_ == 3


def test_same_balancer_named_twice_is_one_instance():
    b = started(PhaseAdaptive(balancers=("ldsv", "ldsv", None)), TreeView(5))
    assert b.balancers_[0] is b.balancers_[1] and b.balancers_[2] is None
    assert b.reserved_node() == 4


@pytest.mark.parametrize("param, bad", [("balancers", ("gdem", "gdem")), ("balancers", ("gdem", "bogus", None)),
                                        ("balancers", ("gdem", "phase-adaptive", None)), ("intervals", (1, 0, 5)),
                                        ("detector", "idle"), ("c2", 0)])
def test_phase_adaptive_bad_parameters_name_the_field(param, bad):
    with pytest.raises(ConfigError, match=param):
        make("phase-adaptive", {param: bad})


def test_loadserver_never_hands_a_heavy_node_its_own_stale_registration():
    """Node 0 registers while empty; by the next call it holds 5 tasks and is the only heavy node:
    the LIS's first id is its own, which is dropped (it is no longer light), and node 2's is used."""
    b = Loadserver()
    view = TreeView(4, queue=[0, 1, 0, 0])
    b.start(view, np.random.default_rng(0))
    assert b.balance(view) == [] and list(b.lis_) == [0, 2]  # nobody heavy; node 3 is the LIS
    view.queue = [5, 1, 0, 1]
    out = b.balance(view)
    assert all(t.src != t.dst for t in out)
    assert [(t.src, t.dst, t.n) for t in out] == [(0, 2, 1)]
