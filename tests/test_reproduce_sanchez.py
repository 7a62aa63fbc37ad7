"""The executable reproduction of Sánchez et al. (004): claims hold, records are JSON-ready, files agree."""

import json
import tomllib
from pathlib import Path

import pytest

from dlbkit import Divisible, Platform, make
from dlbkit.reproduce import run
from dlbkit.reproduce import sanchez2002 as repro

EXPERIMENTS = Path(repro.__file__).resolve().parents[1] / "data" / "experiments"

#: claims that fail honestly, by the start of their text, with the reason (see the claim text)
KNOWN_FAILURES = {
    "GACSYS E2/E4, clock-rate speeds": "c0 = 1 with floor rounding: PC3 pinned at 1 unit, the PIIIs' 3.67 "
                                       "truncated to 3, gain 2.33 < 0.85 x 2.78 = 2.36 (note §2.7.1)",
}


@pytest.fixture(scope="module")
def rows():
    return run("sanchez2002")


def is_reported(c) -> bool:
    return not c.asserted


def is_known_failure(c) -> bool:
    return any(c.claim.startswith(k) for k in KNOWN_FAILURES)


def test_every_asserted_claim_holds(rows):
    failing = [c.claim for c in rows if not c.ok and not is_reported(c) and not is_known_failure(c)]
    assert failing == []


@pytest.mark.xfail(strict=True, reason=next(iter(KNOWN_FAILURES.values())))
def test_gain_on_clock_rate_speeds_e2_e4_every_c0(rows):
    (c,) = [c for c in rows if is_known_failure(c)]
    assert c.ok


def test_reported_claims_are_marked_and_not_asserted(rows):
    reported = [c for c in rows if is_reported(c)]
    assert len(reported) == 1 and reported[0].ok is None
    assert reported[0].tolerance.startswith("reported, not asserted")


def test_records_are_json_ready_with_exactly_the_five_keys(rows):
    dicts = [c.as_dict() for c in rows]
    assert all(set(d) == {"claim", "paper", "ours", "tolerance", "asserted", "ok"} for d in dicts)
    assert all(isinstance(d["ok"], bool) if d["asserted"] else d["ok"] is None for d in dicts)
    json.dumps(dicts)


def test_the_note_ranked_list_is_covered_in_order(rows):
    """§6.1 gain (4 rows), §6.2 sequential (2), §6.3 balance (2), §6.4 step (2), §6.5 MxV (3), §6.6, §6.7."""
    assert len(rows) == 15
    assert [c.claim.split()[0] for c in rows[:4]] == ["GACSYS"] * 4
    assert rows[10].claim.startswith("MxV") and rows[12].claim.startswith("MxV")
    assert rows[-1].ours == [36, 22, 10] and rows[-1].ok


def test_calibrated_gain_is_about_six(rows):
    gains = [g for c in rows[2:4] for g in c.ours]
    assert all(4.5 <= g <= 6.5 for g in gains)


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
