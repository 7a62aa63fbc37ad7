"""Graphs a caller might pass as an interconnect, mutated one way or not at all.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import networkx as nx
from hypothesis import event
from hypothesis import strategies as st

from dlbkit.model.topology import kary_ncube


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
