"""The task-graph workload: validation, readers and writers, networkx, generators."""

import json

import networkx as nx
import pytest

from dlbkit import ConfigError, TaskGraph
from dlbkit.families.graph.model.workload import from_adg, from_stg, to_adg, to_stg
from dlbkit.families.graph.model.costs import costs_for, platform_from_ntp, upward_rank
from dlbkit.families.graph.model.generate import (
    atmospheric,
    fft,
    gaussian_elimination,
    graph_from_dict,
    in_tree,
    layered,
    sinclair_kmeans9,
    topcuoglu10,
)


def small():
    return TaskGraph(["a", "b", "c", "d"], loads=[1, 2, 3, 1],
                     edges=[("a", "b", 2), ("a", "c", 3), ("b", "d", 1), ("c", "d", 1)], name="diamond")


# --- bad input: one ConfigError naming the field and what is allowed -------------------------------
def test_a_cycle_is_refused_and_named():
    with pytest.raises(ConfigError, match=r"edges must be a directed acyclic graph .*got 'c -> b -> c'"):
        TaskGraph(["a", "b", "c"], loads=[1, 1, 1], edges=[("a", "b"), ("b", "c"), ("c", "b")])


def test_an_edge_to_an_unknown_task_names_the_edge():
    with pytest.raises(ConfigError, match=r"edges\[1\].to must be the id of a task of the graph; got 'z'"):
        TaskGraph(["a", "b"], loads=[1, 1], edges=[("a", "b"), ("a", "z")])


def test_a_negative_load_names_the_task():
    with pytest.raises(ConfigError, match=r"tasks\['b'\].load must be a finite number >= 0; got -1"):
        TaskGraph(["a", "b"], loads=[1, -1])


def test_a_cost_table_of_the_wrong_width_is_refused_in_the_graph_and_against_the_nodes():
    with pytest.raises(ConfigError, match=r"tasks\['b'\].costs must be 3 values, one per node"):
        TaskGraph(["a", "b"], costs=[[1, 2, 3], [1, 2]])
    with pytest.raises(ConfigError, match=r"costs must be a cost table with one column per node \(2 nodes\)"):
        costs_for(topcuoglu10(), 2)


@pytest.mark.parametrize("kw, field", [(dict(loads=[1, 1], costs=[[1], [1]]), "tasks"),
                                       (dict(loads=[1]), "loads"),
                                       (dict(loads=[1, 1], edges=[("a", "a")]), r"edges\[0\]"),
                                       (dict(loads=[1, 1], edges=[("a", "b"), ("a", "b")]), r"edges\[1\]"),
                                       (dict(loads=[1, 1], edges=[("a", "b", -2)]), r"edges\[0\].data")])
def test_other_malformed_graphs_are_config_errors(kw, field):
    with pytest.raises(ConfigError, match=field):
        TaskGraph(["a", "b"], **kw)


def test_duplicate_ids_are_refused():
    with pytest.raises(ConfigError, match=r"tasks\[1\].id must be unique"):
        TaskGraph(["a", "a"], loads=[1, 1])


# --- readers and writers ----------------------------------------------------------------------------
@pytest.mark.parametrize("g", [small(), topcuoglu10(), atmospheric()], ids=lambda g: g.name)
def test_json_round_trip_keeps_ids_weights_and_edges(g, tmp_path):
    p = tmp_path / "g.json"
    g.write(p)
    h = TaskGraph.read(p)
    assert (h.ids, h.loads, h.costs, h.edges, h.name) == (g.ids, g.loads, g.costs, g.edges, g.name)


def test_the_json_format_reads_loads_and_costs():
    d = {"tasks": [{"id": "a", "costs": [14, 16, 9]}, {"id": "b", "costs": [13, 19, 18]}],
         "edges": [{"from": "a", "to": "b", "data": 18}]}
    g = TaskGraph.from_dict(json.loads(json.dumps(d)))
    assert g.width == 3 and g.succs[0] == [(1, 18.0)]
    with pytest.raises(ConfigError, match=r"graph.tasks\[0\] must be an object with \"id\" and exactly one"):
        TaskGraph.from_dict({"tasks": [{"id": "a", "load": 1, "costs": [1]}]})


