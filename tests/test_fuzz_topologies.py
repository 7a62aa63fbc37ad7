"""Fuzzing the superstep (BSP) engine's own interconnects (issue 11, continued): the caller's
``networkx`` graph as ``simulate_superstep(topology=)``, which the other superstep fuzzer
(:mod:`test_fuzz_entries`, named topologies only) does not reach. Random graphs on p processors
(none to every edge, disconnected ones too), then mutated the ways a caller's graph goes wrong: nodes
relabelled (1..p, strings, shuffled), a node too many or too few, a ``DiGraph`` or ``MultiGraph``, a
self-loop, a ``dims``/``wrap`` shape that does or does not describe the graph (what
:func:`dlbkit.model.topology.kary_ncube` records), and a torus or hypercube rebuilt by hand. The
rule of the other fuzzers: a ConfigError naming ``topology`` in one line, or a run that executes
every task once with a finite total, the same on a second run with the same seed; never another
exception (numpy's RuntimeWarnings are errors here) or a hang.

Derandomized; the default run takes a few seconds, the long version is marked slow. Below, one
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
from dlbkit.sim.superstep import simulate_superstep, topology_graph
from test_fuzz_entries import MIGRATION, _superstep_runs, superstep_case


@st.composite
def own_graph(draw, p: int) -> nx.Graph:
    """A graph a caller might pass for *p* processors, mutated one way or not at all."""
    base = draw(st.sampled_from(["random", "random", "empty", "kary", "path", "star"]))
    if base == "random":
        pairs = [(a, b) for a in range(p) for b in range(a + 1, p)]
        g = nx.empty_graph(p)
        g.add_edges_from(draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else [])
    elif base == "empty":
        g = nx.empty_graph(p)
    elif base == "kary":
        dims = (p,) if p < 4 or p % 2 else (2, p // 2)
        g = kary_ncube(dims, wrap=draw(st.booleans()))
    elif base == "path":
        g = nx.path_graph(p)
    else:
        g = nx.star_graph(p - 1)
    how = draw(st.sampled_from(["as is", "as is", "as is", "relabel+1", "strings", "shuffled", "extra node",
                                "missing node", "directed", "multi", "self-loop", "dims", "dims stale", "dims junk",
                                "plain copy"]))
    event(how)
    if how == "relabel+1":
        g = nx.relabel_nodes(g, {v: v + 1 for v in g})
    elif how == "strings":
        g = nx.relabel_nodes(g, {v: str(v) for v in g})
    elif how == "shuffled":  # still the nodes 0..p-1: a valid graph
        perm = draw(st.permutations(list(range(p))))
        g = nx.relabel_nodes(g, dict(zip(range(p), perm)))
    elif how == "extra node":
        g.add_node(p)
    elif how == "missing node" and p > 1:
        g.remove_node(p - 1)
    elif how == "directed":
        g = nx.DiGraph(g)
    elif how == "multi":
        g = nx.MultiGraph(g)
        if g.number_of_edges():
            g.add_edge(*next(iter(g.edges())))
    elif how == "self-loop":
        g.add_edge(0, 0)
    elif how == "dims":
        g.graph["dims"] = draw(st.sampled_from([(p,), (1, p), (p, 1)]))
        g.graph["wrap"] = draw(st.booleans())
    elif how == "dims stale":
        g.graph["dims"] = draw(st.sampled_from([(p + 3,), (2, p), (7, 7), (0,), ()]))
    elif how == "dims junk":
        g.graph["dims"] = draw(st.sampled_from([("a",), (1.5,), (-1, -p), (2**62, 2**62), None]))
    elif how == "plain copy":  # a torus with its shape dropped: coloured greedily
        g = nx.Graph(list(g.edges()))
        g.add_nodes_from(range(p))
    return g


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


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(data=st.data(), case=superstep_case())
def test_superstep_on_its_own_graph_runs_or_refuses_the_topology(data, case):
    _own_topology_runs(case, data.draw(own_graph(case[3])))


@pytest.mark.slow
@settings(max_examples=2000, deadline=None, derandomize=True, database=None)
@given(data=st.data(), case=superstep_case())
def test_superstep_on_its_own_graph_runs_or_refuses_the_topology_long(data, case):
    _own_topology_runs(case, data.draw(own_graph(case[3])))


# --- regressions --------------------------------------------------------------------------------------
@pytest.mark.parametrize("g, shown", [
    (nx.relabel_nodes(nx.cycle_graph(4), {i: i + 1 for i in range(4)}), "the nodes 4"),  # NetworkXError: node 0
    (nx.relabel_nodes(nx.cycle_graph(4), str), "the nodes '0', '1', '2'"),                # NetworkXError: node 0
    (nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 3)]), "a MultiGraph"),                    # gdem: ValueError unpack
    (nx.DiGraph([(0, 1), (1, 2), (2, 3)]), "a DiGraph"),                     # ran on successors only
    (nx.Graph([(0, 0), (0, 1), (1, 2), (2, 3)]), "a self-loop at 0"),         # 0 its own neighbour
])
@pytest.mark.parametrize("balancer", ["gdem", "rid", None])
def test_an_own_graph_the_engine_cannot_index_is_one_config_error(g, shown, balancer):
    """A graph on nodes other than 0..p-1 was a NetworkXError traceback ("The node 0 is not in the
    graph"), a MultiGraph a ValueError in gdem's colouring, a DiGraph ran on out-neighbours only and
    a self-loop made a processor its own neighbour; now each is a ConfigError naming topology."""
    with pytest.raises(ConfigError) as e:
        simulate_superstep(FlatTasks([1.0] * 10), balancer, p=4, topology=g)
    assert e.value.field == "topology" and shown in str(e.value)
    assert "an undirected nx.Graph without self-loops on the nodes 0..3" in str(e.value)


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


@pytest.mark.parametrize("balancer", MIGRATION + [None])
def test_a_disconnected_own_graph_runs_every_task_once(balancer):
    """Not refused (a valid, if poor, interconnect): every task runs once. Processors 2 and 3 are
    unreachable from 0, where the tasks start, so a balancer that moves work to neighbours leaves
    them idle; the centralised greedy and refine, and ldsv's load server (on processor 3, computing
    nothing), assign work to any processor and reach processor 2."""
    r = simulate_superstep(FlatTasks([1.0] * 12), balancer, p=4, topology=nx.Graph([(0, 1), (2, 3)]))
    assert r.nodes == 12 and int(r.executed.sum()) == 12 and math.isfinite(r.total)
    if balancer not in ("greedy", "refine", "ldsv"):
        assert r.executed[2] == 0 and r.executed[3] == 0
