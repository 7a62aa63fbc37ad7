"""Sánchez et al.'s round-based balancer (004): Eq. 1, the comm-aware form, guards, rounding, clipping."""

import copy
import math

import numpy as np
import pytest

from dlbkit import ConfigError, Divisible, LoopView, Network, Node, Platform, make, simulate
from dlbkit.families.divisible.balancers import Sanchez
from dlbkit.families.divisible.balancers.sanchez import eq1, eq1_comm_aware
from dlbkit.families.divisible.model.metrics import rounds_to_balance

# notes/004_sanchez.md §6.7
EXE, CALC, UNITS = [2.0, 3.0, 6.0], [1.5, 2.5, 5.5], [10, 10, 10]


def round_view(units=UNITS, exe=EXE, calc=CALC, send=None, remaining=1000, rnd=1):
    """The master's view after a round: counts, t_exe, t_calc and blocking-send times per worker."""
    n = len(units)
    return LoopView(n_items=10**7, n_nodes=n, speeds=[1.0] * n, remaining=remaining, round=rnd,
                    last_chunk=list(units), exe_time=list(exe), calc_time=list(calc),
                    send_time=list(send) if send is not None else [0.0] * n)


def started(view, **params):
    b = Sanchez(**params)
    b.start(view)
    return b


def test_eq1_hand_example_of_the_note():
    """§6.7: t_unit = [0.15, 0.25, 0.55], t_exemax = 6 → [36.67, 22, 10] → floor [36, 22, 10]."""
    np.testing.assert_allclose(eq1(UNITS, EXE, CALC), [5.5 / 0.15, 22.0, 10.0], rtol=1e-12)
    view = round_view()
    assert started(view).allocate(view) == [36, 22, 10]


def test_round_zero_gives_every_worker_c0_in_rank_order():
    view = LoopView(n_items=1000, n_nodes=4, speeds=[1.0] * 4)
    b = started(view, c0=7)
    assert b.allocate(view) == [7, 7, 7, 7]
    assert b.send_order(view) == [0, 1, 2, 3]


@pytest.mark.parametrize("seed", range(20))
def test_slowest_worker_keeps_its_count(seed):
    """Eq. 1 gives the worker with the largest t_exe exactly its previous count (note §2.4)."""
    rng = np.random.default_rng(seed)
    units = rng.integers(1, 50, 5).tolist()
    calc = rng.uniform(0.1, 5.0, 5)
    exe = (calc + rng.uniform(0.0, 1.0, 5)).tolist()
    slow = int(np.argmax(exe))
    est = eq1(units, exe, calc.tolist())
    assert est[slow] == pytest.approx(units[slow], rel=1e-12)
    view = round_view(units, exe, calc.tolist(), remaining=10**7)
    assert started(view).allocate(view)[slow] == units[slow]
    assert all(e >= u * (1 - 1e-12) for e, u in zip(est, units))  # the faster ones scale up


def test_floor_tolerance_keeps_a_float_noisy_count():
    """The slowest worker's 7 units come back as 6.999999999999998 in floats; floor(x + 1e-9) keeps 7."""
    assert eq1([7], [1.1], [0.2])[0] < 7
    view = round_view([7], [1.1], [0.2])
    assert started(view).allocate(view) == [7]


def test_clip_proportional_keeps_ratios_and_uses_largest_remainders():
    """[36, 22, 10] into 30 items: exact [15.88, 9.71, 4.41] → [16, 10, 4]."""
    view = round_view(remaining=30)
    assert started(view).allocate(view) == [16, 10, 4]


def test_clip_in_order_fills_workers_in_send_order():
    view = round_view(remaining=50)
    assert started(view, clip="in_order").allocate(view) == [36, 14, 0]


def test_comm_aware_hand_example_slowest_first():
    """Order by last t_exe descending → [2, 1, 0]; budgets 6, 6 − 0.25, 6 − 1.25 seconds.

    worker 2: 6/6·10 = 10; worker 1: 5.75/3·10 = 19.17 → 19; worker 0: 4.75/2·10 = 23.75 → 23.
    """
    send = [0.5, 1.0, 0.25]
    view = round_view(send=send)
    b = started(view, estimator="eq1_comm_aware")
    assert b.send_order(view) == [2, 1, 0]
    np.testing.assert_allclose(eq1_comm_aware(UNITS, EXE, send, [2, 1, 0]), [23.75, 57.5 / 3, 10.0])
    assert b.allocate(view) == [23, 19, 10]


def test_comm_aware_rank_order():
    """Rank order [0, 1, 2]: 6/2·10 = 30; (6 − 0.5)/3·10 = 18.33 → 18; (6 − 1.5)/6·10 = 7.5 → 7."""
    view = round_view(send=[0.5, 1.0, 0.25])
    b = started(view, estimator="eq1_comm_aware", order="rank")
    assert b.send_order(view) == [0, 1, 2]
    assert b.allocate(view) == [30, 18, 7]