STG = """          4
          0          0          0
          1          3          1          0
          2          5          1          0
          3          2          2          1          2
          4          4          1          3
          5          0          1          4
# a made-up example
"""


def test_stg_reads_dummy_entry_and_exit_of_cost_zero_and_round_trips():
    g = from_stg(STG)
    assert g.ids == (0, 1, 2, 3, 4, 5) and g.loads == (0, 3, 5, 2, 4, 0)
    assert g.entries == [0] and g.exits == [5] and all(d == 0 for *_, d in g.edges)
    h = from_stg(to_stg(g))
    assert (h.ids, h.loads, h.edges) == (g.ids, g.loads, g.edges)


@pytest.mark.parametrize("text, field", [("3\n0 0 0\n", "task lines"), ("1\n0 0 0\n1 2 1 0\n2 1 1 1\n", "dummy"),
                                         ("1\n0 0 0\n1 2 1 0\n2 0 2 1\n", "task line 2"), ("x\n", "integers")])
def test_bad_stg_is_one_config_error(text, field):
    with pytest.raises(ConfigError, match=field):
        from_stg(text)


def test_reading_an_unknown_suffix_or_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match=r"graph file must be a .json, .stg, .adg, .dax or .xml file"):
        TaskGraph.read(tmp_path / "g.txt")
    with pytest.raises(ConfigError, match=r"an existing .json, .stg or .adg file"):
        TaskGraph.read(tmp_path / "g.json")


def test_networkx_round_trip():
    g = topcuoglu10()
    nxg = g.to_networkx()
    assert isinstance(nxg, nx.DiGraph) and nxg.nodes[1]["costs"] == [14, 16, 9] and nxg.edges[1, 2]["data"] == 18
    h = TaskGraph.from_networkx(nxg)
    assert (h.ids, h.costs, h.edges) == (g.ids, g.costs, g.edges)
    plain = nx.DiGraph([("x", "y")])
    assert TaskGraph.from_networkx(plain).loads == (1.0, 1.0)


# --- generators -------------------------------------------------------------------------------------
@pytest.mark.parametrize("m", [3, 5, 10])
def test_gaussian_elimination_has_the_published_task_count(m):
    g = gaussian_elimination(m)
    assert g.n_tasks == (m * m + m - 2) // 2 and g.entries == [0] and len(g.exits) == 1


@pytest.mark.parametrize("p", [2, 4, 8, 16])
def test_fft_has_2p_minus_1_calls_and_p_log_p_butterflies(p):
    g = fft(p)
    assert g.n_tasks == 2 * p - 1 + p * p.bit_length() - p and g.entries == [0] and len(g.exits) == p


def test_layered_is_seeded_and_respects_its_size():
    a, b = layered(200, width=8, seed=3), layered(200, width=8, seed=3)
    assert a.n_tasks == 200 and a.edges == b.edges and a.loads == b.loads
    assert layered(200, width=8, seed=4).edges != a.edges
    assert layered(20, nodes=4, seed=1).width == 4


def test_in_tree_levels_and_numbering():
    g = in_tree(3, 3)
    assert g.n_tasks == 13 and g.exits == [12] and g.succs[0] == [(9, 1.0)] and g.succs[3] == [(10, 1.0)]


def test_atmospheric_graph_precedence_levels_match_the_data_file():
    """Note App. A.1: prec 24, 22 (2..9), 18 (10..13), 7 (14..17), 1 (18); Σ l = 86."""
    g = atmospheric()
    prec = upward_rank(costs_for(g, 1, "thesis"))
    assert prec == [24.0] + [22.0] * 8 + [18.0] * 4 + [7.0] * 4 + [1.0] and sum(g.loads) == 86


def test_the_sinclair_example_has_the_reconstructed_cu():
    g = sinclair_kmeans9()
    assert g.n_tasks == 9 and sum(g.loads) == 23 and sum(d for *_, d in g.edges) == 38


