"""The pipelined-SPMD engine on an HNOW (000): timing law, conservation, determinism, bad input."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.model.availability import Pulse, Step
from dlbkit.families.spmd.model.hnow import (
    BANDWIDTH,
    BOUNDARY,
    DISK_ACCESS,
    DISK_LATENCY,
    LATENCY,
    MEMORY,
    PP,
    WORKLOAD,
    Hnow,
    Workstation,
)
from dlbkit.families.spmd.model.metrics import (
    confidence,
    dp_to_steady,
    half_width,
    loop_time_moments,
    loops_to_steady,
    smoothed,
    steps_to_steady,
)
from dlbkit.families.spmd.model.trace import eq41_time, loops, pipeline_finish_times, spmd_trace
from dlbkit.families.spmd.sim.engine import simulate_spmd
from dlbkit.families.spmd.sim.experiment import run_many

from support.profiles import examples


def moves(tr):
    """The trace's transfers as (loop, src, dst, dp), without their times."""
    return [(k, src, dst, n) for k, _t, src, dst, n in tr.transfers]


DEFAULT_LOOP = WORKLOAD / PP + 2 * (LATENCY + BOUNDARY / BANDWIDTH)  # 98.042 s (note §7.1)


class Halve(RepartitionBalancer):
    """Test rule: send a quarter of the DP difference to each neighbour that is 20% faster."""

    name = "test-halve"

    def __init__(self, *, ratio: float = 1.2):
        self.ratio = ratio

    def decide(self, view, node):
        out = []
        for j in view.neighbours[node]:
            if view.loop_time[node] > self.ratio * view.loop_time[j]:
                n = (view.points[node] - view.points[j]) // 4
                if n > 0:
                    out.append(Transfer(node, j, n))
        return out


class RandomMoves(RepartitionBalancer):
    """Test rule: random transfers to random neighbours, amounts up to twice what the sender holds."""

    name = "test-random"

    def __init__(self, *, p: float = 0.5):
        self.p = p

    def decide(self, view, node):
        out = []
        for j in view.neighbours[node]:
            if self.rng_.random() < self.p:
                out.append(Transfer(node, j, int(self.rng_.integers(0, 2 * view.points[node] + 2))))
        return out


class Central(RepartitionBalancer):
    name = "test-central"
    central = True

    def __init__(self):
        self.calls = []

    def decide(self, view, node):
        self.calls.append((view.loop, node))
        return [Transfer(0, 1, 1000)] if len(self.calls) == 1 else []


class Once(RepartitionBalancer):
    """Sends 1000 DP from node 0 to node 1 at its first decision; records every decision's loop."""

    name = "test-once"

    def __init__(self):
        self.seen = []

    def decide(self, view, node):
        self.seen.append((view.loop, node))
        return [Transfer(0, 1, 1000)] if node == 0 and len([s for s in self.seen if s[1] == 0]) == 1 else []


# --- timing law --------------------------------------------------------------------------------------
def test_default_loop_time_is_98_042_seconds():
    """R7: Table 8.1 defaults, no noise: 9.8e6/1e5 compute + 2 × (1 ms + 200,000/1e7) boundaries."""
    tr = simulate_spmd(Hnow.homogeneous(10), None, loops=5, noise=0)
    assert DEFAULT_LOOP == pytest.approx(98.042, abs=1e-12)
    np.testing.assert_allclose(tr.series["loop_time"], DEFAULT_LOOP, rtol=1e-15)


@pytest.mark.parametrize("layout", ["line", "ring"])
def test_deterministic_total_time_is_iterations_times_slowest_loop(layout):
    """R6 (000 §8.1, eq 4.1): no noise, no balancing: makespan = loops × slowest loop time."""
    speeds = [PP, 0.5 * PP, 2 * PP, 0.8 * PP, PP, 3 * PP]
    h = Hnow(tuple(Workstation(speed=s) for s in speeds), layout=layout)
    loops = 700
    tr = simulate_spmd(h, None, loops=loops, noise=0)
    slowest = tr.series["loop_time"][0].max()
    assert tr.makespan == pytest.approx(loops * slowest, rel=1e-9)
    assert eq41_time(tr) == pytest.approx(loops * slowest, rel=1e-9)


def test_line_ends_exchange_one_boundary():
    tr = simulate_spmd(Hnow.homogeneous(3, layout="line"), None, loops=1, noise=0)
    one = LATENCY + BOUNDARY / BANDWIDTH
    np.testing.assert_allclose(tr.series["loop_time"][0], [98 + one, 98 + 2 * one, 98 + one])


