"""What a file holds, as facts (dlbkit.model.description): a description's JSON object, its keys checked, and
a kind of file matched by its suffixes."""

from pathlib import Path

import pytest

from dlbkit.model.description import RESERVED, Description, Fact, FileKind


def test_a_description_is_one_json_object_of_its_facts_and_their_units():
    d = Description("g.json", "task graph", "TaskGraph.read",
                    (Fact("tasks", "tasks", 3), Fact("span", "span", 2.5, "s"), Fact("made", "made", None, "s")))
    assert d.as_dict() == {"file": "g.json", "kind": "task graph", "reader": "TaskGraph.read", "tasks": 3,
                           "span": 2.5, "made": None, "units": {"span": "s", "made": "s"}}


@pytest.mark.parametrize("keys", [("tasks", "tasks"), ("kind",), ("units",), ("file", "x")])
def test_a_repeated_or_reserved_key_is_refused(keys):
    """Every key of the JSON object means one thing: a fact may not repeat one nor take file, kind, reader, units."""
    with pytest.raises(TypeError, match="repeat or are reserved"):
        Description("f", "k", "r", tuple(Fact(k, k, 1) for k in keys))
    assert set(RESERVED) == {"file", "kind", "reader", "units"}


def test_a_kind_matches_its_suffixes_in_any_case():
    k = FileKind("task graph", (".stg", ".adg"), lambda p: None)
    assert k.matches(Path("a/g.STG")) and k.matches(Path("g.adg"))
    assert not k.matches(Path("g.stg.txt")) and not k.matches(Path("stg"))
    assert k.listed == "task graph (.stg, .adg)"


@pytest.mark.parametrize("suffixes", [(), ("json",), (".JSON",)])
def test_suffixes_are_lower_case_with_their_dot(suffixes):
    with pytest.raises(TypeError, match="suffixes"):
        FileKind("x", suffixes, lambda p: None)