def test_an_experiment_workload_table_builds_a_graph(tmp_path):
    assert graph_from_dict({"kind": "graph", "generator": "fft", "points": 4}).n_tasks == 15
    small().write(tmp_path / "d.json")
    assert graph_from_dict({"kind": "graph", "file": str(tmp_path / "d.json")}).name == "diamond"
    with pytest.raises(ConfigError, match=r"workload.pointz"):
        graph_from_dict({"kind": "graph", "generator": "fft", "pointz": 4})
    with pytest.raises(ConfigError, match=r"exactly one of file"):
        graph_from_dict({"kind": "graph"})


@pytest.mark.parametrize("name, end", [("layerd", "got 'layerd' (did you mean 'layered'?)"),
                                       (["layered"], "got ['layered']")])  # a list crashed: unhashable
def test_a_wrong_generator_is_one_error_listing_them(name, end):
    with pytest.raises(ConfigError) as e:
        graph_from_dict({"kind": "graph", "generator": name})
    assert str(e.value) == ("workload.generator must be one of layered, gaussian, fft, in-tree, atmospheric, "
                            "sinclair-3.5.2, sinclair-3.4.1, topcuoglu2002, wfcommons; " + end)

ATMOS_ADG_HEAD = "1 1 0 1.0 24.0 (2,1.0) (3,1.0) (4,1.0) (5,1.0) (6,1.0) (7,1.0) (8,1.0) (9,1.0)"


def test_adg_writes_the_notes_atmospheric_file_and_reads_it_back(tmp_path):
    """The note's App. A.1 lists the graph as .adg: our writer gives those lines (prec included)."""
    text = to_adg(atmospheric())
    assert text.splitlines()[0] == ATMOS_ADG_HEAD and text.splitlines()[-1] == "18 3 4 1.0 1.0"
    g = from_adg(text)
    assert (g.ids, g.loads, g.edges) == (atmospheric().ids, atmospheric().loads, atmospheric().edges)
    atmospheric().write(tmp_path / "a.adg")
    assert TaskGraph.read(tmp_path / "a.adg").n_edges == atmospheric().n_edges


@pytest.mark.parametrize("text, field", [("1 1 0 1.0\n", "line 1"), ("1 1 1 1.0 2.0 (2,1.0)\n2 3 1 1.0 1.0\n", "n_preds"),
                                         ("1 2 0 1.0 2.0\n", "type"), ("1 1 0 x 2.0\n", "numbers")])
def test_bad_adg_is_one_config_error(text, field):
    with pytest.raises(ConfigError, match=field):
        from_adg(text)


def test_ntp_ring_and_bus_become_platforms_whose_hops_are_the_distances(tmp_path):
    ring = tmp_path / "bring4.ntp"
    ring.write_text("4\n1.0\n2.0\n1.0\n1.0\n0 1 2 1\n1 0 1 2\n2 1 0 1\n1 2 1 0\n")
    p = platform_from_ntp(ring)
    assert p.n_nodes == 4 and list(p.speeds) == [1, 2, 1, 1]
    assert costs_for(atmospheric(), p, "thesis").per[0] == [0.0, 1.0, 2.0, 1.0]
    bad = tmp_path / "bad.ntp"
    bad.write_text("2\n1\n1\n0 3\n3 0\n")
    with pytest.raises(ConfigError, match="hop counts of a connected graph"):
        platform_from_ntp(bad)


@pytest.mark.parametrize("topology", ["complete", "ring", "hypercube", "chain"])
def test_ntp_round_trip_keeps_speeds_and_distances(tmp_path, topology):
    """The thesis's .ntp files (note §8.8): a platform written and read back has the same speeds and
    hop distances, so the thesis model's transfer factors (data × D) are the same."""
    from dlbkit.families.graph.model.costs import write_ntp
    from dlbkit.model.platform import Network, Node, Platform
    p = Platform([Node(f"n{k}", speed=s) for k, s in enumerate([1.0, 2.5, 0.5, 1.0 / 3.0])],
                 Network(latency=0.0, bandwidth=1.0, topology=topology))
    f = tmp_path / f"{topology}.ntp"
    write_ntp(p, f)
    q = platform_from_ntp(f)
    assert list(q.speeds) == list(p.speeds) and q.hops.tolist() == p.hops.tolist()
    assert costs_for(atmospheric(), q, "thesis").per == costs_for(atmospheric(), p, "thesis").per