def test_swapped_points_cost_disk_time_and_latency():
    """DP beyond RAM cost 1/2.1e6 s each plus the 10 ms disk latency (Table 8.1)."""
    w = 12_000_000
    tr = simulate_spmd(Hnow.homogeneous(3, points=w), None, loops=1, noise=0)
    expect = w / PP + (w - MEMORY) / DISK_ACCESS + DISK_LATENCY + 2 * (LATENCY + BOUNDARY / BANDWIDTH)
    np.testing.assert_allclose(tr.series["loop_time"][0], expect)


def test_slow_link_is_paid_by_both_ends_of_it():
    h = Hnow.homogeneous(4).with_workstation(0, bandwidth=1e5, latency=0.01)
    tr = simulate_spmd(h, None, loops=1, noise=0)
    slow, fast = 0.01 + BOUNDARY / 1e5, LATENCY + BOUNDARY / BANDWIDTH
    np.testing.assert_allclose(tr.series["loop_time"][0], [98 + 2 * slow, 98 + slow + fast, 98 + 2 * fast, 98 + slow + fast])


def test_noise_is_uniform_within_ten_percent_and_centred():
    h = Hnow.homogeneous(20, points=int(PP), boundary=0.0, latency=0.0)
    tr = simulate_spmd(h, None, loops=2000, seed=3)
    speed = 1.0 / tr.series["loop_time"]  # PP × u with points = PP
    assert speed.min() >= 0.9 and speed.max() <= 1.1
    assert speed.mean() == pytest.approx(1.0, abs=2e-3)
    assert speed.std() == pytest.approx(0.2 / math.sqrt(12), rel=0.02)


def test_step_disturbance_between_two_loops():
    """000 §8.4.2: resources at WS 0 reduced at loop 100 and released at loop 600 (loop clock)."""
    h = Hnow.homogeneous(5).with_workstation(0, availability=Pulse(start=100, duration=500, level=0.5))
    lt = simulate_spmd(h, None, loops=700, noise=0).series["loop_time"][:, 0]
    np.testing.assert_allclose(lt[:100], DEFAULT_LOOP)
    np.testing.assert_allclose(lt[100:600], DEFAULT_LOOP + 98.0)
    np.testing.assert_allclose(lt[600:], DEFAULT_LOOP)


def test_memory_disturbance_makes_a_node_swap():
    h = Hnow.homogeneous(3).with_workstation(1, memory_availability=Step(at=10, level=0.5))
    lt = simulate_spmd(h, None, loops=20, noise=0).series["loop_time"][:, 1]
    assert lt[9] == pytest.approx(DEFAULT_LOOP)
    assert lt[10] == pytest.approx(DEFAULT_LOOP + (WORKLOAD - MEMORY / 2) / DISK_ACCESS + DISK_LATENCY)


def test_pipeline_waits_for_slow_neighbours():
    lt = np.array([[1.0, 3.0, 1.0], [1.0, 1.0, 1.0]])
    np.testing.assert_allclose(pipeline_finish_times(lt, "line"), [[1, 3, 1], [4, 4, 4]])


@settings(max_examples=examples(200), deadline=None)
@given(P=st.integers(1, 9), loops=st.integers(1, 6), layout=st.sampled_from(["ring", "line"]), data=st.data())
def test_pipeline_is_the_recurrence_over_each_node_and_its_neighbours(P, loops, layout, data):
    """end[k, i] = max(end[k-1, j] for j in {i} ∪ N(i)) + loop_time[k, i], exactly (max and one sum
    per loop), the ends of a ring of more than two nodes being neighbours."""
    lt = np.array(data.draw(st.lists(st.lists(st.floats(0, 1e3), min_size=P, max_size=P), min_size=loops,
                                     max_size=loops)), dtype=float).reshape(loops, P)
    end = [0.0] * P
    want = []
    for k in range(loops):
        near = [{i, i - 1, i + 1} & set(range(P)) for i in range(P)]
        if layout == "ring" and P > 2:
            near = [{i, (i - 1) % P, (i + 1) % P} for i in range(P)]
        end = [max(end[j] for j in near[i]) + lt[k, i] for i in range(P)]
        want.append(end)
    assert pipeline_finish_times(lt, layout).tolist() == want


