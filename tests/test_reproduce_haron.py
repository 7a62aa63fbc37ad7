"""The executable reproduction of Haron 1998 (001): exact claims, tolerances, honest failures.

The default run checks the fast groups (iteration counts, compute and synch columns, balanced-tree
rows and ITA, Table 5.10, Xu & Lau). The trend sweeps (i_b search, g and s sweeps, contention
models, algorithmic adaptivity) and the CLI run are ``slow``: ``pytest -m slow
tests/test_reproduce_haron.py`` (or DLBKIT_SLOW=1). Known misses are strict xfails carrying the
measured values.
"""

import json
import os

import pytest

from dlbkit.cli import main
from dlbkit.reproduce import REPRODUCTIONS
from dlbkit.reproduce import haron1998 as repro

KEYS = {"claim", "paper", "ours", "tolerance", "asserted", "ok"}

#: claims that fail honestly, by the start of their text, with the measured values
KNOWN_FAILURES = {
    "H3 Table 5.5": "LDSV compute at g = 10: 0.006267 s vs the printed 0.0063 (0.52% > 0.5%; the printed value has "
                    "two significant digits, and ours rounds to it)",
    "H12 (a) GDEM t1 time-ITA (%) rises with g": "p = 4 is flat: 0.25, 0.25, 0.23, 0.22 (falls by 0.02–0.03 pp; "
                                                 "001: −0.13 … 0.12); p = 32 and 128 rise",
    "H13 (b)": "on our random tree the task-count t2 at p = 128 gives +4.80 / +0.22 at g = 10 / 100 (001: −26 / −46); "
               "−20 / −37 at g = 10³ / 10⁴, −29 … −78 over s, −63.8 on the balanced tree",
}


def known(c) -> bool:
    return any(c.claim.startswith(k) for k in KNOWN_FAILURES)


@pytest.fixture(scope="module")
def fast_rows():
    return [*repro._claims_iterations(), *repro._claims_compute(), *repro._claims_synch(),
            *repro._claims_balanced_rows(), *repro._claims_table_5_10(), *repro._claims_xu_lau()]


def by_start(rows, start):
    (c,) = [c for c in rows if c.claim.startswith(start)]
    return c


def test_registered():
    assert REPRODUCTIONS["haron1998"] == "dlbkit.reproduce.haron1998:claims"


def test_tables_4_7_and_4_8_iteration_counts_are_exact(fast_rows):
    assert by_start(fast_rows, "H1 ").ours == [32768, 16385, 8194, 4099, 2053, 1031, 522, 269, 148]
    assert by_start(fast_rows, "H2 ").ours == [65535, 21846, 9365, 4372, 2119, 1046, 523, 264, 137]


def test_every_fast_claim_holds_except_the_known_failures(fast_rows):
    assert [c.claim for c in fast_rows if c.asserted and not c.ok and not known(c)] == []
    assert len(fast_rows) == 20


def test_balanced_tree_gdem_ita_within_one_point(fast_rows):
    rows = [c for c in fast_rows if c.claim.startswith("H8") and "GDEM" in c.claim]
    assert len(rows) == 3 and all(c.ok for c in rows)
    assert by_start(fast_rows, "H8 Tables 5.25/5.28/5.31 m = 0 speed-ITA (%) of GDEM p = 128").ours == \
        pytest.approx([24.48, -38.95, 11.92], abs=1.0)


def test_synch_column_is_exact_to_four_decimals(fast_rows):
    c = by_start(fast_rows, "H6")
    assert c.ok and c.ours == c.paper


def test_records_have_exactly_the_five_keys_and_are_json_ready(fast_rows):
    dicts = [c.as_dict() for c in fast_rows]
    assert all(set(d) == KEYS for d in dicts)
    assert all(isinstance(d["ok"], bool) if d["asserted"] else d["ok"] is None for d in dicts)
    json.dumps(dicts)


@pytest.mark.parametrize("start", [pytest.param("H3 Table 5.5", marks=pytest.mark.xfail(
    strict=True, reason=KNOWN_FAILURES["H3 Table 5.5"]))])
def test_fast_known_failure(fast_rows, start):
    assert by_start(fast_rows, start).ok


# --- the full reproduction (slow) -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def full_rows(request):
    if "slow" not in (request.config.getoption("markexpr") or "") and not os.environ.get("DLBKIT_SLOW"):
        pytest.skip("the full reproduction runs with -m slow or DLBKIT_SLOW=1")
    return repro.claims()


@pytest.mark.slow
def test_full_every_claim_holds_except_the_known_failures(full_rows):
    assert len(full_rows) == 30
    assert [c.claim for c in full_rows if c.asserted and not c.ok and not known(c)] == []
    assert all(set(c.as_dict()) == KEYS for c in full_rows)


@pytest.mark.slow
def test_full_trends_best_interval_and_work_detector(full_rows):
    assert by_start(full_rows, "H15").ok and by_start(full_rows, "H14").ok
    assert by_start(full_rows, "H12 (a) GDEM t1 time-ITA (%) rises with s").ok
    assert by_start(full_rows, "H16 (d)").ok


@pytest.mark.slow
@pytest.mark.parametrize("start", [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=v), id=k[:24])
                                   for k, v in KNOWN_FAILURES.items()])
def test_full_known_failure(full_rows, start):
    assert by_start(full_rows, start).ok


@pytest.mark.slow
def test_cli_json(capsys):
    status = main(["reproduce", "haron1998", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert status == 1 and len(rows) == 30  # the known failures make the status 1
    assert all(set(r) == KEYS for r in rows)
