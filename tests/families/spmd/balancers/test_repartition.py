"""Repartition balancers of 000 (Osman 2003): the HNOW cost model, DLAH, its §8.4 baselines and the
optimal chain partition, each on hand-worked cases and random instances."""

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, make
from dlbkit.balancers.base import Transfer
from dlbkit.families.spmd.balancers import optimal_chain_partition, partition_transfers
from dlbkit.families.spmd.balancers.hnow_cost import (
    NORMAL,
    OVER,
    UNDER,
    NodeCost,
    equalise,
    extra_points,
    extra_time,
    status,
    water_fill,
)
from dlbkit.families.spmd.model.view import SpmdView

from support.profiles import examples

INF = math.inf


def spmd(points, speed, *, free=None, swap=None, bw=None, extra=None, layout="line", boundary=0.0):
    """A view whose loop times follow the cost model: W/F + swapped·M_a + K·W/BW + extra."""
    P = len(points)
    free = free or [INF] * P
    swap = swap or [0.0] * P
    bw = bw or [1e9] * P
    extra = extra or [0.0] * P
    times = [w / f + max(0.0, -m) * a + boundary * w / b + e
             for w, f, m, a, b, e in zip(points, speed, free, swap, bw, extra)]
    return SpmdView(P, list(points), times, list(speed), list(free), list(swap), list(bw), layout=layout,
                    boundary=boundary)


# --- cost model (eqs 7.9, 7.10) ----------------------------------------------------------------
def test_eq_7_9_clamps_the_swap_term_and_eq_7_10_inverts_it():
    kw = dict(speed=2.0, free_memory=10.0, swap_cost=0.5, bandwidth=100.0, boundary=4.0)
    assert extra_time(6, **kw) == pytest.approx(6 / 2 + 4 * 6 / 100)  # all in RAM: no swap term
    assert extra_time(30, **kw) == pytest.approx(30 / 2 + 20 * 0.5 + 4 * 30 / 100)
    dt = extra_time(30, **kw)
    assert extra_points(dt, **kw) == pytest.approx((dt + 10 * 0.5) / (1 / 2 + 0.5 + 4 / 100))  # eq 7.10
    for dp in (-7.0, 0.0, 3.0, 10.0, 55.5):
        assert extra_points(extra_time(dp, **kw), **kw) == pytest.approx(dp)


def test_a_swapping_node_loses_swapped_points_first():
    c = NodeCost(time=100.0, points=100.0, rate=1.0, free_memory=-10.0, swap_cost=1.0)
    assert c.delta(-5) == -10.0  # 5 swapped DP: 2 s each
    assert c.delta(-15) == -25.0  # 10 swapped, then 5 in RAM
    assert c.points_for(85.0) == -7.5  # the sender's excess to reach 85 s
    assert c.delta(4) == 8.0  # already swapping: new DP go to swap


def test_equalise_crosses_the_receivers_swap_kink():
    sender = NodeCost(100.0, 100.0, 1.0)
    recv = NodeCost(50.0, 50.0, 1.0, free_memory=10.0, swap_cost=1.0)
    level, shed, (x,) = equalise(sender, [recv])
    assert (level, shed, x) == pytest.approx((80.0, 20.0, 20.0))  # 100 − x = 60 + 2(x − 10)
    swapping = NodeCost(100.0, 100.0, 1.0, free_memory=-10.0, swap_cost=1.0)
    assert equalise(swapping, [NodeCost(50.0, 50.0, 1.0)])[:2] == pytest.approx((70.0, 20.0))


def test_equalise_skips_receivers_above_the_level_and_respects_the_limit():
    sender = NodeCost(92.0, 92.0, 1.0)
    hi, lo = NodeCost(130.0, 13.0, 10.0), NodeCost(80.0, 80.0, 1.0)
    level, shed, amounts = equalise(sender, [hi, lo])
    assert (level, shed) == pytest.approx((86.0, 6.0)) and amounts == pytest.approx([0.0, 6.0])
    level, shed, amounts = equalise(sender, [hi, NodeCost(72.0, 288.0, 0.25)], limit=13.0)
    assert shed == 13.0 and amounts == pytest.approx([0.0, 13.0])
    level, amounts = water_fill([NodeCost(10.0, 1, 1.0), NodeCost(20.0, 1, 1.0)], 30.0)
    assert level == pytest.approx(30.0) and amounts == pytest.approx([20.0, 10.0])