# --- balancing mechanics --------------------------------------------------------------------------------
def test_transfer_cost_next_loop_and_window_reset():
    """A transfer decided at the end of loop 9 costs both ends latency + dp/BW in loop 10, and their
    next window starts at loop 11 (the loop paying the transfer is not measured)."""
    b = Once()
    tr = simulate_spmd(Hnow.homogeneous(5, layout="line"), b, loops=30, window=10, noise=0)
    assert moves(tr) == [(9, 0, 1, 1000)]
    cost = LATENCY + 1000 / BANDWIDTH
    assert tr.series["loop_time"][10, 0] - tr.series["loop_time"][11, 0] == pytest.approx(cost)
    assert tr.series["loop_time"][10, 1] - tr.series["loop_time"][11, 1] == pytest.approx(cost)
    assert tr.series["points"][10].tolist() == [WORKLOAD - 1000, WORKLOAD + 1000, WORKLOAD, WORKLOAD, WORKLOAD]
    assert tr.meta["steps"].tolist() == [1, 0, 0, 0, 0]


def test_neighbours_wait_for_a_fresh_status():
    """Line 0–1–2–3–4, transfer 0→1 at the end of loop 9: node 2 does not act on 1's stale status; it
    waits until 1 has measured a fresh window (loops 11–20), then decides with 0 and 1 (view.loop 21).
    Nodes 3 and 4 decide at 10 and 20 as usual. Nobody decides after the last loop (30): no loop would
    carry the moves out (the windows ending there, nodes 2, 3 and 4's, are measured but not decided)."""
    b = Once()
    simulate_spmd(Hnow.homogeneous(5, layout="line"), b, loops=30, window=10, noise=0)
    assert b.seen == [(10, 0), (10, 3), (10, 4), (20, 3), (20, 4), (21, 0), (21, 1), (21, 2)]
    b = Once()
    simulate_spmd(Hnow.homogeneous(5, layout="line"), b, loops=31, window=10, noise=0)
    assert b.seen[-3:] == [(30, 2), (30, 3), (30, 4)]  # with a loop after it, the window at 30 is decided


def test_central_balancer_decides_once_per_window_for_all():
    b = Central()
    tr = simulate_spmd(Hnow.homogeneous(4), b, loops=40, window=10, noise=0)
    assert all(node == -1 for _, node in b.calls)
    assert moves(tr) == [(9, 0, 1, 1000)]
    assert tr.meta["steps"].tolist() == [1, 0, 0, 0]


def test_balancing_evens_out_a_heavy_node():
    h = Hnow.homogeneous(5).with_workstation(0, points=4 * WORKLOAD)
    tr = simulate_spmd(h, Halve(), loops=400, seed=1)
    start = tr.series["loop_time"][:10].mean(axis=0)
    end = tr.series["loop_time"][-10:].mean(axis=0)
    assert start.max() / start.min() > 3
    assert end.max() / end.min() < 1.25
    assert tr.meta["steps"][0] >= 1 and tr.moved > 0


def _check_blocks(tr, ring):
    total = tr.meta["total_points"]
    assert (tr.series["points"].sum(axis=1) == total).all()
    assert (tr.series["points"] >= 1).all()
    nxt = np.roll(tr.series["starts"], -1, axis=1) if ring else tr.series["starts"][:, 1:]
    cur = tr.series["starts"] if ring else tr.series["starts"][:, :-1]
    pts = tr.series["points"] if ring else tr.series["points"][:, :-1]
    assert ((cur + pts - nxt) % total == 0).all()  # each block ends where the next begins
    if not ring:
        assert (tr.series["starts"][:, 0] == 0).all()


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 7), layout=st.sampled_from(["line", "ring"]), seed=st.integers(0, 10_000),
       window=st.integers(1, 4), points=st.lists(st.integers(1, 50), min_size=7, max_size=7))
def test_points_are_conserved_and_blocks_stay_contiguous(n, layout, seed, window, points):
    h = Hnow(tuple(Workstation(points=p) for p in points[:n]), layout=layout)
    tr = simulate_spmd(h, RandomMoves(), loops=40, window=window, seed=seed)
    _check_blocks(tr, layout == "ring" and n > 2)
    for loop, src, dst, dp in moves(tr):
        assert dst in h.neighbours(src) and dp >= 1


def test_same_seed_same_trace_and_seeds_differ():
    h = Hnow.homogeneous(6).with_workstation(2, points=3 * WORKLOAD)
    a = simulate_spmd(h, RandomMoves(), loops=60, seed=7)
    b = simulate_spmd(h, RandomMoves(), loops=60, seed=7)
    c = simulate_spmd(h, RandomMoves(), loops=60, seed=8)
    np.testing.assert_array_equal(a.series["loop_time"], b.series["loop_time"])
    assert moves(a) == moves(b) and a.meta["steps"].tolist() == b.meta["steps"].tolist()
    assert not np.array_equal(a.series["loop_time"], c.series["loop_time"])


