"""A complete topology is never built edge by edge: what engines read of it is computed, and a large
complete platform's neighbour lists are :class:`Others`, equal to the lists they replace."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dlbkit.model.topology as topology
from dlbkit import ConfigError, Divisible, Network, Node, Platform, simulate
from dlbkit.info.base import MAX_NODES as MAX_INFO_NODES
from dlbkit.families.graph.model.costs import MAX_PROCESSORS, MAX_ROUTED, costs_for
from dlbkit.families.graph.model.generate import layered
from dlbkit.families.spmd.model.workload import Spmd
from dlbkit.families.stream.model.workload import Stream
from dlbkit.model.topology import Others, complete_neighbours, neighbour_lists
from dlbkit.families.tree.model.workload import FlatTasks


def nodes(n):
    return [Node(f"n{i}", speed=1.0 + i % 3) for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_a_complete_platform_answers_as_its_built_graph_does(n):
    lazy = Platform(nodes(n))
    built = Platform(nodes(n), Network(topology=nx.complete_graph(n)))
    assert lazy.complete and built.complete
    assert lazy.n_links == built.n_links == n * (n - 1) // 2
    assert np.array_equal(lazy.hops, built.hops)
    for s in range(n):
        assert np.array_equal(lazy.hops_from(s), built.hops_from(s))
        for d in range(n):
            assert lazy.message_time(s, d, 100.0) == built.message_time(s, d, 100.0)
    assert [list(nb) for nb in lazy.neighbours()] == neighbour_lists(built.graph)
    assert nx.utils.graphs_equal(lazy.graph, built.graph)  # built when read


def test_other_topologies_are_not_complete():
    assert not Platform(nodes(4), Network(topology="ring")).complete
    assert Platform(nodes(3), Network(topology="ring")).complete  # a triangle
    g = nx.complete_graph(3)
    g.remove_edge(1, 2)
    g.add_edge(0, 0)  # a self-loop is no link between nodes
    assert g.number_of_edges() == 3 and not Platform(nodes(3), Network(topology=g)).complete


def test_no_engine_builds_the_complete_graph(monkeypatch):
    # what engines need of a complete platform comes from `complete`: building its graph (8 M edges,
    # a GB, at 4 096 nodes) fails this test
    def refuse(n, *a, **k):
        raise AssertionError(f"complete_graph({n}) built")
    monkeypatch.setattr(nx, "complete_graph", refuse)
    p = Platform(nodes(5))
    assert p.complete and p.n_links == 10
    for workload, balancer, extra in [(Divisible(500), "fac2", {}), (FlatTasks([1.0] * 40), "steal", {}),
                                      (FlatTasks([1.0] * 40), "steal", {"info": "gossip"}),
                                      (Stream(rates=2.0, jobs=200), "power-of-d", {}),
                                      (Stream(rates=2.0, jobs=200), "power-of-d", {"info": "gossip"}),
                                      (Spmd(points=500, loops=3), None, {})]:
        assert simulate(p, workload, balancer, seed=1, **extra).metrics["makespan"] > 0
    assert costs_for(layered(30, seed=1), p).n_nodes == 5


@pytest.mark.full  # scale: large complete platforms
def test_a_platform_file_of_many_nodes_has_a_complete_topology_without_its_edges(tmp_path):
    f = tmp_path / "big.toml"
    f.write_text('[[nodes]]\nname = "w"\nspeed = 1.0\ncount = 100000\n')
    p = Platform.from_toml(f)
    assert p.n_nodes == 100_000 and p.complete and p.n_links == 4_999_950_000
    assert p.hops_from(7).sum() == 99_999 and p.message_time(3, 99_999, 0.0) == pytest.approx(1e-4)
    assert len(p.neighbours()[0]) == 99_999 and isinstance(p.neighbours()[0], Others)


@given(st.integers(1, 40), st.data())
def test_others_is_the_list_of_every_other_node(n, data):
    node = data.draw(st.integers(0, n - 1))
    o, ref = Others(node, n), [j for j in range(n) if j != node]
    assert list(o) == ref and len(o) == len(ref) and o == ref and (o == [*ref, n]) is False
    assert bool(o) == bool(ref)
    k = data.draw(st.integers(-len(ref) - 2, len(ref) + 1))
    if -len(ref) <= k < len(ref):
        assert o[k] == ref[k] and type(o[k]) is int and o[np.int64(k)] == ref[k] and type(o[np.int64(k)]) is int
    else:
        with pytest.raises(IndexError):
            o[k]
    a, b = (data.draw(st.integers(-n - 1, n + 1) | st.none()) for _ in range(2))
    step = data.draw(st.sampled_from([None, 1, 2, -1, -3]))
    assert o[a:b:step] == ref[a:b:step]
    v = data.draw(st.integers(-2, n + 1))
    assert (v in o) == (v in ref) and ("x" in o) is False


def test_complete_neighbours_are_lists_up_to_the_limit_and_others_beyond():
    n = topology.LIST_NODES
    assert all(type(nb) is list for nb in complete_neighbours(n))
    big = complete_neighbours(n + 1)
    assert all(isinstance(nb, Others) for nb in big) and big[5] == [j for j in range(n + 1) if j != 5]


@pytest.mark.full  # scale: large complete platforms
def test_others_give_the_same_runs_as_lists(monkeypatch):
    # the same platform with its neighbours as Others (limit lowered) runs the same stealing and
    # the same gossip: victims and peers are drawn by index, and the indices name the same nodes
    p = Platform(nodes(7))
    runs = {}
    for limit in (topology.LIST_NODES, 2):
        monkeypatch.setattr(topology, "LIST_NODES", limit)
        assert isinstance(complete_neighbours(7)[0], Others) == (limit == 2)
        runs[limit] = [simulate(p, FlatTasks([1.0 + i % 5 for i in range(300)]), b, seed=3, **kw)
                       for b, kw in [("steal", {}), ("steal", {"info": "neighbour"}), ("rid", {})]]
    for a, b in zip(runs[2], runs[topology.LIST_NODES]):
        assert a.metrics == b.metrics and a.trace.events == b.trace.events
        for table in ("intervals", "transfer_table"):
            x, y = getattr(a.trace, table)(), getattr(b.trace, table)()
            assert x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x)


def test_sizes_an_engine_cannot_hold_are_refused_by_name():
    p = Platform(nodes(MAX_INFO_NODES + 1))
    with pytest.raises(ConfigError, match=r"info must be 'exact' \(the default\) on 8,193 nodes .* at most 8,192"):
        simulate(p, FlatTasks([1.0] * 10), "steal", info="gossip")
    with pytest.raises(ConfigError, match="at most 8,192 workers for a task graph"):
        costs_for(layered(10, seed=1), Platform(nodes(MAX_PROCESSORS + 1)))
    with pytest.raises(ConfigError, match=r"nodes must be an integer in \[1, 8,192\]"):
        costs_for(layered(10, seed=1), MAX_PROCESSORS + 1)
    with pytest.raises(ConfigError, match="at most 1,024 machines"):
        costs_for(layered(10, seed=1), Platform(nodes(MAX_ROUTED + 1)), contention="link")