# --- DLAH on hand-worked cases ------------------------------------------------------------------
def test_dlah_sends_an_underloaded_neighbour_exactly_the_excess():
    """Line 50 s | 100 s | 80 s (speeds 2, 1, 1): node 1 averages 65 s, level 84.5 s, sheds ⌈15.5⌉."""
    view = spmd([100, 100, 80], [2.0, 1.0, 1.0])
    assert [status(view, i, 0.3) for i in range(3)] == [UNDER, OVER, NORMAL]
    upper = make("dlah", {"receiver_fill": "upper"})
    assert upper.decide(view, 1) == [Transfer(1, 0, 16)]
    assert upper.decide(view, 0) == [] and upper.decide(view, 2) == []


def test_dlah_splits_the_excess_in_proportion_to_capacity():
    view = spmd([100, 100, 60], [2.0, 1.0, 1.0])  # 50 | 100 | 60: caps 160 and 70, excess ⌈28.5⌉
    assert make("dlah", {"receiver_fill": "upper"}).decide(view, 1) == [Transfer(1, 0, 20), Transfer(1, 2, 9)]


def test_dlah_fills_capacity_then_averages_with_normal_neighbours():
    """50 s (speed 0.1) | 100 s | 80 s: node 0 takes its capacity 8; then 92 − x = 80 + x, x = 6."""
    view = spmd([5, 100, 80], [0.1, 1.0, 1.0])
    upper = make("dlah", {"receiver_fill": "upper"})
    assert upper.decide(view, 1) == [Transfer(1, 0, 8), Transfer(1, 2, 6)]
    # a fast normal neighbour would take 16 in the average: capped at the rest of the excess, 21 − 8
    view = spmd([5, 100, 288], [0.1, 1.0, 4.0])
    assert upper.decide(view, 1) == [Transfer(1, 0, 8), Transfer(1, 2, 13)]


def test_dlah_uses_the_swap_kink_where_processor_only_does_not():
    """Receiver: 50 DP at 1 DP/s, 10 DP of RAM left, 1 s per swapped DP. Lower fill: capacity 15
    (eq 7.10), then 85 − x = 70 + 2x gives 5 more: both end at 80 s. Processor-only sends 25."""
    view = spmd([50, 100], [1.0, 1.0], free=[10.0, INF], swap=[1.0, 0.0])
    assert make("dlah").decide(view, 1) == [Transfer(1, 0, 20)]  # "lower" is the default
    assert make("processor-only").decide(view, 1) == [Transfer(1, 0, 25)]
    # upper: capacity (130 − 50 + 10)/2 = 45 covers the excess 35
    assert make("dlah", {"receiver_fill": "upper"}).decide(view, 1) == [Transfer(1, 0, 35)]


def test_dlah_never_leaves_the_sender_without_a_data_point():
    """10 DP on a node of 0.001 DP/s (10 000 s) beside a nearly idle fast node: the excess is all
    10 DP, but the sender keeps one."""
    for fill in ("upper", "center", "lower"):
        assert make("dlah", {"receiver_fill": fill}).decide(spmd([1000, 10], [1e6, 1e-3]), 1) == [Transfer(1, 0, 9)]


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(2, 8), st.sampled_from(["line", "ring"]), st.floats(0.05, 0.9), st.data())
def test_a_balanced_state_triggers_no_transfer(P, layout, c, data):
    """Loop times all within (1 ± c) of their neighbours' average → every node decides nothing."""
    base = data.draw(st.floats(1.0, 1e4))
    times = [base * (1 + data.draw(st.floats(-c / 3, c / 3))) for _ in range(P)]
    view = SpmdView(P, data.draw(st.lists(st.integers(1, 10**7), min_size=P, max_size=P)), times,
                    data.draw(st.lists(st.floats(0.1, 1e6), min_size=P, max_size=P)),
                    data.draw(st.lists(st.floats(-1e6, 1e7), min_size=P, max_size=P)),
                    data.draw(st.lists(st.floats(0.0, 1e-3), min_size=P, max_size=P)), [1e7] * P, layout=layout)
    for name in ("dlah", "homogeneous-diffusion", "processor-only"):
        b = make(name, {"c": c, "include_self": data.draw(st.booleans())})
        assert all(status(view, i, c) == NORMAL for i in range(P))
        assert all(b.decide(view, i) == [] for i in range(P))


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(2, 7), st.sampled_from(["line", "ring"]), st.sampled_from(["upper", "center", "lower"]),
       st.data())