def test_many_seeds_in_processes_equal_serial():
    h = Hnow.homogeneous(4).with_workstation(0, points=2 * WORKLOAD)
    serial = run_many(h, Halve(), range(4), loops=50, processes=1)
    parallel = run_many(h, Halve(), range(4), loops=50, processes=2)
    assert repr(serial) == repr(parallel)  # NaN-aware equality


# --- bad input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, field", [
    (lambda: Hnow((Workstation(memory=-1.0),) * 3), "workstations[0].memory"),
    (lambda: Hnow((Workstation(),), layout="ring"), "layout"),
    (lambda: Hnow((Workstation(speed=0.0),) * 2), "workstations[0].speed"),
    (lambda: Hnow((Workstation(points=0),) * 2), "workstations[0].points"),
    (lambda: Hnow((Workstation(),) * 2, layout="mesh"), "layout"),
    (lambda: Hnow((Workstation(),) * 2, noise=1.5), "noise"),
    (lambda: Hnow((Workstation(availability=0.5),) * 2), "workstations[0].availability"),
])
def test_bad_hnow_names_the_field(make, field):
    with pytest.raises(ConfigError) as e:
        make()
    assert e.value.field == field


def test_a_line_of_one_runs():
    tr = simulate_spmd(Hnow((Workstation(),), layout="line"), Halve(), loops=3, noise=0)
    assert tr.series["loop_time"][0, 0] == pytest.approx(98.0)


@pytest.mark.parametrize("kw, field", [({"loops": 0}, "loops"), ({"loops": 5, "window": 0}, "window"),
                                      ({"loops": 5, "noise": 2.0}, "noise")])
def test_bad_run_arguments_name_the_field(kw, field):
    with pytest.raises(ConfigError) as e:
        simulate_spmd(Hnow.homogeneous(2), None, **kw)
    assert e.value.field == field


def test_a_non_repartition_balancer_is_refused():
    from dlbkit.balancers.registry import make
    with pytest.raises(ConfigError) as e:
        simulate_spmd(Hnow.homogeneous(2), make("ss"), loops=3)
    assert e.value.field == "balancer"


def test_transfer_to_a_non_neighbour_is_an_error():
    class Far(RepartitionBalancer):
        name = "test-far"

        def decide(self, view, node):
            return [Transfer(0, 2, 5)]

    with pytest.raises(DlbkitError, match="between neighbours"):
        simulate_spmd(Hnow.homogeneous(5), Far(), loops=20)


# --- metrics ---------------------------------------------------------------------------------------------
def test_moments_and_smoothing():
    h = Hnow(tuple(Workstation(speed=s) for s in (PP, PP / 2)), layout="line")
    tr = simulate_spmd(h, None, loops=4, noise=0)
    mean, var = loop_time_moments(tr)
    one = LATENCY + BOUNDARY / BANDWIDTH
    np.testing.assert_allclose(mean, (98 + 196) / 2 + one)
    np.testing.assert_allclose(var, 49.0 ** 2)  # eq 7.2 divides by P
    assert smoothed(np.arange(10.0), 5).tolist() == [2.0, 7.0]


def test_loops_to_steady():
    h = Hnow.homogeneous(5).with_workstation(0, points=4 * WORKLOAD)
    tr = simulate_spmd(h, Halve(), loops=400, seed=1)
    last = max(t[0] for t in tr.transfers)
    assert loops_to_steady(tr) == last + 1
    assert loops_to_steady(tr, since=100) == last + 1 - 100
    assert math.isnan(loops_to_steady(tr, until=last + 20))  # two quiet windows only
    assert loops_to_steady(tr, c=0.3) == last + 1
    assert loops_to_steady(simulate_spmd(Hnow.homogeneous(3), None, loops=40)) == 0


def _trace_with(transfers, P=6, layout="line", loops=200, window=10):
    z = np.zeros((loops, P))
    return spmd_trace(layout=layout, window=window, loop_time=z, points=z.astype(np.int64),
                      starts=z.astype(np.int64), transfers=transfers)


