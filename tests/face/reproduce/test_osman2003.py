"""The executable reproduction of Osman 2003 (000): every asserted claim's key value pinned to its band.

The default run pins the value of every asserted claim with the claim's own tolerance, written out
here (not read from the module): the closed-form and engine claims (R1–R8, R14, R15) as the full run
computes them, the statistical ones (R9–R13) on a reduced-seed run (REDUCED) that must meet the same
band. Known misses keep their measured values pinned (the ``*_miss_*`` tests) and a strict xfail that
turns into a failure when the claim starts to hold. The full reproduction (1000 seeds for R9) is
in the full tier: ``pytest -m full tests/face/reproduce/test_osman2003.py``.
"""

import json
import re

import pytest

from dlbkit.face.reproduce import REPRODUCTIONS
from dlbkit.face.reproduce import osman2003 as repro
from support.reproductions import full_claims

# its module fixtures (the reduced reproduction) are made once: every test of the module on one xdist worker
pytestmark = pytest.mark.xdist_group("osman2003")

#: the reduced-seed run of the statistical claims (the full values are in the module's constants)
REDUCED = {"N_SEEDS_E11": 20, "N_SEEDS_20WS": 6, "SIZES": {20: 25, 500: 2}, "SWEEP_SEEDS": 2,
           "R9_LEVELS": (0.3, 0.8), "R9_LEVEL_SEEDS": 2, "BOUNCE_SEEDS": 2}


def row(rows, start: str):
    (c,) = [c for c in rows if c.claim.startswith(start)]
    return c


def rows_from(rows, start: str):
    return [c for c in rows if c.claim.startswith(start)]


def within(x: float, paper: float, rel: float) -> bool:
    return abs(x - paper) <= rel * abs(paper)


def same_4_sig(ours: float, paper: float) -> bool:
    """Equal to 4 significant figures: within half a unit of the 4th (ours is printed to 7)."""
    return abs(ours - paper) <= 5e-4 * abs(paper)


# --- fixtures --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fast_rows():
    return [repro._r1(), repro._r2(), repro._r3(), *repro._r4(), repro._r5(), repro._r6(), repro._r7(),
            repro._r8(), *repro._r14(), *repro._r15()]


