"""Topologies for neighbourhood balancing (001 §3.1) and task-tree workloads (001 §3.2)."""

import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.errors import ConfigError
from dlbkit.model.topology import build, diameter, dims_create, edge_colouring, kary_ncube, neighbour_lists
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree, task_depth, task_id, tree_from_dict

from support.profiles import examples

# -- topologies ------------------------------------------------------------------------------------

@pytest.mark.parametrize("p, dims", [(2, (2, 1)), (4, (2, 2)), (8, (4, 2)), (16, (4, 4)), (32, (8, 4)),
                                     (64, (8, 8)), (128, (16, 8)), (256, (16, 16)), (512, (32, 16))])
def test_dims_create_is_mpi_dims_create(p, dims):
    # 001 §3.1 [INF]: the most square factorisation, x >= y
    assert dims_create(p) == dims


def _is_proper(g, colours):
    seen = set()
    for c in colours:
        nodes = [v for e in c for v in e]
        assert len(nodes) == len(set(nodes)), "two edges of one colour share a node"
        for a, b in c:
            assert g.has_edge(a, b)
            seen.add(frozenset((a, b)))
    assert seen == {frozenset(e) for e in g.edges}, "every edge gets exactly one colour"


@pytest.mark.parametrize("kind, n, n_colours", [("chain", 8, 2), ("ring", 16, 2), ("ring", 5, 3),
                                                ("mesh", 32, 4), ("torus", 16, 4), ("torus", 256, 4),
                                                ("hypercube", 32, 5), ("hypercube", 2, 1),
                                                ("complete", 8, 7), ("complete", 9, 9), ("complete", 2, 1)])
def test_edge_colouring_of_kary_ncubes_is_proper_and_minimal(kind, n, n_colours):
    g = build(kind, n)
    colours = edge_colouring(g)
    _is_proper(g, colours)
    assert len(colours) == n_colours


def test_torus_ids_and_colour_order_follow_001():
    # id = xi + x*yj; colours x-A, x-B, y-A, y-B with the wrap edge in B (001 §3.1)
    g = kary_ncube((4, 2))
    assert edge_colouring(g) == [[(0, 1), (2, 3), (4, 5), (6, 7)], [(1, 2), (3, 0), (5, 6), (7, 4)],
                                 [(0, 4), (1, 5), (2, 6), (3, 7)]]
    assert sorted(g.neighbors(0)) == [1, 3, 4]  # the 2-long y side has one edge, not two


def test_mesh_and_torus_keep_row_major_numbering():
    g = build("mesh", 6, rows=2)  # 2 rows x 3 columns
    assert neighbour_lists(g) == [[1, 3], [0, 2, 4], [1, 5], [0, 4], [1, 3, 5], [2, 4]]


@settings(max_examples=examples(30), deadline=None)
@given(st.integers(3, 9), st.integers(0, 10_000))
def test_any_graph_gets_a_proper_colouring(n, seed):
    g = nx.gnm_random_graph(n, 2 * n, seed=seed)
    if not nx.is_connected(g):
        return
    g2 = build("edges", n, edges=[list(e) for e in g.edges])
    colours = edge_colouring(g2)
    _is_proper(g2, colours)
    assert len(colours) <= 2 * max(d for _, d in g2.degree) - 1


@pytest.mark.parametrize("kind, n, d", [("chain", 8, 7), ("ring", 16, 8), ("torus", 64, 8), ("mesh", 32, 10),
                                        ("hypercube", 64, 6), ("complete", 5, 1)])
def test_diameter(kind, n, d):
    assert diameter(build(kind, n)) == d


def test_a_hypercube_of_one_node_is_one_node():
    g = build("hypercube", 1)
    assert g.number_of_nodes() == 1 and edge_colouring(g) == [] and diameter(g) == 0


def test_bad_topologies_name_the_field():
    with pytest.raises(ConfigError, match="topology.kind"):
        build("donut", 4)
    with pytest.raises(ConfigError, match="topology.rows"):
        build("torus", 6, rows=1)  # a torus side < 2
    with pytest.raises(ConfigError, match="topology.dims"):
        kary_ncube((0, 3))


# -- tree workloads --------------------------------------------------------------------------------

def test_balanced_binary_tree_of_depth_16_has_65535_nodes():
    t = TaskTree(kind="balanced", depth=16, fanout=2)
    assert t.count() == (65535, 32767)
    assert t.expected_nodes() == 65535
    assert t.estimate(t.roots()[0]) == 65535


