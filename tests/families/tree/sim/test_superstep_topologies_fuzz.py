"""Fuzzing the superstep (BSP) engine's own interconnects: the caller's
``networkx`` graph as ``simulate_superstep(topology=)``, which the other superstep fuzzer
(:mod:`test_entry_points_fuzz`, named topologies only) does not reach. Random graphs on p processors
(none to every edge, disconnected ones too), then mutated the ways a caller's graph goes wrong: nodes
relabelled (1..p, strings, shuffled), a node too many or too few, a ``DiGraph`` or ``MultiGraph``, a
self-loop, a ``dims``/``wrap`` shape that does or does not describe the graph (what
:func:`dlbkit.model.topology.kary_ncube` records), and a torus or hypercube rebuilt by hand. The
rule of the other fuzzers: a ConfigError naming ``topology`` in one line, or a run that executes
every task once with a finite total, the same on a second run with the same seed; never another
exception (numpy's RuntimeWarnings are errors here) or a hang.

Derandomized; the default run takes a few seconds, the full tier runs it at its full count. Below, one
regression test per defect the fuzzing found.
"""

import math

import networkx as nx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dlbkit import FlatTasks
from dlbkit.errors import ConfigError
from dlbkit.model.topology import edge_colouring, kary_ncube
from dlbkit.families.tree.sim.superstep import simulate_superstep, topology_graph

from support.fuzz_entries import _superstep_runs, superstep_case
from support.fuzz_topologies import own_graph
from support.profiles import examples


def _own_topology_runs(case, g):
    w, expected, balancer, p, _topo, interval, seed = case
    try:
        _superstep_runs((w, expected, balancer, p, g, interval, seed))
    except ConfigError as e:
        event(f"refused {e.field}")
        assert e.field == "topology" and "\n" not in str(e), str(e)
        return
    colours = edge_colouring(topology_graph(g, p))
    for pairs in colours:  # a proper colouring of existing edges: each processor once per colour
        ends = [v for pair in pairs for v in pair]
        assert len(ends) == len(set(ends)) and all(g.has_edge(a, b) for a, b in pairs), (pairs, list(g.edges))
    event("ran")


@settings(max_examples=examples(2000), deadline=None, derandomize=True, database=None)
@given(data=st.data(), case=superstep_case())
def test_superstep_on_its_own_graph_runs_or_refuses_the_topology(data, case):
    _own_topology_runs(case, data.draw(own_graph(case[3])))


# --- regressions --------------------------------------------------------------------------------------
@pytest.mark.parametrize("g, shown, allowed", [
    (nx.relabel_nodes(nx.cycle_graph(4), {i: i + 1 for i in range(4)}), "a graph on nodes [1, 2, 3, 4]",
     "a graph on exactly the nodes 0..3 (one per processor)"),                   # NetworkXError: node 0
    (nx.relabel_nodes(nx.cycle_graph(4), str), "a graph on nodes ['0', '1', '2', '3']",
     "a graph on exactly the nodes 0..3 (one per processor)"),                   # NetworkXError: node 0
    (nx.Graph([(0, 1), (2, 3)]), "a graph that is not connected", "a connected graph"),  # 2, 3 never reached
])
@pytest.mark.parametrize("balancer", ["gdem", "rid", None])
def test_an_own_graph_the_engine_cannot_index_is_one_config_error(g, shown, allowed, balancer):
    """A graph on nodes other than 0..p-1 was a NetworkXError traceback ("The node 0 is not in the
    graph"); a disconnected one ran with processors work could never reach. Now each is a ConfigError
    naming topology, as the real tree runtime's check (``dlbkit.tree(topology=)``), which is now the
    same function (:func:`dlbkit.model.topology.given_graph`)."""
    with pytest.raises(ConfigError) as e:
        simulate_superstep(FlatTasks([1.0] * 10), balancer, p=4, topology=g)
    assert e.value.field == "topology" and e.value.value == shown and allowed in e.value.allowed


@pytest.mark.parametrize("g", [nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 3)]),  # gdem: ValueError (unpack)
                               nx.DiGraph([(0, 1), (1, 2), (2, 3)]),              # ran on out-links only
                               nx.Graph([(0, 0), (0, 1), (1, 2), (2, 3)])])       # 0 its own neighbour