def test_negative_budget_gives_min_units():
    """Sends before a worker longer than t_exemax: a negative numerator → min_units."""
    view = round_view(send=[5.0, 5.0, 7.0])
    b = started(view, estimator="eq1_comm_aware", min_units=2)
    est = eq1_comm_aware(UNITS, EXE, [5.0, 5.0, 7.0], [2, 1, 0])
    assert est[1] < 0 and est[0] < 0
    assert b.allocate(view) == [2, 2, 10]


def test_zero_numerator_and_zero_calc_give_min_units():
    """A worker that measured no compute and no slack (numerator 0) gets min_units, no division by zero."""
    view = round_view([10, 10], [1.0, 2.0], [0.5, 0.0])  # worker 1 is slowest, t_calc = 0
    assert eq1([10, 10], [1.0, 2.0], [0.5, 0.0])[1] == 0.0
    assert started(view, min_units=3).allocate(view) == [30, 3]


def test_unmeasured_worker_gets_c0():
    """A worker with no units last round (a newcomer, note §2.7.5) starts again at c0."""
    view = round_view([10, 0, 10], [2.0, 0.0, 6.0], [1.5, 0.0, 5.5])
    assert started(view, c0=4).allocate(view) == [36, 4, 10]


def test_max_units_caps_every_count():
    view = round_view()
    assert started(view, max_units=25).allocate(view) == [25, 22, 10]
    with pytest.raises(ConfigError, match="max_units"):
        started(view, max_units=1, min_units=2)


def test_rounding_nearest():
    view = round_view()
    assert started(view, rounding="nearest").allocate(view) == [37, 22, 10]


def test_rounding_carry_keeps_the_fraction():
    """36.67 per round: 36, 37, 37 (carry .67, .33, 0) — three rounds sum to 110 = 3 × 36.67."""
    view = round_view()
    b = started(view, rounding="carry")
    got = [b.allocate(view)[0] for _ in range(3)]
    assert got == [36, 37, 37]
    assert b.carry_[0] == pytest.approx(0.0, abs=1e-9)


def test_auto_chooses_by_the_measured_ratio():
    """r = Σ t_calc / Σ t_com_s after round 0: no sends → Eq. 1; sends longer than compute → comm-aware."""
    compute = round_view(send=[0.0] * 3)
    b = started(compute, estimator="auto")
    assert b.allocate(compute) == [36, 22, 10]
    assert b.estimator_ == "eq1" and math.isinf(b.r_)
    comm = round_view(send=[10.0, 10.0, 10.0])
    b = started(comm, estimator="auto", r_threshold=1.0)
    b.allocate(comm)
    assert b.estimator_ == "eq1_comm_aware"
    assert b.r_ == pytest.approx(9.5 / 30.0)
    assert b.send_order(comm) == [2, 1, 0]


def test_chunk_for_self_scheduling_uses_last_chunks():
    """No rounds: Eq. 1 with t_exe = t_calc = last compute time; the unmeasured worker gets c0."""
    view = LoopView(n_items=1000, n_nodes=3, speeds=[1.0] * 3, last_chunk=[10, 10, 0],
                    last_time=[1.0, 2.0, 0.0])
    b = started(view, c0=5)
    assert [b.chunk(view, w) for w in range(3)] == [20, 10, 5]


def test_balancer_only_reads_the_view():
    view = round_view(send=[0.5, 1.0, 0.25])
    before = copy.deepcopy(view)
    for est in ("eq1", "eq1_comm_aware", "auto"):
        b = started(view, estimator=est)
        b.allocate(view)
        b.send_order(view)
        b.chunk(view, 0)
    assert view == before


def test_parameters_follow_the_conventions():
    assert set(Sanchez._parameter_constraints) == set(Sanchez.param_names())
    b = make("sanchez", {"c0": 20, "estimator": "auto"})
    assert isinstance(b, Sanchez) and b.get_params()["c0"] == 20
    assert b.clone().get_params() == b.get_params()
    for bad in ({"estimator": "eq2"}, {"c0": 0}, {"rounding": "ceil"}, {"order": "fastest_first"},
                {"clip": "none"}, {"min_units": 0}, {"r_threshold": -1.0}):
        with pytest.raises(ConfigError):
            make("sanchez", bad)


def test_start_resets_learned_state():
    view = round_view()
    b = started(view, rounding="carry", estimator="auto")
    b.allocate(view)
    b.start(view)
    assert b.carry_ == [0.0, 0.0, 0.0] and b.estimator_ is None and math.isnan(b.r_)


def test_engine_run_balances_after_one_round():
    """Speeds 1 and 4, compute-bound: round 0 equal, round 1 proportional (t_exe within 1%), all items done."""
    p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=4.0)], Network(latency=1e-4, bandwidth=1e8))
    r = simulate(p, Divisible(1000), Sanchez(c0=10), mechanism="rounds", master="m")
    rounds = r.trace.round_table()
    assert rounds_to_balance(r.trace) == 1.0
    assert sum(r.trace.count) == 1000
    first = rounds["round"] == 1
    assert rounds["count"][first].tolist() == [10, 40]
    exe = rounds["exe_time"][first]
    assert exe.max() / exe.min() == pytest.approx(1.0, abs=0.01)