def test_imbalance_zero_is_the_balanced_tree_erratum_applied():
    # 001 §4.10 item 1: split probability 1 - m, so m = 0 is the balanced tree
    assert TaskTree(kind="imbalance", imbalance=0.0, seed=7).count() == (65535, 32767)


@pytest.mark.parametrize("m, expected", [(0.1, 1 + 2 * (1.9 ** 15 - 1) / 0.9), (0.3, 1 + 2 * (1.7 ** 15 - 1) / 0.7)])
def test_imbalance_tree_expected_size_is_the_note_formula(m, expected):
    assert TaskTree(kind="imbalance", imbalance=m).expected_nodes() == pytest.approx(expected, rel=1e-12)
    # the mean over seeds approaches it (the size varies a lot from run to run, as 001 Table 4.1 says)
    sizes = [TaskTree(kind="imbalance", imbalance=m, seed=s).count()[0] for s in range(40)]
    assert sum(sizes) / len(sizes) == pytest.approx(expected, rel=0.15)


def test_imbalance_one_is_a_right_slanted_tree_with_two_children_per_level():
    assert TaskTree(kind="imbalance", imbalance=1.0, depth=10).count() == (1 + 2 * 9, 9)


def test_random_tree_is_calibrated_to_29535_nodes_and_repeatable():
    t = TaskTree(kind="random", seed=3)
    assert t.expected_nodes() == pytest.approx(29535, rel=0.001)
    assert t.count() == TaskTree(kind="random", seed=3).count()
    sizes = [TaskTree(kind="random", seed=s).count()[0] for s in range(8)]
    assert len(set(sizes)) > 1
    assert sum(sizes) / len(sizes) == pytest.approx(29535, rel=0.08)


def test_min_split_depth_expands_fully_first():
    t = TaskTree(kind="random", slope=1.0, min_split_depth=4, depth=10)
    # levels 1..4 split surely, depth 5 with probability 1 - 1*(5-1-4) = 1, depth 6 with 0
    assert t.count()[0] == 2 ** 6 - 1


def test_children_ids_and_depths():
    t = TaskTree(kind="balanced", depth=3, fanout=3)
    root = t.roots()[0]
    assert (task_id(root), task_depth(root)) == (0, 1)
    kids = t.children(root)
    assert [(task_id(k), task_depth(k)) for k in kids] == [(1, 2), (2, 2), (3, 2)]
    assert [task_id(k) for k in t.children(kids[2])] == [10, 11, 12]
    assert t.children(t.children(kids[0])[0]) == []


@settings(max_examples=examples(25), deadline=None)
@given(st.sampled_from(["balanced", "random", "imbalance"]), st.integers(1, 9), st.integers(1, 4),
       st.floats(0, 1), st.integers(0, 1000))
def test_every_node_id_is_unique(kind, depth, fanout, m, seed):
    t = TaskTree(kind=kind, depth=depth, fanout=fanout, imbalance=m, seed=seed)
    seen, stack = set(), t.roots()
    while stack:
        v = stack.pop()
        assert v not in seen
        seen.add(v)
        assert task_depth(v) <= depth
        stack.extend(t.children(v))
    assert len(seen) == t.count()[0]


def test_flat_tasks():
    w = FlatTasks([1.0, 2.9, 4.8])
    assert w.roots() == [0, 1, 2] and w.children(1) == [] and w.cost(2) == 4.8


@pytest.mark.parametrize("kw, field", [({"kind": "bushy"}, "workload.kind"), ({"depth": 0}, "workload.depth"),
                                       ({"imbalance": 1.5}, "workload.imbalance"), ({"order": "dfs"}, "workload.order"),
                                       ({"fanout": 0}, "workload.fanout")])
def test_bad_tree_parameters_name_the_field(kw, field):
    with pytest.raises(ConfigError, match=field):
        TaskTree(**kw)


def test_tree_from_dict():
    t = tree_from_dict({"kind": "tree", "shape": "imbalance", "imbalance": 0.2, "depth": 12})
    assert t.kind == "imbalance" and t.depth == 12 and math.isclose(t.imbalance, 0.2)
    with pytest.raises(ConfigError, match="workload.height"):
        tree_from_dict({"height": 3})
    with pytest.raises(ConfigError, match="workload.shape"):
        tree_from_dict({"shape": "bushy"})


@pytest.mark.parametrize("costs, field", [([-1.0, 1.0], r"workload.costs\[0\]"), ([1.0, float("nan")], r"costs\[1\]"),
                                          ("abc", "workload.costs"), ([], "workload.costs")])
def test_bad_flat_task_costs_name_the_field(costs, field):
    with pytest.raises(ConfigError, match=field):
        FlatTasks(costs)