@pytest.mark.parametrize("balancer", ["gdem", "rid", "steal", None])
def test_an_own_multigraph_digraph_or_self_loop_runs_as_the_plain_chain(g, balancer):
    """A MultiGraph failed in gdem's colouring (ValueError: too many values to unpack), a DiGraph ran
    on its out-links only and a self-loop made processor 0 its own neighbour. Now each runs as the
    chain 0-1-2-3 it describes (links both ways, parallel links as one, no self-loop), as the real
    tree runtime reads such graphs."""
    kw = dict(p=4, seed=2)
    r = simulate_superstep(FlatTasks([1.0] * 20), balancer, topology=g, **kw)
    chain = simulate_superstep(FlatTasks([1.0] * 20), balancer, topology=nx.path_graph(4), **kw)
    assert r.total == chain.total and (r.executed == chain.executed).all() and r.nodes == 20


def test_a_shape_that_does_not_describe_the_graph_is_not_used_for_the_colouring():
    """A caller's path graph carrying ``dims = (7,)`` (a stale kary_ncube shape) was coloured by that
    shape: IndexError in gdem. Now the shape is used only when it is the graph's; otherwise the
    graph is coloured greedily, and a kary_ncube passed as a graph runs as the named topology does."""
    g = nx.path_graph(4)
    g.graph["dims"] = (7,)
    r = simulate_superstep(FlatTasks([1.0] * 10), "gdem", p=4, topology=g)
    assert r.nodes == 10 and math.isfinite(r.total)
    colours = edge_colouring(topology_graph(g, 4))
    assert sorted(pair for c in colours for pair in c) == [(0, 1), (1, 2), (2, 3)] and len(colours) == 2
    torus = simulate_superstep(FlatTasks([1.0] * 40), "gdem", p=8, topology="torus", seed=3)
    own = simulate_superstep(FlatTasks([1.0] * 40), "gdem", p=8, topology=kary_ncube((4, 2)), seed=3)
    assert own.total == torus.total and (own.executed == torus.executed).all()


def test_a_relabelled_torus_is_not_coloured_by_its_old_shape():
    """``nx.relabel_nodes`` keeps the graph's ``dims``: a torus with its nodes permuted was coloured by
    the shape of the unpermuted one, so gdem exchanged between processors that are not linked. Now
    every colour class is a matching of the graph's own links."""
    perm = {v: (3 * v) % 8 for v in range(8)}
    g = nx.relabel_nodes(kary_ncube((4, 2)), perm)
    assert g.graph["dims"] == (4, 2)
    for pairs in edge_colouring(topology_graph(g, 8)):
        ends = [v for pair in pairs for v in pair]
        assert len(ends) == len(set(ends)) and all(g.has_edge(a, b) for a, b in pairs)


def test_a_valid_own_graph_keeps_the_colouring_and_numbers_it_had_before_the_check():
    """given_graph rebuilt a caller's simple graph on the nodes 0..p-1 in order, and the greedy
    colouring follows node and edge order: a valid, connected graph whose nodes were added in
    another order got another colouring, so gdem's numbers changed (0.0517991 → 0.0456537 below).
    A simple graph is coloured in its own order again; 0.05179907294390189 is what dlbkit gave at
    18907b7, before the check."""
    g = nx.Graph()
    g.add_nodes_from([4, 1, 5, 2, 0, 3, 6])
    g.add_edges_from([(4, 3), (4, 5), (4, 0), (4, 2), (4, 6), (1, 0), (1, 3), (1, 2), (1, 5), (5, 6), (5, 3),
                      (5, 0), (2, 6), (0, 6)])
    assert edge_colouring(topology_graph(g, 7)) == edge_colouring(g)
    costs = [float(1 + (i * 7919) % 13) for i in range(300)]
    r = simulate_superstep(FlatTasks(costs), "gdem", p=7, topology=g, seed=0)
    assert r.total == pytest.approx(0.05179907294390189, rel=1e-12, abs=0)
