"""Invariants of the SPMD family over every registered repartition balancer (and none).

sim/test_spmd.py's property runs a test-only random rule on the HNOW engine; model/test_spmd_workload.py
runs each registry rule on one platform. Here every rule, on the platform engine (dlbkit.simulate), with
random initial splits, node speeds, a node losing its CPU, line or ring, and any window: the data points
are conserved in every loop, each loop's points are the previous loop's plus the transfers decided after
it (nothing lost, nothing made up), blocks stay contiguous and non-empty, transfers go to neighbours,
every loop is completed on every node, and the same seed gives the same trace. Real runs
(dlbkit.run_spmd) under every rule equal the serial loop and keep every interior row owned once.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import Network, Node, Platform, Spmd, Step
from dlbkit.balancers.registry import REGISTRY

from support.profiles import examples

REPARTITION = sorted(n for n, c in REGISTRY.items() if c.kind == "repartition") + [None]

cases = st.fixed_dictionaries({
    "balancer": st.sampled_from(REPARTITION), "layout": st.sampled_from(["line", "ring"]),
    "points": st.lists(st.integers(1, 400), min_size=2, max_size=6),
    "speeds": st.lists(st.sampled_from([0.5e4, 1e4, 3e4]), min_size=6, max_size=6),
    "slow": st.booleans(), "loops": st.integers(1, 40), "window": st.integers(1, 5),
    "noise": st.sampled_from([0.0, 0.1]), "seed": st.integers(0, 2**31),
})


def run(c):
    n = len(c["points"])
    p = Platform([Node(f"ws{i}", speed=c["speeds"][i], availability=Step(at=0.05, level=0.1) if c["slow"] and i == 0
                       else 1.0) for i in range(n)], Network(latency=1e-4, bandwidth=1e7, topology="ring" if c["layout"] == "ring" and n > 2
                                                             else "chain"))
    w = Spmd(points=c["points"], boundary=5, loops=c["loops"], noise=c["noise"], layout=c["layout"])
    return dlbkit.simulate(p, w, c["balancer"], seed=c["seed"], window=c["window"]).trace


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_points_are_conserved_and_move_only_as_the_transfers_say(c):
    tr = run(c)
    n, total = len(c["points"]), sum(c["points"])
    pts = tr.series["points"]
    assert pts.shape == (c["loops"], n) and tr.meta["total_points"] == total
    assert pts[0].tolist() == list(c["points"])
    assert (pts.sum(axis=1) == total).all() and (pts >= 1).all()
    ring = tr.meta["layout"] == "ring" and n > 2
    expected = pts[0].astype(np.int64).copy()
    for k in range(c["loops"] - 1):  # loop k + 1 holds loop k's points plus what was decided after loop k
        for loop, _t, src, dst, dp in tr.transfers:
            if loop == k:
                assert dp >= 1 and (abs(src - dst) == 1 or ring and abs(src - dst) == n - 1)
                expected[src] -= dp
                expected[dst] += dp
        assert pts[k + 1].tolist() == expected.tolist(), k
    assert all(loop < c["loops"] - 1 for loop, *_ in tr.transfers)  # nothing decided after the last loop
    # every loop completed on every node: one interval per loop and node, its block contiguous
    assert len(tr.node) == c["loops"] * n
    lt = tr.series["loop_time"]
    assert lt.shape == (c["loops"], n) and np.isfinite(lt).all() and (lt > 0).all()
    starts = tr.series["starts"]
    nxt = np.roll(starts, -1, axis=1) if ring else starts[:, 1:]
    assert ((starts[:, :nxt.shape[1]] + pts[:, :nxt.shape[1]] - nxt) % total == 0).all()
    if not ring:
        assert (starts[:, 0] == 0).all()


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_same_seed_same_trace(c):
    a, b = run(c), run(c)
    assert a.transfers == b.transfers
    for k in ("loop_time", "points", "starts"):
        np.testing.assert_array_equal(a.series[k], b.series[k])


def test_different_seeds_draw_different_noise():
    c = {"balancer": "dlah", "layout": "ring", "points": [100, 200, 300, 50], "speeds": [1e4] * 6, "slow": True,
         "loops": 20, "window": 2, "noise": 0.1}
    a, b = run({**c, "seed": 1}), run({**c, "seed": 2})
    assert not np.array_equal(a.series["loop_time"], b.series["loop_time"])


# --- the real runtime -------------------------------------------------------------------------------------
def mean3(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3.0


def serial(step, domain, iterations):
    u = np.array(domain)
    for _ in range(iterations):
        u[1:-1] = step(u)
    return u


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(8, 40), workers=st.integers(2, 3), iterations=st.integers(0, 25), window=st.integers(1, 4),
       balancer=st.sampled_from(REPARTITION), slow=st.sampled_from([1.0, 0.25]), seed=st.integers(0, 1000))
def test_real_runs_equal_the_serial_loop_and_keep_every_row_once(rows, workers, iterations, window, balancer, slow,
                                                                seed):
    domain = np.random.default_rng(seed).random(rows)
    r = dlbkit.run_spmd(mean3, domain, iterations=iterations, window=window, workers=workers, balancer=balancer,
                        emulate=[slow] + [1.0] * (workers - 1), seed=seed)
    np.testing.assert_array_equal(r.domain, serial(mean3, domain, iterations))
    if iterations:
        pts = r.trace.series["points"]
        assert (pts.sum(axis=1) == rows - 2).all() and (pts >= 1).all()


def test_no_transfer_is_decided_after_the_last_loop():
    """Regression (found by the property above): a window ending at the last loop used to be decided,
    recording a transfer (and counting it in dp_moved) that no loop ever carried out. The real runtime
    never balances after its last iteration either."""
    c = {"balancer": "dlah", "layout": "line", "points": [1, 2], "speeds": [1e4, 5e3, 5e3, 5e3, 5e3, 5e3],
         "slow": False, "loops": 1, "window": 1, "noise": 0.0, "seed": 0}
    assert run(c).transfers == []
    tr = run({**c, "points": [400, 10], "loops": 12, "window": 3})  # windows end at loops 2, 5, 8 and 11 (the last)
    assert tr.transfers and all(loop < 11 for loop, *_ in tr.transfers)
