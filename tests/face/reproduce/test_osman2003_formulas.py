"""000 (Osman 2003) closed forms: the reproduction items R1–R5, R8 and R15 of notes/000_osman.md §7.3."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.families.spmd.balancers.hnow_cost import NORMAL, classify, local_average, status
from dlbkit.families.spmd.model.bounds import (
    Z90,
    Z95,
    ci_half_width,
    dlah_bound_steps,
    global_variance_change,
    loop_time_variance,
    mean_std_ci,
    pilot_extrapolation,
    pipeline_efficiency,
    pipeline_speedup,
    propagation,
    propagation_load,
    thesis_bound_steps,
)
from dlbkit.families.spmd.model.view import SpmdView

from support.profiles import examples

# notes/000 §6.3: c → (log2 arg to 2 places, thesis Steps, idealised sim) for (m=10, P=100), (m=50, P=10)
BOUND_TABLE = {
    0.01: ((8.80, 9, 9), (11.24, 10, 9)),
    0.02: ((7.78, 8, 8), (10.23, 10, 9)),
    0.05: ((6.42, 7, 7), (8.86, 9, 9)),
    0.10: ((5.34, 6, 6), (7.78, 8, 8)),
    0.20: ((4.17, 5, 5), (6.61, 7, 7)),
    0.30: ((3.39, 4, 4), (5.84, 6, 6)),
    0.50: ((2.17, 3, 3), (4.61, 5, 5)),
    0.70: ((0.95, 1, 1), (3.39, 4, 4)),
    0.90: ((-1.00, 0, 1), (1.44, 2, 2)),
}


@pytest.mark.parametrize("c", sorted(BOUND_TABLE))
def test_r1_theorem_7_4_bound_table_is_reproduced_exactly(c):
    for (m, P), (log2_arg, thesis, sim) in zip(((10, 100), (50, 10)), BOUND_TABLE[c]):
        assert round(math.log2((m - 1) * (1 - c) / (2 * c)), 2) == pytest.approx(log2_arg, abs=1e-12)
        assert thesis_bound_steps(m, c, P) == thesis
        assert dlah_bound_steps(m, c, P) == sim
        assert len(propagation(m, c, P)) == sim


def test_r1_corrected_bound_equals_the_idealised_simulation_everywhere():
    """The oracle formula matches the propagation model over a grid (notes/000 §6.3)."""
    for P in (10, 100):
        for m in range(2, 101):
            for c in (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95):
                assert len(propagation(m, c, P)) == dlah_bound_steps(m, c, P), (m, c, P)


def test_r1_bound_limits_c_to_zero_and_one():
    assert thesis_bound_steps(10, 0.0, 100) == 100  # strict balance: capped at P
    assert thesis_bound_steps(10, 1.0, 100) == 0  # no balancing


@pytest.mark.parametrize("m,c,P,base", [(10, 0.01, 100, 1.0), (50, 0.01, 10, 1.0), (7.5, 0.05, 40, 3.0)])
def test_r2_propagation_loads_follow_eq_7_17_to_float_eps(m, c, P, base):
    loads = propagation(m, c, P, base)
    assert loads
    for i, x in enumerate(loads, start=1):
        assert math.isclose(x, propagation_load(m, i, base), rel_tol=4 * 2.0**-52)
    assert propagation_load(m, 1) == (m + 1) / 2  # eq 7.13
    assert propagation_load(m, 2) == (m + 3) / 4  # eq 7.15


def test_r3_pipeline_speedup_of_the_three_workstation_run():
    """§5.1: T_comm = 0.0012 s, T_calc = 0.637 s, P = 3 → S ≈ 2.99 (eq 5.3)."""
    s = pipeline_speedup(3, t_comp=0.637, t_comm=0.0012)
    assert round(s, 4) == 2.9944
    assert s == pytest.approx(3 / (1 + 0.0012 / 0.637), rel=1e-15)
    assert pipeline_speedup(3, 0.637, 0.0012, n_iters=10**9) == pytest.approx(s, rel=1e-8)  # eq 5.2 → 5.3
    assert pipeline_speedup(4, 1.0, 0.0, n_iters=5) == 4 * 5 / 8  # eq 5.2 fill/drain: L·P/(L+P−1)
    assert pipeline_efficiency(3, 0.637, 0.0012) == pytest.approx(s / 3)


def test_r4_pilot_extrapolation_is_exact_and_within_ten_percent_of_the_measurement():
    est = pilot_extrapolation(*map(Fraction, (3254, 18, 5000, 66, 1000)))
    assert est == Fraction(3254) * Fraction(66, 18) ** 3 * Fraction(1000, 5000) == Fraction(4331074, 135)
    assert round(est) == 32082
    assert pilot_extrapolation(3254, 18, 5000, 66, 1000) == pytest.approx(float(est), rel=1e-15)
    assert abs(34760 - est) / 34760 <= Fraction(1, 10)
    assert round(float(abs(34760 - est) / 34760), 3) == 0.077


def test_r5_status_of_the_worked_example_is_normal():
    """§8.2.1.2: WS[1] 650 s beside 500 s and 600 s: local average 550 s, level 1.3 × 550 = 715 s."""
    view = SpmdView(3, [1, 1, 1], [500.0, 650.0, 600.0], [1.0] * 3, [0.0] * 3, [0.0] * 3, [1.0] * 3)
    avg = local_average(view, 1)
    assert avg == 550.0
    assert (1 + 0.3) * avg == 715.0
    assert status(view, 1, 0.3) == NORMAL == classify(650.0, 550.0, 0.3)
    assert local_average(view, 1, include_self=True) == pytest.approx(1750 / 3)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.floats(0.1, 1e3), min_size=2, max_size=12), st.data())
def test_r8_local_exchange_changes_global_variance_by_n_d_over_p(times, data):
    """Eq 7.8: a conserving exchange inside a domain D changes the global variance by N_D/P × its
    change of D's own variance."""
    P = len(times)
    domain = data.draw(st.lists(st.integers(0, P - 1), min_size=1, max_size=P, unique=True))
    weights = data.draw(st.lists(st.floats(0.01, 1.0), min_size=len(domain), max_size=len(domain)))
    total = sum(times[i] for i in domain)
    after = list(times)
    for i, w in zip(domain, weights):
        after[i] = total * w / sum(weights)  # redistributed inside D, sum kept
    local = loop_time_variance([after[i] for i in domain]) - loop_time_variance([times[i] for i in domain])
    glob = loop_time_variance(after) - loop_time_variance(times)
    assert glob == pytest.approx(global_variance_change(local, len(domain), P), rel=1e-9, abs=1e-6)


def _sig4(x):
    return float(f"{x:.4g}")


@pytest.mark.parametrize("std,n,ci95,ci90", [
    (0.470413, 1080, 0.028055334, 0.023544791),  # Table 8.4
    (20273108, 1000, 1256516, 1054502),  # Table 8.7, homogeneous
    (20261533, 1000, 1255799, 1053900),  # Table 8.7, processor only
    (13268132, 1000, 822351, 690139),  # Table 8.7, DLAH
])
def test_r15_confidence_half_widths_reproduce_the_tables_to_four_figures(std, n, ci95, ci90):
    assert _sig4(ci_half_width(std, n, Z95)) == _sig4(ci95)
    assert _sig4(ci_half_width(std, n, Z90)) == _sig4(ci90)


def test_mean_std_ci_uses_the_sample_deviation():
    mean, std, half = mean_std_ci([1.0, 2.0, 3.0, 4.0])
    assert mean == 2.5 and std == pytest.approx(math.sqrt(5 / 3))
    assert half == pytest.approx(1.96 * std / 2)
