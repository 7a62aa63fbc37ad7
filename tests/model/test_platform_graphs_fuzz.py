"""A platform's own interconnect: ``Platform(nodes, Network(topology=<networkx
graph>))`` took the caller's graph as it came, and ``{kind = "edges", edges = [...]}`` took a
self-loop. The graphs of :func:`sim/test_superstep_topologies_fuzz.own_graph` (random, kary, path, star; relabelled,
a node too many or too few, directed, multi, a self-loop, a stale shape) are given to a platform. The
rule: a ConfigError naming ``network.topology`` in one line, or a platform whose hop counts are finite
and symmetric, whose neighbour lists are symmetric and self-free, and on which a small divisible loop
(the master-worker engine times every message by hops) and a job stream run to a finite makespan.

The check is :func:`dlbkit.model.topology.given_graph`, the one the superstep engine and the tree
runtime already make on their own graphs. Derandomized; below, one regression test per defect.
"""

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import Network, Node, Platform
from dlbkit.errors import ConfigError
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.divisible.model.workload import Divisible

from support.fuzz import deadline
from support.fuzz_topologies import own_graph
from support.profiles import examples

RUN_S = 10


def _nodes(p: int) -> list[Node]:
    return [Node(f"n{i}", speed=1.0 + (i % 3) / 2) for i in range(p)]


def _platform_graph_runs(p: int, g) -> str:
    try:
        with deadline():
            plat = Platform(_nodes(p), Network(latency=1e-3, bandwidth=1e6, topology=g))
    except ConfigError as e:
        assert e.field == "network.topology" and "\n" not in str(e), str(e)
        event(f"refused: {e.allowed[:30]}")
        return "refused"
    hops = plat.hops
    assert hops.shape == (p, p) and np.isfinite(hops).all() and (hops == hops.T).all()
    assert (np.diag(hops) == 0).all() and (hops[~np.eye(p, dtype=bool)] >= 1).all()
    nb = [list(x) for x in plat.neighbours()]
    assert all(u not in nb[u] for u in range(p)), nb
    assert all(u in nb[v] for u in range(p) for v in nb[u]), nb
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", RuntimeWarning)
        with deadline(RUN_S):
            if p > 1:
                r = dlbkit.simulate(plat, Divisible(30), "gss", master=0, seed=1)
                assert math.isfinite(r.makespan) and r.makespan > 0
            r = dlbkit.simulate(plat, Stream(rates=1.0, jobs=10), "jsq", seed=1)
            assert math.isfinite(r.makespan) and r.makespan >= 0
    event("ran")
    return "ran"


@settings(max_examples=examples(80), deadline=None, derandomize=True, database=None)
@given(data=st.data(), p=st.integers(1, 6))
def test_a_platform_on_its_own_graph_runs_or_refuses_the_topology(data, p):
    _platform_graph_runs(p, data.draw(own_graph(p)))


@pytest.mark.full
@settings(max_examples=examples(800), deadline=None, derandomize=True, database=None)
@given(data=st.data(), p=st.integers(1, 9))
def test_a_platform_on_its_own_graph_runs_or_refuses_the_topology_long(data, p):
    _platform_graph_runs(p, data.draw(own_graph(p)))


# --- regressions --------------------------------------------------------------------------------------
@pytest.mark.parametrize("g, shown, allowed", [
    (nx.path_graph(["a", "b", "c"]), "a graph on nodes ['a', 'b', 'c']", "the nodes 0..2 (one per node)"),  # IndexError
    (nx.path_graph([1, 2, 3]), "a graph on nodes [1, 2, 3]", "the nodes 0..2 (one per node)"),  # IndexError in hops
    (nx.Graph([(0, 1), (2, 2)]), "a graph that is not connected", "a connected graph"),  # node 2 never reached
    (nx.path_graph(4), "a graph on nodes [0, 1, 2, 3]", "the nodes 0..2 (one per node)"),  # a node too many
])
def test_a_platform_graph_the_engines_cannot_index_or_route_is_one_config_error(g, shown, allowed):
    """A graph on other labels than 0..n-1 was accepted and failed at the first hop count (IndexError);
    a disconnected one was accepted with nodes no message reaches. Now each is a ConfigError naming
    network.topology, the check the superstep engine and the tree runtime make."""
    with pytest.raises(ConfigError) as e:
        Platform(_nodes(3), Network(topology=g))
    assert e.value.field == "network.topology" and e.value.value == shown and allowed in e.value.allowed


@pytest.mark.parametrize("g", [nx.DiGraph([(0, 1), (1, 2)]),                # hops 1->0 read 0, 2->0 read 0
                               nx.MultiGraph([(0, 1), (0, 1), (1, 2)]),     # hops 0->2 read 1, 3 links
                               nx.Graph([(0, 0), (0, 1), (1, 2)])])         # 3 links, 0 its own neighbour
def test_a_directed_multi_or_self_looped_platform_graph_is_the_plain_chain_it_describes(g):
    """A DiGraph's hop counts were read from its out-links (unreachable pairs counted 0 hops: free
    messages), a MultiGraph's from its adjacency counts (0 to 2 in one hop), and a self-loop was
    counted as a link. Now each is the chain 0-1-2: links both ways, parallel links as one, no
    self-loop."""
    plat = Platform(_nodes(3), Network(topology=g))
    chain = Platform(_nodes(3), Network(topology=nx.path_graph(3)))
    assert plat.hops.tolist() == [[0, 1, 2], [1, 0, 1], [2, 1, 0]] == chain.hops.tolist()
    assert plat.n_links == 2 and [list(x) for x in plat.neighbours()] == [[1], [0, 2], [1]]
    r = dlbkit.simulate(plat, Divisible(30), "gss", master=0, seed=1)
    assert r.makespan == dlbkit.simulate(chain, Divisible(30), "gss", master=0, seed=1).makespan


@pytest.mark.parametrize("edges, i", [([[0, 1], [1, 2], [0, 0]], 2), ([[1, 1], [0, 1], [1, 2]], 0)])
def test_a_self_loop_in_platform_edges_is_refused_naming_the_entry(edges, i):
    """``edges = [[0, 0], ...]`` loaded: node 0 became its own neighbour and a link was counted twice."""
    nodes = [{"name": x, "speed": 1.0} for x in "abc"]
    with pytest.raises(ConfigError) as e:
        Platform.from_dict({"nodes": nodes, "network": {"topology": {"kind": "edges", "edges": edges}}})
    assert e.value.field == f"network.topology.edges[{i}]" and e.value.value == edges[i]
    assert "no self-loop" in e.value.allowed