@pytest.fixture(scope="module")
def reduced_rows():
    """R9–R13 and the reported tables with REDUCED seeds. The module's constants are put back (and
    its caches cleared) as soon as the rows are made: the full run (``full_rows``), made later in the
    same process when both tiers run, must see the module's own seeds, not the reduced ones."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in REDUCED.items():
            mp.setattr(repro, name, value)
        repro._e11.cache_clear()
        repro._per_ws_both.cache_clear()
        try:
            return [*repro._r9(), repro._r10(), *repro._r11(), *repro._r12(), *repro._r13(),
                    *repro._reported_tables()]
        finally:
            repro._e11.cache_clear()
            repro._per_ws_both.cache_clear()


def test_registered():
    assert REPRODUCTIONS["osman2003"] == "dlbkit.face.reproduce.osman2003:claims"


# --- R1–R8, R15: closed forms and the engine, exact -------------------------------------------------------
def test_r1_bound_table_exact(fast_rows):
    c = row(fast_rows, "R1 ")
    assert c.ours == [tuple(p) for p in c.paper] and len(c.ours) == 18


def test_r2_propagation_loads_exact(fast_rows):
    c = row(fast_rows, "R2 ")
    assert len(c.ours) == 9 and all(abs(o - p) <= 1e-6 for o, p in zip(c.ours, c.paper))
    assert c.ours[:3] == [5.5, 3.25, 2.125]


def test_r3_to_r5_worked_examples(fast_rows):
    assert row(fast_rows, "R3 ").ours == 2.9944
    assert row(fast_rows, "R4 pilot").ours == 32082
    assert float(row(fast_rows, "R4 estimate").ours.rstrip("%")) <= 10.0
    assert row(fast_rows, "R5 ").ours == [550.0, 715.0, "normal"]


def test_r6_to_r8_engine_and_identity(fast_rows):
    assert float(re.search(r"rel ([0-9.e+-]+)\)", row(fast_rows, "R6 ").ours).group(1)) <= 1e-9
    assert abs(row(fast_rows, "R7 ").ours - 98.042) <= 1e-9
    assert float(re.search(r"max error ([0-9.e+-]+)", row(fast_rows, "R8 ").ours).group(1)) <= 1e-9


def test_r15_ci_half_widths_to_four_significant_figures(fast_rows):
    rows = rows_from(fast_rows, "R15 ")
    assert len(rows) == 4
    for c in rows:
        assert all(same_4_sig(o, p) for o, p in zip(c.ours, c.paper)), c.claim


# --- R9's reported reading: local averaging to the average load ----------------------------------------
def test_shed_to_average_sheds_to_the_local_average_where_the_baseline_stops_at_the_threshold():
    """Node 1 at 200 s between two at 100 s (κ = 0.2 s/DP measured): the registered baseline sheds to
    (1 + c)·avg = 130 s (350 DP), the §7.1 "average load" reading to 120 s (both neighbours filled to
    their capacity, 140 s: 400 DP; averaging then adds nothing, the sender being below them)."""
    from dlbkit.balancers.registry import make
    from dlbkit.families.spmd.model.view import SpmdView
    v = SpmdView(n_nodes=3, points=[500, 1000, 500], loop_time=[100.0, 200.0, 100.0],
                 measured_speeds=[5.0] * 3, free_memory=[0.0] * 3, swap_cost=[0.0] * 3, bandwidth=[1.0] * 3,
                 layout="line")
    sent = {t.dst: t.n for t in make("homogeneous-diffusion", {"speeds": "measured"}).decide(v, 1)}
    assert sent == {0: 175, 2: 175}
    sent = {t.dst: t.n for t in repro.ShedToAverage(speeds="measured").decide(v, 1)}
    assert sent == {0: 200, 2: 200}


# --- R14: bouncing ------------------------------------------------------------------------------------------
def test_r14_dlah_lower_and_center_converge_in_one_step(fast_rows):
    lower, center = rows_from(fast_rows, "R14 same pair, the note's expectation (§6.2, R14), not the thesis's "
                                         "text: DLAH")[:2]
    assert "'lower'" in lower.claim and "'center'" in center.claim
    assert lower.ours == center.ours == [1] * repro.BOUNCE_SEEDS


def test_r14_rows_are_the_note_expectations_then_the_thesis_claims(fast_rows):
    r14 = rows_from(fast_rows, "R14")
    assert [c.asserted for c in r14] == [True, False, True, True, True, True, True]
    assert ["note's expectation" in c.claim for c in r14] == [True, False, True, True, True, False, False]
    assert ["thesis's claim" in c.claim for c in r14] == [False] * 5 + [True, True]


def test_r14_miss_values(fast_rows):
    """The misses as measured: the homogeneous rule filled to the lower edge reverses once and settles
    (filled to the upper edge it bounces, reported); DLAH 'upper' sends some back; on the grid no cell
    bounces twice in every seed, and DLAH reverses once where the slow node sheds to the fast one."""
    r14 = rows_from(fast_rows, "R14")
    assert r14[0].ours == [1] * 5 and min(r14[1].ours) >= 2
    assert all(n in (2, 3) for n in r14[4].ours)
    hom, dlah = r14[5].ours, r14[6].ours
    assert len(hom) == len(dlah) == 28
    assert max(hom.values()) == 1
    assert {cell for cell, v in dlah.items() if v > 0} >= {"2:0.1", "4:0.1", "8:0.1", "8:0.3"}
    assert all(dlah[f"{r:g}:{s:g}"] == 0 for r in (2.0, 4.0, 8.0) for s in (0.7, 0.8, 0.9))


# --- R9–R13 on the reduced-seed run: the claim's band, and the misses' values -----------------------------
def test_reduced_run_rows_in_order(reduced_rows):
    assert [c.claim[:3] for c in reduced_rows] == ["R9 "] * 6 + ["R10"] + ["R11"] * 2 + ["R12"] * 3 + \
        ["R13"] * 6 + ["E5 ", "E7 "]
    assert [c.asserted for c in reduced_rows] == [True] * 3 + [False] * 3 + [True] * 5 + [False] + \
        [True] * 5 + [False] * 3
    json.dumps([c.as_dict() for c in reduced_rows])


def test_r10_mean_steps_nearly_constant_with_p(reduced_rows):
    m = row(reduced_rows, "R10").ours
    assert within(m[500], m[20], 0.25), m  # the claim's ±25%


def test_r11_network_heterogeneity(reduced_rows):
    share, stats = rows_from(reduced_rows, "R11")
    assert 0.95 <= share.ours <= 1.0
    assert within(stats.ours[0], 0.2194444, 0.5), stats.ours  # the claim's ±50% of Table 8.4


def test_r12_cpu_heterogeneity_mean(reduced_rows):
    c = row(reduced_rows, "R12 CPU")
    assert within(c.ours[0], 0.834, 0.5), c.ours  # the claim's ±50% of Table 8.2


def test_r13_threshold_and_workload_trends(reduced_rows):
    from scipy.stats import spearmanr
    r13 = rows_from(reduced_rows, "R13")
    for c, x, sign in ((r13[0], repro.C_VALUES, -1), (r13[1], repro.C_VALUES, -1),
                       (r13[2], repro.WORKLOAD_RATIOS, +1)):
        assert sign * spearmanr(x, c.ours).statistic > 0.8, (c.claim[:40], c.ours)


def test_r9_miss_values(reduced_rows):
    """R9 misses on the reduced run as on the full one: DLAH moves a tenth or less of the baselines' DP
    (band 0.562 ± 25%) and takes well under their steps (band 1 ± 20%): the baselines bounce."""
    hom, po, steps = rows_from(reduced_rows, "R9 E11")[:2] + [row(reduced_rows, "R9 same runs")]
    assert 0.02 <= hom.ours <= 0.1 and 0.02 <= po.ours <= 0.1
    assert all(0.05 <= x <= 0.5 for x in steps.ours), steps.ours


def test_r12_histogram_zero_share(reduced_rows):
    """The part of the R12 histogram claim that holds (the ≤ 2 share misses by 0.007 in the full run,
    inside the reduced run's noise: pinned in the full tier)."""
    zero, le2 = row(reduced_rows, "R12 same runs").ours
    assert 0.4 <= zero <= 0.6 and 0.85 <= le2 <= 1.0


def test_r13_miss_values(reduced_rows):
    r13 = rows_from(reduced_rows, "R13")
    assert r13[4].ours == [0.0] * 6  # memory at Table 8.1's swap rate: never over the threshold
    speed = r13[3].ours
    assert speed[2] == 0.0 and max(speed[3:]) > max(speed[:2])  # faster WS[0] → more steps (all WS)


# --- known misses: strict xfails (they fail the suite when the claim starts to hold) ----------------------
#: the asserted claims that miss, by the start of their text, with the measured values (full run)
KNOWN_FAILURES = {
    "R9 E11": "DP ratio DLAH/baselines 0.056 against the band 0.562 ± 25% [0.42, 0.70]: the nominal-speed "
              "baselines bounce (15 steps per run against 1.5 in the paper)",
    "R9 same runs: mean steps per run": "steps ratio DLAH/baselines 0.142 (paper 0.925/0.972, ±20%)",
    "R13 processing power": "all WS: WS[0] faster than the others makes its neighbours act (steps at speed ×2–10)",
    "R13 memory (Fig 8.18; 20 WS ring, 2 × 9.8e6 DP each)": "0 steps at every memory ratio: with Table 8.1's swap "
                                                            "rate a swapped DP costs only 4.8% more than compute",
    "R14 bouncing": "1 reversal per seed: filled to the lower edge the homogeneous rule sends some back once",
    "R14 same pair, the note's expectation (§6.2, R14), not the thesis's text: DLAH receiver_fill='upper'":
        "2–3 transfers per seed",
    "R14 the thesis's claim (§7.3": "no cell with 2 reversals in every seed",
    "R14 the thesis's claim (§9.1)": "DLAH reverses once where the slow node sheds to the fast one",
}


#: known misses too close to their band for the reduced run to show them: xfail in the full tier only
SLOW_KNOWN_FAILURES = {"R12 same runs, histogram shape": "zero share 0.556 ok, but ≤ 2 steps share 0.893 < 0.9"}


def known(c, slow: bool = False) -> bool:
    return any(c.claim.startswith(k) for k in (KNOWN_FAILURES | SLOW_KNOWN_FAILURES if slow else KNOWN_FAILURES))


@pytest.mark.parametrize("start", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v), id=k[:24])
                                   for k, v in KNOWN_FAILURES.items()])
