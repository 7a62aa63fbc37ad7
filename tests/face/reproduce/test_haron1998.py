"""The executable reproduction of Haron 1998 (001): every asserted claim's key value pinned with its
tolerance, in the default run.

The default run computes every claim group; the costly ones on reduced settings (H14 and H15 at
p = 128 only, H16 at p = 128, 256, 512), each asserting the claim's own band on what it computes. The
checks here restate the band (printed precision: a value printed with n decimals stands for ±½·10⁻ⁿ)
rather than reading the module's ``ok``. Known misses are strict xfails, beside a test that pins
the measured values, so a drift of the miss shows too. The full reproduction and the CLI are
in the full tier: ``pytest -m full tests/face/reproduce/test_haron1998.py``.
"""

import json

import pytest

from dlbkit.face.cli import main
from dlbkit.face.reproduce import REPRODUCTIONS
from dlbkit.face.reproduce import haron1998 as repro
from support.reproductions import full_claims

# its module fixtures (the reduced reproduction) are made once: every test of the module on one xdist worker
pytestmark = pytest.mark.xdist_group("haron1998")

KEYS = {"claim", "paper", "ours", "tolerance", "asserted", "ok"}


def printed_excess(ours: float, printed: float, decimals: int) -> float:
    """Distance of *ours* from the interval a value printed with *decimals* decimals stands for."""
    return max(0.0, abs(ours - printed) - 0.5 * 10.0 ** -decimals)


def in_trend_band(ours: float, paper: float) -> bool:
    """Same sign and within ×2 where |paper| ≥ 1 pp; |ours| < 1 pp where |paper| < 1 pp."""
    if abs(paper) < 1.0:
        return abs(ours) < 1.0
    return min(paper / 2, paper * 2) <= ours <= max(paper / 2, paper * 2)


def rising(xs) -> bool:
    return all(b >= a for a, b in zip(xs, xs[1:]))


def by_start(rows, start):
    (c,) = [c for c in rows if c.claim.startswith(start)]
    return c


@pytest.fixture(scope="module")
def fast_rows():
    return [*repro._claims_iterations(), *repro._claims_compute(), *repro._claims_synch(),
            *repro._claims_balanced_rows(), *repro._claims_table_5_10(), *repro._claims_xu_lau()]


@pytest.fixture(scope="module")
def h12():
    return repro._claims_h12()


@pytest.fixture(scope="module")
def h13():
    return repro._claims_h13()


def test_registered():
    assert REPRODUCTIONS["haron1998"] == "dlbkit.face.reproduce.haron1998:claims"


# --- H1, H2: iteration counts ---------------------------------------------------------------------
def test_tables_4_7_and_4_8_iteration_counts_are_exact(fast_rows):
    assert by_start(fast_rows, "H1 ").ours == [32768, 16385, 8194, 4099, 2053, 1031, 522, 269, 148]
    assert by_start(fast_rows, "H2 ").ours == [65535, 21846, 9365, 4372, 2119, 1046, 523, 264, 137]


# --- H3–H5: compute columns, within 0.5% at printed precision ---------------------------------------
@pytest.mark.parametrize("start", ["H3 Table 5.4", "H3 Table 5.5", "H4 ", "H5 "])
def test_compute_columns_within_half_a_percent_at_printed_precision(fast_rows, start):
    c = by_start(fast_rows, start)
    assert len(c.ours) == len(c.paper)
    assert all(printed_excess(o, q, 4) <= 0.005 * q for o, q in zip(c.ours, c.paper)), (c.ours, c.paper)


def test_table_5_5_g10_matches_at_printed_precision(fast_rows):
    """0.006267 s against the printed 0.0063: 0.52% from the digits, inside the interval they stand for."""
    c = by_start(fast_rows, "H3 Table 5.5")
    assert c.ours[0] == pytest.approx(0.006267, abs=1e-6) and round(c.ours[0], 4) == 0.0063


def test_simulated_compute_is_the_work_over_p(fast_rows):
    assert "equals our work / p to" in by_start(fast_rows, "H4 ").claim
    nodes, internal = repro.random_tree().count()
    sim = repro.run(128, tree="random", grain=100, interval=16)
    assert sim.compute == pytest.approx(repro._work(nodes, internal, 100) / 128, rel=1e-9)


# --- H6: synch column, exact at 4 decimals ----------------------------------------------------------
def test_synch_column_is_exact_to_four_decimals(fast_rows):
    c = by_start(fast_rows, "H6")
    assert len(c.ours) == 18 and c.ours == c.paper
    # independently: Table 5.4's 30 iterations at p = 128
    assert round(repro._sy(30, 128), 4) == 0.0168 and round(repro._sy(7, 128, 2.0), 4) == 0.0023


