"""The graph family's facts for ``dlbkit describe`` (dlbkit.families.graph.face.describe): a cost table's
work, the critical path on a graph whose longest path is not its heaviest chain of tasks, and a property
against every path enumerated on random small DAGs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

from dlbkit import Network
from dlbkit.families.graph.face.describe import FILES, graph_facts
from dlbkit.families.graph.face.family import FAMILY
from dlbkit.families.graph.model.workload import TaskGraph


def facts(g, **kw):
    return {f.key: f.value for f in graph_facts(g, **kw)}


def test_the_family_declares_its_files():
    assert FAMILY.files == FILES
    assert [k.suffixes for k in FILES] == [(".json",), (".stg", ".adg"), (".dax", ".xml"), (".ntp",)]


def test_a_cost_tables_work_is_the_mean_of_each_row():
    """Rows (2, 4) and (6, 2), edge 0 → 1: work 3 + 4 = 7 = the critical path (one chain); levels 2, width 1."""
    f = facts(TaskGraph([0, 1], costs=[[2, 4], [6, 2]], edges=[(0, 1, 0)]))
    assert (f["total_work"], f["critical_path"], f["levels"], f["width"]) == (7.0, 7.0, 2, 1)
    assert f["weights"].startswith("a cost table on 2 nodes")


def test_the_default_network_costs_each_edge_its_latency_and_bytes():
    """a (1) → b (1) with 5e8 B, a → c (3) with none: without communication a c = 4 is the longest; on the
    default network (0.1 ms, 125 MB/s) a b = 1 + 1e-4 + 5e8 / 125e6 + 1 = 6.0001 beats a c = 1 + 1e-4 + 3 =
    4.0001 (an edge without data still pays the latency); {b, c} is one level: width 2."""
    g = TaskGraph(["a", "b", "c"], loads=[1, 1, 3], edges=[("a", "b", 5e8), ("a", "c", 0)])
    f = facts(g, network=Network())
    assert f["critical_path"] == 4.0
    assert abs(f["critical_path_with_communication"] - 6.0001) < 1e-12
    assert (f["width"], f["levels"], f["total_data"]) == (2, 2, 5e8)


def _longest_by_enumeration(g: TaskGraph, edge_cost) -> float:
    """The heaviest path of *g*, every path from every task walked (small graphs only)."""
    best = 0.0

    def walk(i, total):
        nonlocal best
        best = max(best, total)
        for j, data in g.succs[i]:
            walk(j, total + edge_cost(data) + g.weight(j))
    for i in range(g.n_tasks):
        walk(i, g.weight(i))
    return best


@st.composite
def dags(draw):
    n = draw(st.integers(1, 7))
    loads = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    data = draw(st.lists(st.integers(0, 5), min_size=len(chosen), max_size=len(chosen)))
    return TaskGraph(list(range(n)), loads=loads, edges=[(i, j, d) for (i, j), d in zip(chosen, data)])


@settings(max_examples=examples(100), deadline=None)
@given(dags())
def test_the_critical_path_is_the_heaviest_of_every_path_and_the_levels_cover_the_tasks(g):
    """Integer loads and data: the sums are exact, so equality holds. The levels partition the tasks: width ×
    levels ≥ tasks ≥ levels; with no edge every task is in level 0."""
    f = facts(g)
    assert f["critical_path"] == _longest_by_enumeration(g, lambda d: 0.0)
    assert f["total_work"] == sum(g.loads) >= f["critical_path"]
    if f["total_data"] > 0:
        assert f["critical_path_with_communication"] == _longest_by_enumeration(g, lambda d: d)
    else:
        assert "critical_path_with_communication" not in f
    assert f["width"] * f["levels"] >= g.n_tasks >= f["levels"] and f["width"] >= 1
    if g.n_edges == 0:
        assert (f["levels"], f["width"]) == (1, g.n_tasks)
