"""The executable reproduction of Sánchez et al. (004): each asserted claim's value pinned in its band,
the known miss a strict xfail with its measured value checked, records JSON-ready, files agree."""

import json
import tomllib
from pathlib import Path

import pytest

from dlbkit import Divisible, Platform, make
from dlbkit.face.reproduce import run
from dlbkit.face.reproduce import sanchez2002 as repro

from support import REPO

EXPERIMENTS = Path(repro.__file__).resolve().parents[2] / "data" / "experiments"


@pytest.fixture(scope="module")
def rows():
    return run("sanchez2002")


def row(rows, start):
    """The one row whose claim text starts with *start*."""
    (c,) = [c for c in rows if c.claim.startswith(start)]
    return c


# The key value of every asserted claim, pinned with the claim's band (written here from the paper
# and the note, not read from the module, so a changed band or a changed result both show). The
# whole reproduction runs in about a second, so the default run checks the full claims.

def test_the_rows_are_the_notes_ranked_list_in_order(rows):
    """§6.1 gain (4 rows), §6.2 sequential (2), §6.3 balance (2), §6.4 step (2), §6.5 MxV (3), §6.6, §6.7."""
    starts = ["GACSYS E2/E4, clock-rate", "GACSYS E3/E5, clock-rate", "GACSYS E2/E4, calibrated",
              "GACSYS E3/E5, calibrated", "GACSYS, clock-rate", "GACSYS, calibrated", "GACSYS, calibrated",
              "Same with ±5% noise", "GACSYS, calibrated", "Same step", "MxV 5000x1000", "MxV: T_LB/T_noLB",
              "MxV with master CPU cost", "GACSYS, calibrated", "Eq. 1 on t_exe"]
    assert [c.claim[:len(s)] for c, s in zip(rows, starts)] == starts and len(rows) == len(starts)


def test_only_the_c0_row_is_reported(rows):
    """§6.6's "a little more" is false with floor rounding (the note calls it fragile): reported only."""
    assert [k for k, c in enumerate(rows) if not c.asserted] == [13]
    assert "floor: does not hold; carry: holds" in rows[13].claim


def test_every_row_that_runs_on_the_fitted_speeds_says_so(rows):
    tagged = [k for k, c in enumerate(rows) if "calibrated speeds (fitted to 'about six times lower')" in c.claim]
    assert tagged == [2, 3, 5, 6, 8, 10, 13]  # the "Same ..." rows 7, 9, 11, 12 continue a tagged row
    assert "fitted to the paper's one quantitative result" in repro.__doc__


def test_clock_rate_gain_e3_e5_is_within_085_of_ideal_and_at_most_ideal(rows):
    # ideal Σs/(n·min s) = (1 + 200/733 + 133/733) / (3 · 133/733) = 2.67; band [0.85 × 2.67, 2.67]
    c = row(rows, "GACSYS E3/E5, clock-rate")
    assert all(2.27 <= g <= 2.67 for g in c.ours), c.ours
    assert c.ok


def test_clock_rate_gain_e2_e4_is_within_band_except_c0_1(rows):
    # ideal (2 + 200/733)/(3 · 200/733) = 2.78, band [2.36, 2.78]; the known miss is c0 = 1 (next test)
    c = row(rows, "GACSYS E2/E4, clock-rate")
    assert all(2.36 <= g <= 2.78 for g in c.ours[1:]), c.ours
    assert c.ours[0] == pytest.approx(2.33, abs=0.005)  # the measured miss: 0.03 below the band
    assert "carry rounding gives [2.76]" in c.claim and not c.ok


@pytest.mark.xfail(strict=True, reason="c0 = 1 with floor rounding: PC3 pinned at 1 unit, the PIIIs' 3.67 "
                                       "truncated to 3, gain 2.33 < 0.85 x 2.78 = 2.36 (note §2.7.1)")
def test_clock_rate_gain_e2_e4_at_c0_1_reaches_085_of_ideal(rows):
    assert row(rows, "GACSYS E2/E4, clock-rate").ours[0] >= 2.36


@pytest.mark.parametrize("pair, ideal", [("E2/E4", 5.98), ("E3/E5", 6.07)])
def test_calibrated_gain_is_about_six_and_near_its_ideal(rows, pair, ideal):
    c = row(rows, f"GACSYS {pair}, calibrated")
    assert all(4.5 <= g <= 6.5 for g in c.ours), c.ours
    assert all(round(0.85 * ideal, 2) <= g <= ideal for g in c.ours), c.ours
    assert f"ideal {ideal:.2f}" in c.claim


@pytest.mark.parametrize("k", [4, 5])
def test_no_lb_is_slower_than_sequential(rows, k):
    assert rows[k].claim.startswith("GACSYS, c") and rows[k].ours > 1


def test_deterministic_balance_is_reached_by_the_third_round_and_kept(rows):
    c = rows[6]
    assert 1 <= c.ours <= 2  # "on third iteration" = round index 2; round 0 is the equal split
    later = float(c.claim.split("worst later round ")[1].split(",")[0])
    assert later <= 1.10