# --- H7, H8: balanced-tree rows and GDEM ITA ----------------------------------------------------------
@pytest.mark.parametrize("start", ["H7 Table 5.26 ", "H7 Table 5.29 ", "H7 Table 5.27/5.30 "])
def test_balanced_rows_iterations_exact_totals_within_two_percent(fast_rows, start):
    c = by_start(fast_rows, start)
    for ours, paper in zip(c.ours, c.paper, strict=True):
        assert ours[-1] == paper[-1]
        assert printed_excess(ours[0], paper[0], 4) <= 0.02 * paper[0], (ours, paper)


@pytest.mark.parametrize("p", [4, 32, 128])
def test_balanced_tree_gdem_ita_within_one_point(fast_rows, p):
    c = by_start(fast_rows, f"H8 Tables 5.25/5.28/5.31 m = 0 speed-ITA (%) of GDEM p = {p},")
    assert c.ours == pytest.approx(repro.ITA_GDEM_M0[p], abs=1.0 + 0.005)


def test_ldsv_ita_rows_are_reported_not_asserted(fast_rows):
    rows = [c for c in fast_rows if c.claim.startswith("H8") and "LDSV" in c.claim]
    assert len(rows) == 3 and not any(c.asserted for c in rows) and all(c.ok is None for c in rows)


# --- H9: Table 5.10 ---------------------------------------------------------------------------------
def test_table_5_10_c2_1_row(fast_rows):
    c = by_start(fast_rows, "H9 Table 5.10 c2 = 1 row")
    assert c.ours[-1] == 463
    assert printed_excess(c.ours[0], 0.5081, 4) <= 0.02 * 0.5081


def test_table_5_10_c2_sweep_is_reported(fast_rows):
    """Its 3 vs 454 iterations at c2 = 10 is not a match: the row is reported, not asserted."""
    c = by_start(fast_rows, "H9 Table 5.10 iterations")
    assert c.ours == [463, 457, 3] and not c.asserted and c.ok is None


# --- H10, H11: Xu & Lau, hypercube ---------------------------------------------------------------------
def test_xu_lau_within_ten_percent_and_same_order(fast_rows):
    c = by_start(fast_rows, "H10 ")
    assert all(printed_excess(o, q, 2) <= 0.10 * q for o, q in zip(c.ours, c.paper, strict=True))
    names = list(repro.XU_LAU)
    order = lambda v: sorted(names, key=dict(zip(names, v)).get)  # noqa: E731
    assert order(c.ours) == order(c.paper)


def test_hypercube_one_sweep(fast_rows):
    assert by_start(fast_rows, "H11 ").ours == "exact: True; max − min ≤ d: True"


# --- H12: GDEM t1 ITA over g and s (Tables 5.3, 5.16) -------------------------------------------------
def test_t1_gain_at_p4_and_p128_is_in_the_band_and_rises_at_p128(h12):
    for start, paper in (("H12 (a) values: GDEM t1 time-ITA (%) over g", repro.TABLE_5_3_GDEM_T1),
                         ("H12 (a) values: GDEM t1 time-ITA (%) over s", repro.TABLE_5_16_GDEM_T1)):
        ours = by_start(h12, start).ours
        assert rising(ours[128]), ours
        for p in (4, 128):
            assert all(in_trend_band(o, q) for o, q in zip(ours[p], paper[p], strict=True)), (p, ours[p])


def test_t1_gain_over_s_rises_at_every_p(h12):
    assert all(rising(v) for v in by_start(h12, "H12 (a) GDEM t1 time-ITA (%) rises with s").ours.values())


def test_t1_gain_known_misses_measured(h12):
    """The misses, pinned: p = 32 has the wrong sign over s (−7.5 … −2.1; 001: +7.3 … +11.0) and is
    below the band over g; p = 4 over g is flat (0.25 → 0.22; 001: −0.13 → 0.12)."""
    g = by_start(h12, "H12 (a) values: GDEM t1 time-ITA (%) over g").ours
    s = by_start(h12, "H12 (a) values: GDEM t1 time-ITA (%) over s").ours
    assert s[32] == pytest.approx([-7.51, -4.95, -3.16, -2.09], abs=0.05)
    assert g[32] == pytest.approx([-3.08, -2.76, -1.39, -0.39], abs=0.05)
    assert g[4] == pytest.approx([0.25, 0.25, 0.23, 0.22], abs=0.02)


@pytest.mark.xfail(strict=True, reason="H12 p = 32: wrong sign over s (−7.51 … −2.09 vs +7.27 … +11.00), "
                                       "below the band over g (−3.08 … −0.39 vs −0.63 … 2.80)")
@pytest.mark.parametrize("label, paper", [("g", repro.TABLE_5_3_GDEM_T1), ("s", repro.TABLE_5_16_GDEM_T1)])
def test_known_miss_t1_gain_at_p32_in_the_band(h12, label, paper):
    ours = by_start(h12, f"H12 (a) values: GDEM t1 time-ITA (%) over {label}").ours[32]
    assert all(in_trend_band(o, q) for o, q in zip(ours, paper[32]))


