"""Platform model: construction, TOML loading, validation, topology distances."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, Network, Node, Platform
from dlbkit.model.topology import build, hop_matrix

from support.profiles import examples

GOOD = """
name = "lab"
[network]
latency = 0.001
bandwidth = 1.25e6
topology = "ring"
[[nodes]]
name = "fast"
speed = 4.0
cores = 2
memory = 2.56e8
[[nodes]]
name = "slow"
speed = 1.0
count = 2
availability = {kind = "pulse", start = 1.0, duration = 2.0, level = 0.5}
"""


def test_load_toml(tmp_path):
    f = tmp_path / "p.toml"
    f.write_text(GOOD)
    p = Platform.from_toml(f)
    assert [n.name for n in p.nodes] == ["fast", "slow0", "slow1"]
    assert p.total_speed == 10.0
    assert p.worker_nodes() == [0, 0, 1, 2]
    assert p.worker_nodes(exclude=0) == [1, 2]
    # ring of 3: every pair one hop; 1000 bytes at 1.25 MB/s = 0.8 ms
    assert p.message_time(0, 2, 1000) == pytest.approx(0.001 + 0.0008)
    assert p.message_time(1, 1, 1e9) == 0.0


@pytest.mark.parametrize("patch, field", [
    (("speed = 4.0", "speed = -1.0"), "nodes[0].speed"),
    (("bandwidth = 1.25e6", "bandwidth = 0"), "network.bandwidth"),
    (("level = 0.5", "level = 1.5"), "nodes[1].availability.level"),
    (("speed = 1.0\n", ""), "nodes[1].speed"),
    (('topology = "ring"', 'topology = "moebius"'), "network.topology.kind"),
    (("cores = 2", "cores = 0"), "nodes[0].cores"),
    (("memory = 2.56e8", "memory = -1"), "nodes[0].memory"),
])
def test_bad_platform_names_the_field(tmp_path, patch, field):
    f = tmp_path / "p.toml"
    f.write_text(GOOD.replace(*patch))
    with pytest.raises(ConfigError) as e:
        Platform.from_toml(f)
    assert e.value.field == field, str(e.value)


def test_no_nodes_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="at least one node"):
        Platform.from_dict({"nodes": []})
    with pytest.raises(ConfigError, match="at least one node"):
        Platform([])
    f = tmp_path / "bad.toml"
    f.write_text("[[nodes]\nspeed = 1")
    with pytest.raises(ConfigError, match="TOML syntax"):
        Platform.from_toml(f)
    with pytest.raises(ConfigError, match="existing TOML file"):
        Platform.from_toml(tmp_path / "none.toml")


@pytest.mark.parametrize("kind, n, edges, diameter", [
    ("complete", 6, 15, 1), ("chain", 6, 5, 5), ("ring", 6, 6, 3), ("star", 6, 5, 2),
    ("mesh", 12, 17, 5), ("torus", 16, 32, 4), ("hypercube", 16, 32, 4),
])
def test_topologies(kind, n, edges, diameter):
    g = build(kind, n)
    assert g.number_of_nodes() == n and g.number_of_edges() == edges
    assert hop_matrix(g).max() == diameter


def test_topology_errors():
    with pytest.raises(ConfigError, match="power-of-two"):
        build("hypercube", 6)
    with pytest.raises(ConfigError, match="a ring of 2"):
        build("ring", 2)
    with pytest.raises(ConfigError, match="connected"):
        build("edges", 3, edges=[[0, 1]])
    with pytest.raises(ConfigError, match="sides >= 2"):
        build("torus", 3)


def test_hypercube_neighbours_differ_in_one_bit():
    g = build("hypercube", 8)
    assert all(bin(a ^ b).count("1") == 1 for a, b in g.edges)


def test_node_validation_from_python():
    with pytest.raises(ConfigError, match="speed"):
        Node("x", speed=0.0)
    with pytest.raises(ConfigError, match="network.latency"):
        Network(latency=-1.0)
    with pytest.raises(ConfigError, match="unique"):
        Platform([Node("a"), Node("a")])


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 30), st.floats(0.0, 1.0), st.integers(0, 10**6))
def test_hop_matrix_is_networkx_all_pairs_hop_count(n, p, seed):
    """scipy's search gives networkx's hop counts, 0 where no path joins two nodes."""
    import networkx as nx

    g = nx.gnp_random_graph(n, p, seed=seed)
    want = np.zeros((n, n), dtype=np.int64)
    for src, lengths in nx.all_pairs_shortest_path_length(g):
        for dst, d in lengths.items():
            want[src, dst] = d
    got = hop_matrix(g)
    assert got.dtype == np.int64 and np.array_equal(got, want)


def test_hop_matrix_counts_links_whatever_their_weight_attribute():
    # hops are links crossed: a "weight" on an edge (a string, 0, negative) is not read, as
    # networkx's breadth-first search did not read it
    g = nx.path_graph(4)
    g[0][1]["weight"], g[1][2]["weight"], g[2][3]["weight"] = "slow", 0, -2.5
    assert hop_matrix(g).tolist() == [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]