def test_known_failure(fast_rows, reduced_rows, start):
    assert all(c.ok for c in rows_from(fast_rows + reduced_rows, start))


def test_every_other_asserted_claim_holds(fast_rows, reduced_rows):
    rows = [c for c in fast_rows + reduced_rows if not c.claim.startswith(tuple(SLOW_KNOWN_FAILURES))]
    assert [c.claim for c in rows if c.asserted and not c.ok and not known(c)] == []


# --- full reproduction (the full tier) -------------------------------------------------------------------------
#: the full run takes ≈ 200 s of CPU (BENCHMARKS.md): 6 min wall on a shared 2-core machine, over the
#: suite's 300 s hang guard, so the full tier's tests get their own
FULL_TIMEOUT = 1800

@pytest.fixture(scope="module")
def full_rows():
    return full_claims("osman2003")


@pytest.mark.full
@pytest.mark.timeout(FULL_TIMEOUT)
def test_full_every_claim_holds_except_the_known_failures(full_rows):
    assert len(full_rows) == 40 and sum(c.asserted for c in full_rows) == 32
    assert [c.claim for c in full_rows if c.asserted and not c.ok and not known(c, slow=True)] == []


@pytest.mark.full
@pytest.mark.timeout(FULL_TIMEOUT)
def test_full_key_values(full_rows):
    hom, po = rows_from(full_rows, "R9 E11")
    assert 0.03 <= hom.ours <= 0.1 and 0.03 <= po.ours <= 0.1  # the miss: band [0.42, 0.70]
    assert all(0.1 <= x <= 0.2 for x in row(full_rows, "R9 same runs").ours)  # the miss: band 1 ± 20%
    m = row(full_rows, "R10").ours
    assert within(m["500"] if "500" in m else m[500], m["20"] if "20" in m else m[20], 0.25)
    share, stats = rows_from(full_rows, "R11")
    assert share.ours >= 0.95 and within(stats.ours[0], 0.2194444, 0.5)
    assert within(row(full_rows, "R12 CPU").ours[0], 0.834, 0.5)
    zero, le2 = row(full_rows, "R12 same runs").ours
    assert 0.4 <= zero <= 0.6 and 0.85 <= le2 < 0.9  # the miss


@pytest.mark.full
@pytest.mark.timeout(FULL_TIMEOUT)
@pytest.mark.parametrize("start", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v), id=k[:24])
                                   for k, v in (KNOWN_FAILURES | SLOW_KNOWN_FAILURES).items()])
def test_full_known_failure(full_rows, start):
    assert all(c.ok for c in rows_from(full_rows, start))