@pytest.mark.xfail(strict=True, reason="H12 p = 4 over g: 0.25, 0.25, 0.23, 0.22 (falls by 0.03 pp; 001 rises "
                                       "−0.13 … 0.12)")
def test_known_miss_t1_gain_at_p4_rises_with_g(h12):
    assert rising(by_start(h12, "H12 (a) GDEM t1 time-ITA (%) rises with g").ours[4])


# --- H13: the task-count t2 switches off early (Tables 5.8, 5.19) ----------------------------------------
def test_fitted_tree_reproduces_table_5_8_iterations(h13):
    c = by_start(h13, "H13 the fit")
    assert c.ours["i2=16"][0] == 30 and c.ours["i2=16"][2] == 23 and not c.asserted
    assert repro.fitted_tree().count()[0] == pytest.approx(29535, rel=0.005)


def test_t2_over_s_is_in_the_band_on_the_fitted_tree(h13):
    ours = by_start(h13, "H13 (b)").ours["s"]
    assert all(in_trend_band(o, q) for o, q in zip(ours, repro.TABLE_5_19_T2, strict=True)), ours


def test_t2_known_miss_measured(h13):
    """Over g the fitted tree's t2 loses far less than 001's (and gains at g = 10)."""
    assert by_start(h13, "H13 (b)").ours["g"] == pytest.approx([5.79, -0.83, -30.32, -54.52], abs=0.05)
    assert by_start(h13, "H13 second reading").ours["g"] == pytest.approx([4.80, 0.22, -20.24, -37.09], abs=0.05)


@pytest.mark.xfail(strict=True, reason="H13 over g on the fitted tree: +5.79 / −0.83 / −30.32 / −54.52 vs 001's "
                                       "−26.19 / −46.20 / −134.87 / −207.11")
def test_known_miss_t2_over_g_in_the_band(h13):
    ours = by_start(h13, "H13 (b)").ours["g"]
    assert all(in_trend_band(o, q) for o, q in zip(ours, repro.TABLE_5_8_T2))


# --- H14–H16 on reduced settings ------------------------------------------------------------------------
def test_work_detector_never_below_minus_one_percent_at_p128():
    (c,) = repro._claims_h14(ps=(128,))
    values = [v for vs in c.ours.values() for v in vs]
    assert len(values) == 8 and min(values) >= -1.0


def test_best_interval_at_p128_within_factor_two_and_falling_with_g():
    (c,) = repro._claims_h15(ps=(128,))
    assert len(c.ours) == 4 and rising(c.ours[::-1])
    assert all(q / 2 <= o <= q * 2 for o, q in zip(c.ours, c.paper, strict=True)), c.ours


def test_contention_models_differ_by_under_one_percent_at_large_p():
    c, rep = repro._claims_contention(ps=(128, 256, 512))
    assert all((max(v) - min(v)) / min(v) < 0.01 for v in c.ours.values()), c.ours
    assert not rep.asserted


def test_reported_rows_carry_no_verdict(fast_rows, h13):
    rows = [*fast_rows, *h13]
    rep = [c for c in rows if not c.asserted]
    assert len(rep) == 6 and all(c.ok is None and c.tolerance.startswith("reported") for c in rep)


# --- the full reproduction (the full tier) -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def full_rows():
    return full_claims("haron1998")


@pytest.mark.full
def test_full_counts(full_rows):
    asserted = [c for c in full_rows if c.asserted]
    assert len(full_rows) == 34 and len(asserted) == 24
    assert [c.claim[:40] for c in asserted if not c.ok] == [
        "H12 (a) GDEM t1 time-ITA (%) rises with ", "H12 (a) values: GDEM t1 time-ITA (%) ove",
        "H12 (a) values: GDEM t1 time-ITA (%) ove", "H13 (b) GDEM t2 (task-count detector) at"]


@pytest.mark.full
def test_full_work_detector_and_best_interval(full_rows):
    assert min(v for vs in by_start(full_rows, "H14").ours.values() for v in vs) >= -1.0
    c = by_start(full_rows, "H15")
    assert all(q / 2 <= o <= q * 2 for o, q in zip(c.ours, c.paper, strict=True)), c.ours
    c = by_start(full_rows, "H16 (d)")
    assert all((max(v) - min(v)) / min(v) < 0.01 for v in c.ours.values())


@pytest.mark.full
def test_cli_json(capsys, monkeypatch):
    # the CLI prints the rows the full run made (computed once for the module, above)
    monkeypatch.setattr(repro, "claims", lambda: full_claims("haron1998"))
    status = main(["reproduce", "haron1998", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert status == 1 and len(rows) == 34  # the known misses make the status 1
    assert all(set(r) == KEYS for r in rows)
    assert not [r["claim"] for r in rows if r["ok"] is True and not r["asserted"]]
