"""TaskGraphs written as WfFormat 1.5 and 1.4 (dlbkit.families.graph.model.wfformat_write): the document by
hand, what is refused, and the round trip (read(write(g)) is g) on a generated graph and random DAGs."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.generate import layered, topcuoglu10
from dlbkit.families.graph.model.workload import (
    TaskGraph,
    from_wfformat,
    read_wfformat,
    to_wfformat,
    write_wfformat,
)

# a (10) → b (4) carries 100, a → c (6) 310, b → d (2) 50, c → d 30. One file per edge, named for its
# parent and the parent's out-edge number: a.out0 (a→b, 100 B), a.out1 (a→c, 310 B), b.out0 (b→d, 50 B),
# c.out0 (c→d, 30 B): 4 files, 100 + 310 + 50 + 30 = 490 B. c reads a.out1 and writes c.out0; d reads
# b.out0 and c.out0.
TOY = TaskGraph(["a", "b", "c", "d"], loads=[10, 4, 6, 2],
                edges=[("a", "b", 100), ("a", "c", 310), ("b", "d", 50), ("c", "d", 30)], name="toy")


def _edges(g):
    return {(s, d): data for s, d, data in g.edges}


def _same(g, h):
    """h is g read back: ids (as strings), loads and every edge with its data."""
    assert h.ids == tuple(map(str, g.ids)) and h.loads == g.loads and h.name == g.name
    assert _edges(h) == {(str(s), str(d)): data for (s, d), data in _edges(g).items()}


def test_the_1_5_document_by_hand():
    doc = to_wfformat(TOY)
    assert doc["schemaVersion"] == "1.5" and doc["name"] == "toy"
    spec, ex = doc["workflow"]["specification"], doc["workflow"]["execution"]
    assert spec["files"] == [{"id": "a.out0", "sizeInBytes": 100}, {"id": "a.out1", "sizeInBytes": 310},
                             {"id": "b.out0", "sizeInBytes": 50}, {"id": "c.out0", "sizeInBytes": 30}]
    assert sum(f["sizeInBytes"] for f in spec["files"]) == 490
    assert all(type(f["sizeInBytes"]) is int for f in spec["files"])  # the schema's integers
    c, d = spec["tasks"][2], spec["tasks"][3]
    assert c == {"name": "c", "id": "c", "parents": ["a"], "children": ["d"], "inputFiles": ["a.out1"],
                 "outputFiles": ["c.out0"]}
    assert d["parents"] == ["b", "c"] and d["inputFiles"] == ["b.out0", "c.out0"] and d["outputFiles"] == []
    assert ex["tasks"] == [{"id": t, "runtimeInSeconds": r} for t, r in zip("abcd", (10.0, 4.0, 6.0, 2.0))]
    assert ex["makespanInSeconds"] == 0.0 and ex["executedAt"].startswith("1970-01-01")


def test_the_1_4_document_by_hand():
    doc = to_wfformat(TOY, "1.4")
    wf = doc["workflow"]
    assert doc["schemaVersion"] == "1.4" and wf["makespanInSeconds"] == 0.0 and "machines" not in wf
    d = wf["tasks"][3]
    assert d == {"name": "d", "type": "compute", "parents": ["b", "c"], "runtimeInSeconds": 2.0,
                 "files": [{"name": "b.out0", "sizeInBytes": 50, "link": "input"},
                           {"name": "c.out0", "sizeInBytes": 30, "link": "input"}]}
    assert [f["name"] for f in wf["tasks"][0]["files"]] == ["a.out0", "a.out1"]


@pytest.mark.parametrize("version", ["1.5", "1.4"])
def test_written_files_read_back_by_content(tmp_path, version):
    p = tmp_path / "toy.json"
    write_wfformat(TOY, p, version)
    g = TaskGraph.read(p)  # a .json with schemaVersion and workflow: WfFormat
    _same(TOY, g)
    assert g.meta["format"] == "WfFormat" and g.meta["schemaVersion"] == version
    assert g.meta["makespan"] is None  # 0: none recorded
    assert sum(g.loads) == 22 and sum(_edges(g).values()) == 490
    write_wfformat(TOY, tmp_path / "again.json", version)  # the same graph, the same bytes
    assert (tmp_path / "again.json").read_bytes() == p.read_bytes()


def test_a_recorded_makespan_is_written_back():
    doc = to_wfformat(TOY)
    doc["workflow"]["execution"]["makespanInSeconds"] = 20.5
    g = from_wfformat(doc)
    assert g.meta["makespan"] == 20.5
    assert to_wfformat(g)["workflow"]["execution"]["makespanInSeconds"] == 20.5
    assert to_wfformat(g, "1.4")["workflow"]["makespanInSeconds"] == 20.5


def test_a_generated_graph_round_trips(tmp_path):
    g = layered(60, width=6, seed=3)  # float loads and data
    write_wfformat(g, tmp_path / "l.json")
    _same(g, read_wfformat(tmp_path / "l.json"))


def test_what_cannot_be_read_back_is_refused():
    with pytest.raises(ConfigError) as e:
        to_wfformat(topcuoglu10())  # a cost table: no one runtime per task
    assert e.value.field == "graph" and "cost table" in e.value.allowed
    with pytest.raises(ConfigError) as e:
        to_wfformat(TOY, "1.6")
    assert e.value.field == "version" and "1.5, 1.4" in e.value.allowed
    with pytest.raises(ConfigError) as e:
        to_wfformat(TaskGraph([1, "1"], loads=[1, 1]))
    assert e.value.field == "graph ids" and e.value.value == "1"


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 12))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]),
                         max_size=30))
    number = st.one_of(st.integers(0, 10 ** 12), st.floats(0, 1e12, allow_nan=False, allow_infinity=False))
    loads = draw(st.lists(number, min_size=n, max_size=n))
    ids = list(range(n)) if draw(st.booleans()) else [f"t{i}" for i in range(n)]
    edges = [(ids[i], ids[j], draw(number)) for i, j in draw(st.permutations(sorted(pairs)))]
    return TaskGraph(ids, loads=loads, edges=edges, name="g")


@settings(max_examples=examples(100), deadline=None)
@given(graphs(), st.sampled_from(["1.5", "1.4"]))
def test_random_dags_round_trip(g, version):
    """Through the JSON text too: ints and floats come back exactly."""
    _same(g, from_wfformat(json.loads(json.dumps(to_wfformat(g, version)))))