def test_dlah_decisions_are_whole_points_to_neighbours_and_keep_one(P, layout, fill, data):
    points = data.draw(st.lists(st.integers(1, 5000), min_size=P, max_size=P))
    speed = data.draw(st.lists(st.floats(0.5, 50.0), min_size=P, max_size=P))
    free = data.draw(st.lists(st.floats(-2000, 5000), min_size=P, max_size=P))
    swap = data.draw(st.lists(st.floats(0.0, 0.5), min_size=P, max_size=P))
    view = spmd(points, speed, free=free, swap=swap, layout=layout, boundary=data.draw(st.sampled_from([0.0, 2.0])),
                bw=[1e3] * P)
    for name in ("dlah", "homogeneous-diffusion", "processor-only"):
        b = make(name, {"receiver_fill": fill})
        for i in range(P):
            out = b.decide(view, i)
            assert all(t.src == i and t.dst in view.neighbours[i] and isinstance(t.n, int) and t.n > 0 for t in out)
            assert sum(t.n for t in out) <= points[i] - 1
            assert bool(out) <= (status(view, i, 0.3) == OVER)


# --- bouncing (Fig 7.2) -------------------------------------------------------------------------
def _run(name, points, speed=(4.0, 1.0), rounds=40, **params):
    """Apply a balancer's decisions node by node on a two-node line with loop time = W / F."""
    b, pts, history = make(name, params), list(points), []
    for r in range(rounds):
        moved = False
        for node in range(len(pts)):
            for t in b.decide(spmd(pts, list(speed)), node):
                pts[t.src] -= t.n
                pts[t.dst] += t.n
                history.append((r, t.src, t.dst, t.n))
                moved = True
        if not moved:
            break
    return pts, history


def test_homogeneous_diffusion_bounces_on_a_one_to_four_speed_pair():
    """The fast node (4 DP/s, 1000 DP, 250 s) prices its slow neighbour (1 DP/s, 1 s) at its own
    0.25 s/DP. Filled to the upper edge it sends 995 DP; the neighbour, now 996 s, sends 995 back,
    and so on forever. Filled to the lower edge (the default) it sends 696: the neighbour (697 s)
    sends 411 back and, still over its band, 53 more the next round: damped, but a bounce."""
    pts, history = _run("homogeneous-diffusion", [1000, 1], receiver_fill="upper")
    assert len(history) == 80 and pts == [1000, 1]
    assert [(s, d, n) for _, s, d, n in history[:4]] == [(0, 1, 995), (1, 0, 995)] * 2
    pts, history = _run("homogeneous-diffusion", [1000, 1])
    assert [(s, d, n) for _, s, d, n in history] == [(0, 1, 696), (1, 0, 411), (1, 0, 53)] and pts == [768, 233]


def test_dlah_converges_on_the_one_to_four_speed_pair():
    lower, history = _run("dlah", [1000, 1])  # default: filled to the lower edge, one step
    assert len(history) == 1 and lower[0] / 4 == pytest.approx(lower[1], abs=1.0)  # one step, equal times
    upper, history = _run("dlah", [1000, 1], receiver_fill="upper")  # filled to (1 + c)·old average: one back
    assert len(history) == 2 and history[1][1:3] == (1, 0) and history[1][3] < history[0][3] / 3
    moved_homogeneous = sum(h[3] for h in _run("homogeneous-diffusion", [800, 50])[1])
    moved_dlah = sum(h[3] for h in _run("dlah", [800, 50])[1])
    assert moved_dlah < moved_homogeneous / 4


