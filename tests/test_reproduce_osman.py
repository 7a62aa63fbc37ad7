"""The executable reproduction of Osman 2003 (000): records, exact claims, honest failures.

The default run checks the closed-form and engine claims (R1–R8, R14, R15) and runs R9–R13 with a
handful of seeds (structure only). The full reproduction (1000 seeds for R9) is ``slow``: run it with
``pytest -m slow tests/test_reproduce_osman.py`` (or DLBKIT_SLOW=1); it asserts every claim except
the known, honest failures below, which are strict xfails carrying the measured values.
"""

import json
import os

import pytest

from dlbkit.reproduce import REPRODUCTIONS
from dlbkit.reproduce import osman2003 as repro

KEYS = {"claim", "paper", "ours", "tolerance", "asserted", "ok"}

#: claims that fail honestly in the full run, by the start of their text, with the measured values
KNOWN_FAILURES = {
    "R9 same runs: mean steps per run": "steps ratio DLAH/baselines 0.142 (paper 0.925/0.972, ±20%): with nominal "
                                        "speeds the baselines bounce (15.1 steps per run against 1.5 in the paper)",
    "R12 same runs, histogram shape": "zero share 0.556 ok, but ≤ 2 steps share 0.893 < 0.9",
    "R13 memory (Fig 8.18; 20 WS ring, 2 × 9.8e6 DP each)": "0 steps at every memory ratio: with Table 8.1's swap "
                                                            "rate a swapped DP costs only 4.8% more than compute, "
                                                            "never 30% over the neighbours",
    "R14 bouncing": "1 reversal per seed: filled to the lower edge (default), the homogeneous rule sends some back "
                    "once and then settles; filled to the upper edge it bounces 2–3 times (reported row)",
    "R14 same pair, DLAH receiver_fill='upper'": "2–3 transfers per seed: 'upper' fills the receiver to (1 + c)× "
                                                 "an average holding the sender's old time, so it sends some back",
}


def known(c) -> bool:
    return any(c.claim.startswith(k) for k in KNOWN_FAILURES)


def reported(c) -> bool:
    return c.tolerance.startswith("reported")


# --- default run: fast claims ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fast_rows():
    return [repro._r1(), repro._r2(), repro._r3(), *repro._r4(), repro._r5(), repro._r6(), repro._r7(),
            repro._r8(), *repro._r14(), *repro._r15()]


def test_registered():
    assert REPRODUCTIONS["osman2003"] == "dlbkit.reproduce.osman2003:claims"


def test_closed_form_and_engine_claims_hold_exactly(fast_rows):
    failing = [c.claim for c in fast_rows if c.asserted and not c.ok and not known(c)]
    assert failing == []
    assert sum(c.claim.startswith(("R6", "R7")) and c.ok for c in fast_rows) == 2


def test_dlah_lower_or_center_converges_in_one_step_and_homogeneous_bounces_only_when_filled_upper(fast_rows):
    assert [c.ok for c in fast_rows if c.claim.startswith("R14")] == [False, None, True, True, False]


def test_records_have_exactly_the_five_keys_and_are_json_ready(fast_rows):
    dicts = [c.as_dict() for c in fast_rows]
    assert all(set(d) == KEYS for d in dicts)
    assert all(isinstance(d["ok"], bool) if d["asserted"] else d["ok"] is None for d in dicts)
    json.dumps(dicts)


def test_reduced_seed_run_of_the_statistical_claims(monkeypatch):
    """R9–R13 and the reported tables with a few seeds: the right rows, the five keys, bool ok."""
    for name, value in (("N_SEEDS_E11", 12), ("N_SEEDS_20WS", 3), ("SIZES", {20: 3, 500: 1}), ("SWEEP_SEEDS", 1),
                        ("R9_LEVEL_SEEDS", 3)):
        monkeypatch.setattr(repro, name, value)
    repro._e11.cache_clear()
    repro._per_ws_both.cache_clear()
    try:
        rows = [*repro._r9(), repro._r10(), *repro._r11(), *repro._r12(), *repro._r13(), *repro._reported_tables()]
    finally:
        repro._e11.cache_clear()
        repro._per_ws_both.cache_clear()
    expect = ["R9 "] * 5 + ["R10"] + ["R11"] * 2 + ["R12"] * 3 + ["R13"] * 6 + ["E5 ", "E7 "]
    assert [c.claim[:3] for c in rows] == expect
    assert all(set(c.as_dict()) == KEYS for c in rows)
    assert all((c.ok is None) == reported(c) == (not c.asserted) for c in rows)


# --- full reproduction (slow) -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def full_rows(request):
    if "slow" not in (request.config.getoption("markexpr") or "") and not os.environ.get("DLBKIT_SLOW"):
        pytest.skip("the full reproduction (1000 seeds) runs with -m slow or DLBKIT_SLOW=1")
    return repro.claims()


@pytest.mark.slow
def test_full_every_claim_holds_except_the_known_failures(full_rows):
    assert len(full_rows) == 37
    assert [c.claim for c in full_rows if c.asserted and not c.ok and not known(c)] == []
    assert all(set(c.as_dict()) == KEYS for c in full_rows)


@pytest.mark.slow
@pytest.mark.parametrize("start", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v), id=k[:24])
                                   for k, v in KNOWN_FAILURES.items()])
def test_full_known_failure(full_rows, start):
    (c,) = [c for c in full_rows if c.claim.startswith(start)]
    assert c.ok
