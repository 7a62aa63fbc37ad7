"""The claim record shared by every reproduction: asserted rows carry a verdict, reported rows none."""

import json

import pytest

from dlbkit.face.cli import main
from dlbkit.face.reproduce import JSON_SCHEMA, Claim, reported


def test_a_reported_row_has_no_verdict_and_an_asserted_row_a_bool():
    r = reported("x", 1, 2, "the level is not stated")
    assert (r.asserted, r.ok) == (False, None)
    assert r.tolerance == "reported, not asserted (the level is not stated)"
    a = Claim("y", 1.0, 1.05, "±10%", abs(1.05 - 1.0) <= 0.1)
    assert (a.asserted, a.ok) == (True, True)
    assert set(a.as_dict()) == set(JSON_SCHEMA)


def test_a_row_cannot_be_both_reported_and_asserted():
    with pytest.raises(ValueError, match="asserted=False"):
        Claim("z", 1, 1, "reported, not asserted", True)
    with pytest.raises(ValueError, match="without a verdict"):
        Claim("z", 1, 1, "±1", None)


def test_the_cli_counts_asserted_claims_only_and_prints_a_dash(monkeypatch, capsys):
    rows = [Claim("a", 1, 1, "exact", True), Claim("b", 1, 2, "exact", False), reported("c", 1, 9, "why")]
    monkeypatch.setattr("dlbkit.face.reproduce.run", lambda name: rows)
    assert main(["reproduce", "x"]) == 1
    out = capsys.readouterr().out
    assert "x: 1 of 2 asserted claims reproduced within tolerance (1 more reported, not asserted)" in out
    assert [line.split()[-1] for line in out.splitlines() if line[:2] in ("a ", "b ", "c ")] == ["PASS", "FAIL", "—"]
    assert main(["reproduce", "x", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(d["asserted"], d["ok"]) for d in data] == [(True, True), (True, False), (False, None)]
    assert all(list(d) == list(JSON_SCHEMA) for d in data)