def test_steps_to_steady_counts_each_workstation_until_its_neighbourhood_settles():
    # a wave 0→1→2→3 (12 loops a hop); node 3 re-triggered 40 loops after its neighbourhood went quiet;
    # node 5 acting at loop 190, after its neighbourhood's burst (node 4 receiving at 74) ended
    tr = _trace_with([(9, 0, 1, 100), (21, 1, 2, 50), (21, 1, 2, 5), (33, 2, 3, 25), (74, 3, 4, 7),
                      (190, 5, 4, 3)])
    assert steps_to_steady(tr).tolist() == [1, 1, 1, 0, 0, 0]  # node 1: one decision at loop 21, two transfers
    assert dp_to_steady(tr) == 100 + 55 + 25
    # from loop 70 on, node 3's action at 74 opens its neighbourhood's first burst
    assert steps_to_steady(tr, since=70).tolist() == [0, 0, 0, 1, 0, 0]
    assert steps_to_steady(tr, since=70, until=74).tolist() == [0] * 6
    # a burst that runs into the end of the run never settles: every action counts
    assert steps_to_steady(_trace_with([(175, 5, 4, 3), (190, 5, 4, 3)])).tolist() == [0, 0, 0, 0, 0, 2]
    # 30 loops (3 windows) without a decision after loop 9 ends the burst (loops 10–39); 29 do not
    assert steps_to_steady(_trace_with([(9, 0, 1, 1), (40, 0, 1, 1)])).tolist() == [1, 0, 0, 0, 0, 0]
    assert steps_to_steady(_trace_with([(9, 0, 1, 1), (39, 0, 1, 1)])).tolist() == [2, 0, 0, 0, 0, 0]
    # on a ring the wrap-around pair are neighbours: node 5's action at 30 continues node 0's burst
    # and node 0's action at 61 comes 30 loops after that burst: not counted
    ring = _trace_with([(9, 0, 5, 1), (30, 5, 0, 1), (61, 0, 1, 1)], layout="ring")
    assert steps_to_steady(ring).tolist() == [1, 0, 0, 0, 0, 1]
    assert steps_to_steady(_trace_with([])).tolist() == [0] * 6


@settings(max_examples=examples(200), deadline=None)
@given(P=st.integers(2, 8), layout=st.sampled_from(["line", "ring"]),
       moves=st.lists(st.tuples(st.integers(0, 199), st.integers(0, 7), st.booleans(), st.integers(1, 99)),
                      max_size=25),
       since=st.integers(0, 199))
def test_steps_to_steady_counts_a_subset_of_the_actions_and_all_of_them_when_nothing_is_quiet(P, layout, moves,
                                                                                              since):
    transfers = sorted((k, i % P, (i + (1 if right else -1)) % P, n) for k, i, right, n in moves)
    tr = _trace_with(transfers, P=P, layout=layout)
    s = steps_to_steady(tr, since=since)
    run = np.zeros(P, np.int64)
    for k, src in {(t[0], t[1]) for t in transfers if t[0] >= since}:
        run[src] += 1
    assert ((0 <= s) & (s <= run)).all()
    assert 0 <= dp_to_steady(tr, since=since) <= sum(t[3] for t in transfers if t[0] >= since)
    # a quiet period longer than the run never comes: every action from *since* on counts
    assert steps_to_steady(tr, since=since, quiet_windows=21).tolist() == run.tolist()
    # the first action after *since* always counts: it opens its neighbourhood's burst
    first = [t for t in transfers if t[0] >= since]
    if first:
        assert s[first[0][1]] >= 1


def test_steps_to_steady_never_exceeds_the_run_count_and_equals_it_when_nothing_recurs():
    h = Hnow.homogeneous(5).with_workstation(0, points=4 * WORKLOAD)
    tr = simulate_spmd(h, Halve(), loops=400, seed=1)
    s = steps_to_steady(tr)
    assert (s <= tr.meta["steps"]).all() and s.sum() > 0
    assert dp_to_steady(tr) <= tr.moved
    assert steps_to_steady(tr, since=loops(tr)).sum() == 0


def test_confidence_half_widths_follow_z_s_over_root_n():
    """000 Table 8.4: s = 0.470413, n = 1080 → 0.028055 (95%) and 0.023545 (90%)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=1080)
    x = (x - x.mean()) / x.std(ddof=1) * 0.470413 + 0.2194444
    assert half_width(x, 0.95) == pytest.approx(0.028055334, rel=1e-4)
    assert half_width(x, 0.90) == pytest.approx(0.023544791, rel=1e-4)
    c = confidence(x)
    assert c["n"] == 1080 and c["mean"] == pytest.approx(0.2194444)
