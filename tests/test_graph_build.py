"""Building a TaskGraph: the fast path (plain ids and numbers, checked by numpy) gives the same graph
as the checked loop, and the vectorised in-tree generator the same tree as the level-by-level one."""

import random

import numpy as np
import pytest

from dlbkit import ConfigError, TaskGraph
from dlbkit.model.graph import _edges_checked, _edges_fast, _topological
from dlbkit.model.graph_gen import in_tree

FIELDS = ("ids", "loads", "costs", "edges", "index", "preds", "succs", "topo")


def fields(g):
    return {f: getattr(g, f) for f in FIELDS}


def in_tree_by_levels(m, k, ls, cs):
    """The generator as it was before numpy: level k first, one task and one edge at a time."""
    first, nxt = {}, 0
    for lv in range(k, 0, -1):
        first[lv] = nxt
        nxt += m ** (lv - 1)
    loads, edges = [0.0] * nxt, []
    for lv in range(k, 0, -1):
        for q in range(m ** (lv - 1)):
            loads[first[lv] + q] = ls[lv - 1]
            if lv > 1:
                edges.append((first[lv] + q, first[lv - 1] + q // m, cs[lv - 2]))
    return list(range(nxt)), loads, edges


def test_a_binary_in_tree_of_three_levels_is_the_hand_drawn_one():
    g = in_tree(2, 3, l=[5, 6, 7], c=[1, 2])
    assert g.ids == tuple(range(7)) and g.loads == (7.0,) * 4 + (6.0,) * 2 + (5.0,)
    assert g.edges == ((0, 4, 2.0), (1, 4, 2.0), (2, 5, 2.0), (3, 5, 2.0), (4, 6, 1.0), (5, 6, 1.0))
    assert g.preds[4] == [(0, 2.0), (1, 2.0)] and g.preds[6] == [(4, 1.0), (5, 1.0)] and g.preds[0] == []
    assert g.succs[3] == [(5, 2.0)] and g.succs[6] == [] and g.topo == tuple(range(7))
    assert g.name == "intree2x3"


@pytest.mark.parametrize("m, k", [(2, 2), (2, 9), (3, 5), (5, 4), (7, 3)])
def test_the_in_tree_is_the_level_by_level_one(m, k):
    ls = [float(i + 1) for i in range(k)]
    cs = [0.5 * (i + 1) for i in range(k - 1)]
    ids, loads, edges = in_tree_by_levels(m, k, ls, cs)
    g = in_tree(m, k, l=ls, c=cs)
    assert fields(g) == fields(TaskGraph(ids, loads=loads, edges=[list(e) for e in edges], name=g.name))
    assert g.edges == tuple(edges) and g.loads == tuple(loads)


def random_graph(seed, n=60, ordered=False):
    """A random DAG on string ids, edges listed in a shuffled order (so preds/succs order matters),
    numbered against the topological order unless *ordered*; int and float data and loads."""
    rng = random.Random(seed)
    rank = list(range(n))
    if not ordered:
        rng.shuffle(rank)
    pairs = {(a, b) for a, b in (sorted(rng.sample(range(n), 2)) for _ in range(3 * n))}
    edges = [(f"t{rank[a]}", f"t{rank[b]}", rng.choice([0, 3, 2.5, 1e-9])) for a, b in pairs]
    rng.shuffle(edges)
    loads = [rng.choice([1, 0, 4.25, 1e30]) for _ in range(n)]
    return [f"t{i}" for i in range(n)], loads, edges


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ordered", [False, True])
def test_the_fast_path_builds_the_graph_the_checked_loop_builds(seed, ordered):
    ids, loads, edges = random_graph(seed, ordered=ordered)
    index = {t: i for i, t in enumerate(ids)}
    fast, checked = _edges_fast(edges, index, len(ids)), _edges_checked(edges, index, len(ids))
    assert fast is not None and fast == checked
    assert fast[3] is ordered
    g = TaskGraph(ids, loads=loads, edges=edges)
    # lists as edges and numpy floats as loads take the checked loops
    slow = TaskGraph(ids, loads=[np.float64(x) for x in loads], edges=[list(e) for e in edges])
    assert fields(g) == fields(slow) and g.topo == _topological(slow.preds, slow.succs, slow.ids)


def test_an_int_load_just_above_the_magnitude_limit_is_refused_on_the_fast_path_too():
    # 10**30 + 1 exceeds 1e30 (= 10**30 + 19884624838656 − …, compared exactly) only by int rules:
    # as a float it would round to 1e30 and pass
    big = int(1e30) + 1
    with pytest.raises(ConfigError, match=r"tasks\['a'\]\.load"):
        TaskGraph(["a", "b"], loads=[big, 1.0], edges=[("a", "b", 1.0)])
    with pytest.raises(ConfigError, match=r"edges\[0\]\.data"):
        TaskGraph(["a", "b"], loads=[1.0, 1.0], edges=[("a", "b", big)])


@pytest.mark.parametrize("edges, field", [
    ([("a", "b", 1.0), ("a", "b", 2.0)], r"edges\[1\] must be at most one edge"),
    ([("a", "b", 1.0), ("b", "b", 2.0)], r"edges\[1\] must be an edge between two different tasks"),
    ([("a", "b", 1.0), ("b", "z", 2.0)], r"edges\[1\]\.to must be the id of a task"),
    ([("a", "b", 1.0), (True, "b", 2.0)], r"edges\[1\]\.from must be the id of a task"),
    ([("a", "b", float("nan"))], r"edges\[0\]\.data"),
    ([("a", "b", -1)], r"edges\[0\]\.data"),
])
def test_bad_edges_name_the_first_bad_edge_whatever_the_path(edges, field):
    with pytest.raises(ConfigError, match=field):
        TaskGraph(["a", "b"], loads=[1.0, 1.0], edges=edges)


def test_edges_given_as_an_iterator_are_all_read():
    g = TaskGraph(["a", "b", "c"], loads=[1.0, 1.0, 1.0], edges=(e for e in [("a", "b", 1.0), ("b", "c", 2.0)]))
    assert g.edges == (("a", "b", 1.0), ("b", "c", 2.0)) and g.preds[2] == [(1, 2.0)]
