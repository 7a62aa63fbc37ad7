"""003's formula tables from the recursion (Table 6 to ±1e-5, Tables 7 and 8 exactly) and the hybrid
placement rows; the supermarket rows run in `dlbkit reproduce nezha` (about 45 s), not here."""

import pytest

from dlbkit.model.gossip_recursion import cover_probability, cycle_steps, pr_series
from dlbkit.face.reproduce import nezha


@pytest.mark.parametrize("key", list(nezha.TABLE6), ids=str)
def test_table6_from_the_recursion(key):
    col = nezha.TABLE6[key]
    ours = pr_series(*key, len(col))
    for j, (o, p) in enumerate(zip(ours, col), 1):
        if p is not None:
            assert o == pytest.approx(p, abs=1e-5), j


def test_tables_7_and_8_exactly():
    assert {n: cycle_steps(n, 16) for n in nezha.TABLE7} == nezha.TABLE7
    assert {n: cycle_steps(n, n) for n in nezha.TABLE8} == nezha.TABLE8


def test_cover_probability_by_hand():
    assert cover_probability(1, 3) == 1.0
    assert cover_probability(2, 2) == pytest.approx(0.5)  # two throws on two nodes: HT or TH
    assert cover_probability(3, 2) == 0.0


def test_placement_rows_pass():
    rows = nezha._placement_claims()
    assert all(r.ok for r in rows if r.asserted) and len([r for r in rows if r.asserted]) == 3


def test_supermarket_fixed_point():
    assert nezha.supermarket_mean(0.9, 2) == pytest.approx(2.3527, abs=1e-4)
    assert nezha.supermarket_mean(0.95, 3) == pytest.approx(2.4084, abs=1e-4)
    assert nezha.supermarket_mean(0.9, 1) == pytest.approx(9.0)


def test_monte_carlo_gossip_agrees_with_table6_and_constrained_selection_is_not_slower():
    """Reduced (2·10^4 trials, ±0.02: four standard deviations at p = 0.5); the reproduction runs 10^5 at ±0.01."""
    import numpy as np

    from dlbkit.info.gossip_mc import pr_all_informed
    for key in [(4, 4), (7, 8)]:
        col = nezha.TABLE6[key]
        ours = pr_all_informed(*key, len(col), 20_000, np.random.default_rng(0))
        assert max(abs(o - p) for o, p in zip(ours, col) if p is not None) <= 0.02
    old = pr_all_informed(8, 8, 12, 20_000, np.random.default_rng(1))
    new = pr_all_informed(8, 8, 12, 20_000, np.random.default_rng(2), "constrained")
    assert np.all(new >= old - 0.02) and new[7] >= 0.99