def test_noisy_balance_median_stays_within_115(rows):
    c = row(rows, "Same with ±5% noise")
    assert 1.0 <= c.ours <= 1.15


def test_step_slowdown_is_absorbed_within_two_rounds_and_lb_still_wins(rows):
    assert all(1 <= r <= 2 for r in rows[8].ours), rows[8].ours
    assert all(g > 1 for g in row(rows, "Same step").ours)


def test_mxv_sequential_beats_every_parallel_run_by_more_than_tenfold(rows):
    assert row(rows, "MxV 5000x1000").ours >= 10


def test_mxv_lb_is_lightly_smaller_than_no_lb(rows):
    # "lightly smaller": T_LB/T_noLB < 1 (smaller), and >= 0.90 (lightly); LB 5% slower no longer passes
    c = row(rows, "MxV: T_LB/T_noLB")
    assert all(0.90 <= r < 1.0 for r in c.ours), c.ours
    assert "in [0.90, 1.00) each" == c.tolerance


def test_mxv_slow_master_makes_e2_and_e4_slower(rows):
    c = row(rows, "MxV with master CPU cost")
    assert all(r > 1 for r in c.ours) and len(c.ours) == 6
    assert "without it T(E2)/T(E3) = 1.000" in c.claim  # the row depends on the assumed cost, and says so


def test_eq1_unit_example(rows):
    assert row(rows, "Eq. 1 on t_exe").ours == [36, 22, 10]


def test_every_asserted_claim_holds_but_the_known_miss(rows):
    failing = [c.claim[:40] for c in rows if c.asserted and not c.ok]
    assert failing == ["GACSYS E2/E4, clock-rate speeds: T_noLB/"]


def test_records_are_json_ready(rows):
    json.dumps([c.as_dict() for c in rows])


@pytest.mark.parametrize("path", sorted(EXPERIMENTS.glob("sanchez2002_*.toml")), ids=lambda p: p.stem)
def test_experiment_files_agree_with_the_reproduction(path):
    d = tomllib.loads(path.read_text())
    platform = Platform.from_toml(path.parent / d["platform"]["file"])
    workload = Divisible.from_dict(d["workload"])
    expected = repro.mxv() if "_mxv_" in path.name else repro.gacsys()
    assert workload == expected
    assert d["engine"]["mechanism"] == "rounds"
    assert d["engine"]["master_cost_per_byte"] == repro.MASTER_COST_PER_BYTE
    exp = path.stem.rsplit("_", 1)[1]
    balancers = [make(b["name"], b.get("params")) for b in d["balancers"]]
    if exp == "e1":
        assert [n.name for n in platform.nodes] == ["pc1"] and d["engine"]["master_computes"] is True
        assert [b.get_params() for b in balancers] == [{"size": workload.n_items}]
        return
    assert platform.name == "sanchez2002_calibrated" and d["engine"]["master_computes"] is False
    assert d["engine"]["master"] == {"e2": "pc4", "e4": "pc4", "e3": "pc1", "e5": "pc1"}[exp]
    names = {"e2": "sanchez", "e3": "sanchez", "e4": "static", "e5": "static"}[exp]
    assert {b.name for b in balancers} == {names}
    sizes = [b.c0 if names == "sanchez" else b.size for b in balancers]
    assert sizes == list(repro.C0_VALUES)


def test_platform_files_follow_table_1():
    for name, speeds in (("sanchez2002", [1.0, 1.0, 200 / 733, 133 / 733]),
                         ("sanchez2002_calibrated", [1.0, 1.0, 0.118, 0.065])):
        p = Platform.from_toml(repro.PLATFORMS / f"{name}.toml")
        assert [n.name for n in p.nodes] == ["pc1", "pc2", "pc3", "pc4"]
        assert [n.speed for n in p.nodes] == pytest.approx(speeds, rel=1e-5)
        assert [n.memory for n in p.nodes] == [256 * 2**20, 64 * 2**20, 64 * 2**20, 32 * 2**20]
        assert p.network.bandwidth == 1.25e6  # 10 Mbps


def test_readme_and_docstring_give_the_counts_the_command_prints(rows):
    import re

    asserted = [c for c in rows if c.asserted]
    n_ok, n_asserted, n_reported = sum(c.ok for c in asserted), len(asserted), len(rows) - len(asserted)
    readme = (REPO / "README.md").read_text()
    para = readme[readme.index("`dlbkit reproduce sanchez2002` runs"):]
    para = re.sub(r"\s+", " ", para[:para.index("\n\n")])
    assert f"{n_ok} of {n_asserted} asserted claims pass ({n_reported} more row is reported only" in para
    assert f"{n_ok} of {n_asserted} asserted claims hold, {n_reported} more row is reported only" in \
        re.sub(r"\s+", " ", repro.__doc__)