# --- optimal chain partition -------------------------------------------------------------------
def _random_costs(data, P):
    costs = []
    for _ in range(P):
        w = data.draw(st.integers(1, 6))
        rate = data.draw(st.floats(0.05, 5.0))
        costs.append(NodeCost(time=rate * w + data.draw(st.floats(0.0, 2.0)), points=w, rate=rate,
                              free_memory=data.draw(st.sampled_from([INF, -1.0, 0.0, 2.0, 4.0])),
                              swap_cost=data.draw(st.floats(0.0, 3.0))))
    return costs


@settings(max_examples=examples(300), deadline=None)
@given(st.integers(1, 4), st.data())
def test_optimal_chain_partition_beats_every_contiguous_partition(P, data):
    costs = _random_costs(data, P)
    N = data.draw(st.integers(P, 12))
    w, best = optimal_chain_partition(costs, N)
    assert sum(w) == N and min(w) >= 1
    times = lambda ws: max(c.predict(x - c.points) for c, x in zip(costs, ws))  # noqa: E731
    assert times(w) == pytest.approx(best, abs=1e-12)
    brute = min(times(ws) for ws in itertools.product(range(1, N + 1), repeat=P) if sum(ws) == N)
    assert best == pytest.approx(brute, rel=1e-9, abs=1e-9)


@settings(max_examples=examples(200), deadline=None)
@given(st.integers(2, 8), st.sampled_from(["line", "ring"]), st.data())
def test_optimal_chain_transfers_reproduce_the_partition(P, layout, data):
    points = data.draw(st.lists(st.integers(1, 10**6), min_size=P, max_size=P))
    view = spmd(points, data.draw(st.lists(st.floats(0.1, 100.0), min_size=P, max_size=P)),
                free=data.draw(st.lists(st.floats(-1e5, 1e6), min_size=P, max_size=P)),
                swap=[1e-3] * P, layout=layout)
    b = make("optimal-chain")
    target, _ = optimal_chain_partition([NodeCost(view.loop_time[k], points[k], 1 / view.measured_speeds[k],
                                                  view.free_memory[k], view.swap_cost[k]) for k in range(P)])
    held = list(points)
    for t in b.decide(view, -1):
        assert t.dst in view.neighbours[t.src] and t.n > 0
        held[t.src] -= t.n
        held[t.dst] += t.n
        assert held[t.src] >= 1  # applied one after another, no node ever runs dry
    assert held == target
    again = spmd(held, view.measured_speeds, free=[f - (h - p) for f, h, p in zip(view.free_memory, held, points)],
                 swap=[1e-3] * P, layout=layout)
    # the optimum is a fixed point (up to ties between equally good partitions: rel_tol)
    assert make("optimal-chain", {"rel_tol": 1e-9}).decide(again, -1) == []


def test_chain_partition_is_proportional_to_speed_without_memory_or_network():
    w, best = optimal_chain_partition([NodeCost(0.0, 0, 1 / s) for s in (1.0, 2.0, 3.0, 4.0)], 1000)
    assert w == [100, 200, 300, 400] and best == pytest.approx(100.0)


def test_ring_transfers_take_the_short_way_round():
    out = partition_transfers([1, 1, 1, 9], [3, 3, 3, 3], ring=True)
    assert sum(t.n for t in out) == 8 and Transfer(3, 0, 2) in out
    assert sum(t.n for t in partition_transfers([1, 1, 1, 9], [3, 3, 3, 3])) == 12


# --- parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["dlah", "homogeneous-diffusion", "processor-only"])
@pytest.mark.parametrize("param,value", [("c", 0), ("c", 0.0), ("c", -0.3), ("receiver_fill", "middle"),
                                         ("include_self", 1)])
def test_bad_parameters_are_config_errors_naming_the_parameter(name, param, value):
    with pytest.raises(ConfigError, match=f"'{param}'"):
        make(name, {param: value})


def test_optimal_chain_rejects_bad_parameters_and_is_central():
    with pytest.raises(ConfigError, match="'min_points'"):
        make("optimal-chain", {"min_points": 0})
    assert make("optimal-chain").central and not make("dlah").central
