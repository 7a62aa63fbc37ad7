"""Interconnection topologies as networkx graphs over nodes 0..n-1.

networkx is imported by the functions that build or search a graph, not with this module: a complete
platform (the default topology) never builds its graph, and networkx takes longer to import than the
whole model.
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Sequence as _SequenceABC
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["KINDS", "build", "hop_matrix", "topology_from_dict", "parse", "dims_create", "kary_ncube",
           "neighbour_lists", "edge_colouring", "given_graph", "diameter", "is_complete", "Others", "complete_neighbours",
           "LIST_NODES", "is_networkx"]

KINDS = ("complete", "chain", "ring", "mesh", "torus", "hypercube", "star", "edges")


def is_networkx(obj: Any, cls: str = "Graph") -> bool:
    """Whether *obj* is a networkx ``Graph`` (or the networkx class named *cls*, e.g. ``DiGraph``),
    without importing networkx: an object can only be one once networkx has been imported."""
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(obj, getattr(nx, cls))


def _grid_shape(n: int, rows: int | None, field: str, min_side: int) -> tuple[int, int]:
    if rows is None:
        rows = int(math.isqrt(n))
        while n % rows:
            rows -= 1
    if rows < 1 or n % rows:
        raise ConfigError(f"{field}.rows", rows, f"a divisor of the node count {n}")
    cols = n // rows
    if min(rows, cols) < min_side:
        raise ConfigError(f"{field}.rows", rows, f"a choice giving sides >= {min_side} (got {rows} x {cols})")
    return rows, cols


def build(kind: str, n: int, *, rows: int | None = None, edges=None, field: str = "topology") -> nx.Graph:
    """A connected graph of *kind* on nodes 0..n-1 (mesh/torus nodes numbered row-major)."""
    import networkx as nx

    check.choice(kind, f"{field}.kind", KINDS)
    if n < 1:
        raise ConfigError("nodes", n, "at least one node")
    if kind == "complete":
        g = nx.complete_graph(n)
    elif kind == "chain":
        g = kary_ncube((n,), wrap=False)
    elif kind == "ring":
        if n < 3:
            raise ConfigError(f"{field}.kind", kind, f"used with at least 3 nodes (a ring of {n} is not a ring)")
        g = kary_ncube((n,), wrap=True)
    elif kind == "star":
        g = nx.star_graph(n - 1)
    elif kind in ("mesh", "torus"):
        r, c = _grid_shape(n, rows, field, 2 if kind == "torus" else 1)
        g = kary_ncube((c, r), wrap=(kind == "torus"))
    elif kind == "hypercube":
        d = n.bit_length() - 1
        if n != 1 << d:
            raise ConfigError(f"{field}.kind", kind, f"used with a power-of-two node count (got {n})")
        g = kary_ncube((2,) * d if d else (1,), wrap=True)  # a 0-cube: one node
    else:
        if edges is None:
            raise ConfigError(f"{field}.edges", None, "a list of [a, b] node-index pairs")
        if not isinstance(edges, (list, tuple)):
            raise ConfigError(f"{field}.edges", edges, "a list of [a, b] node-index pairs")
        g = nx.empty_graph(n)
        for i, e in enumerate(edges):
            # a pair is a list of two ints (not bools); a number or a table here has no length
            if not isinstance(e, (list, tuple)) or len(e) != 2 or not all(
                    isinstance(x, int) and not isinstance(x, bool) and 0 <= x < n for x in e):
                raise ConfigError(f"{field}.edges[{i}]", e, f"a pair of node indices in [0, {n - 1}]")
            if e[0] == e[1]:  # a node is not its own neighbour: a self-loop made it a neighbour balancer's partner
                raise ConfigError(f"{field}.edges[{i}]", e, "a pair of two different node indices (no self-loop)")
            g.add_edge(*e)
    if not nx.is_connected(g):
        raise ConfigError(f"{field}.edges", edges, "edges forming a connected graph")
    return g


def dims_create(n: int, ndims: int = 2) -> tuple[int, ...]:
    """The most nearly equal factorisation of *n* into *ndims* sides, largest first (as
    ``MPI_Dims_create``: 8 → (4, 2), 128 → (16, 8), 2 → (2, 1))."""
    if n < 1 or ndims < 1:
        raise ConfigError("nodes", n, "at least one node and one dimension")
    if ndims == 1:
        return (n,)
    best = None
    for s in range(1, n + 1):
        if n % s:
            continue
        cand = tuple(sorted((s, *dims_create(n // s, ndims - 1)), reverse=True))
        if best is None or (cand[0] - cand[-1], cand) < (best[0] - best[-1], best):
            best = cand
    return best


def kary_ncube(dims: Sequence[int], *, wrap: bool = True) -> nx.Graph:
    """A k-ary n-cube (wrap) or n-dimensional mesh (no wrap) with sides *dims*.

    Node ids follow the MPI Cartesian convention with the first dimension fastest
    (``id = x0 + dims[0]·x1 + …``; 001 §3.1: ``id = xi + x·yj``). Sides of 1 add no edges; a wrapped
    side of 2 has one edge, not two. ``g.graph["dims"]`` and ``g.graph["wrap"]`` keep the shape so
    that :func:`edge_colouring` can colour it by dimension.
    """
    import networkx as nx

    dims = tuple(int(d) for d in dims)
    if not dims or min(dims) < 1:
        raise ConfigError("topology.dims", dims, "one or more sides, each at least 1")
    n = math.prod(dims)
    g = nx.empty_graph(n)
    for a, b in _dimension_edges(dims, wrap):
        g.add_edge(a, b)
    g.graph["dims"] = dims
    g.graph["wrap"] = wrap
    return g


def _strides(dims: tuple[int, ...]) -> list[int]:
    out, s = [], 1
    for d in dims:
        out.append(s)
        s *= d
    return out


def _dimension_colours(dims: tuple[int, ...], wrap: bool) -> list[list[tuple[int, int]]]:
    """Colour classes of a k-ary n-cube, dimension by dimension (001 §3.1, the order that reproduces
    Table 4.7): per dimension of length L, colour A = edges (a, a+1) for even a, colour B = odd a
    plus the wrap edge (L-1, 0); an odd wrapped L needs a third colour for its wrap edge."""
    n = math.prod(dims)
    strides = _strides(dims)
    colours = []
    for k, L in enumerate(dims):
        if L == 1:
            continue
        st = strides[k]
        others = [v for v in range(n) if (v // st) % L == 0]  # the line starts of dimension k
        cls: dict[int, list[tuple[int, int]]] = {0: [], 1: [], 2: []}
        for o in others:
            for a in range(L):
                b = a + 1
                if b == L:
                    if not wrap or L <= 2:
                        continue
                    b = 0
                c = a % 2 if not (b == 0 and L % 2) else 2
                cls[c].append((o + a * st, o + b * st))
        colours += [cls[c] for c in (0, 1, 2) if cls[c]]
    return colours


def _dimension_edges(dims, wrap):
    return [e for c in _dimension_colours(dims, wrap) for e in c]


def given_graph(g: nx.Graph, n: int, field: str = "topology", *, per: str = "worker") -> nx.Graph:
    """A caller's own interconnect *g* of *n* nodes (one per *per*) as a plain undirected graph on the
    nodes 0..n-1: a ``DiGraph``'s links taken both ways, a ``MultiGraph``'s parallel links as one,
    self-loops dropped (a node is not its own neighbour). Raise :class:`ConfigError` naming *field*
    for other nodes (the engines index them by number) or, from 2 nodes, a graph that is not
    connected (work must reach every node). The graph's attributes (a ``dims`` shape) are not kept."""
    import networkx as nx

    try:
        nodes = sorted(g.nodes)
    except TypeError:  # labels of mixed types
        nodes = list(g.nodes)
    if nodes != list(range(n)):
        shown = repr(nodes) if len(nodes) <= 8 else f"[{nodes[0]!r}, ..., {nodes[-1]!r}] ({len(nodes)} nodes)"
        raise ConfigError(field, f"a graph on nodes {shown}", f"a graph on exactly the nodes 0..{n - 1} (one per {per})")
    plain = nx.Graph()
    plain.add_nodes_from(range(n))
    plain.add_edges_from((int(a), int(b)) for a, b in g.edges() if a != b)
    if n > 1 and not nx.is_connected(plain):
        raise ConfigError(field, "a graph that is not connected", f"a connected graph (work must reach every {per})")
    return plain


def neighbour_lists(g: nx.Graph) -> list[list[int]]:
    """Each node's neighbours, sorted (what a neighbourhood balancer may talk to)."""
    return [sorted(int(v) for v in g.neighbors(u)) for u in range(g.number_of_nodes())]


def edge_colouring(g: nx.Graph) -> list[list[tuple[int, int]]]:
    """A proper edge colouring: colour classes of disjoint node pairs, for dimension exchange (GDEM).

    k-ary n-cubes built here (chain, ring, mesh, torus, hypercube) are coloured by dimension with the
    minimum number of colours for even sides (a hypercube: one colour per dimension; a 2-D torus: 4);
    any other graph greedily on its line graph, which needs at most 2Δ − 1 colours (Δ the maximum
    degree; the minimum is Δ or Δ + 1 by Vizing's theorem).
    """
    import networkx as nx

    if "dims" in g.graph:
        return _dimension_colours(tuple(g.graph["dims"]), bool(g.graph.get("wrap")))
    if g.number_of_edges() == 0:
        return []
    n = g.number_of_nodes()
    if g.number_of_edges() == n * (n - 1) // 2 and nx.number_of_selfloops(g) == 0:
        return _round_robin(n)
    lg = nx.line_graph(g)
    colour = nx.greedy_color(lg, strategy="largest_first")
    out: dict[int, list[tuple[int, int]]] = {}
    for (a, b), c in sorted(colour.items(), key=lambda kv: (kv[1], min(kv[0]), max(kv[0]))):
        out.setdefault(c, []).append((min(a, b), max(a, b)))
    return [out[c] for c in sorted(out)]


def _round_robin(n: int) -> list[list[tuple[int, int]]]:
    """The complete graph's minimum edge colouring by the circle method: n − 1 rounds of n/2 pairs
    (n even; an odd n gets a bye node, so n rounds), in O(n²) instead of the line graph's O(n³)."""
    m = n + (n % 2)  # with a bye node m − 1 when n is odd
    fixed, ring = m - 1, m - 1
    out = []
    for r in range(m - 1):
        pairs = [(min(r, fixed), max(r, fixed))] if fixed < n else []
        for k in range(1, m // 2):
            a, b = (r + k) % ring, (r - k) % ring
            pairs.append((min(a, b), max(a, b)))
        out.append(pairs)
    return out


def diameter(g: nx.Graph) -> int:
    """The longest shortest path in hops (0 for a single node)."""
    import networkx as nx

    return int(nx.diameter(g)) if g.number_of_nodes() > 1 else 0


def hop_matrix(g: nx.Graph) -> np.ndarray:
    """Shortest-path hop counts between every pair of nodes 0 … n−1 (0 between nodes no path joins).
    A breadth-first search from every node in scipy's compiled graph routines: networkx's pure-Python
    all-pairs search took 5 s for a 2 000-node ring, this about 0.1 s; the counts are the same."""
    import networkx as nx
    from scipy.sparse.csgraph import shortest_path

    n = g.number_of_nodes()
    adjacency = nx.to_scipy_sparse_array(g, nodelist=range(n), weight=None, format="csr")  # links, not weights
    d = shortest_path(adjacency, unweighted=True, directed=False)
    d[np.isinf(d)] = 0
    return d.astype(np.int64)


def parse(d: Any, field: str = "network.topology") -> tuple[str, int | None, Any]:
    """A topology's (kind, rows, edges) from a kind name or a table with ``kind`` (and ``rows`` for a
    mesh or torus, ``edges`` for a list of pairs), the kind checked; the rest is checked by
    :func:`build`, which needs the node count."""
    if isinstance(d, str):
        kind, rows, edges = d, None, None
    else:
        d = check.table(d, field)
        check.known_keys(d, field, {"kind", "rows", "edges"})
        kind = check.required(d, "kind", field)
        rows = d.get("rows")
        if rows is not None:
            rows = check.integer(rows, f"{field}.rows", lo=1)
        edges = d.get("edges")
    check.choice(kind, f"{field}.kind", KINDS)
    return kind, rows, edges


def topology_from_dict(d: Any, n: int, field: str = "network.topology") -> nx.Graph:
    kind, rows, edges = parse(d, field)
    return build(kind, n, rows=rows, edges=edges, field=field)


def is_complete(g: nx.Graph) -> bool:
    """Whether every pair of distinct nodes of *g* is joined (a single node counts; a self-loop is
    not a link between nodes, so a graph with one is not complete)."""
    import networkx as nx

    n = g.number_of_nodes()
    return g.number_of_edges() == n * (n - 1) // 2 and nx.number_of_selfloops(g) == 0


class Others(_SequenceABC):
    """The neighbours of *node* in the complete graph on *n* nodes: every other node, ascending, as
    a read-only sequence of ints. A large complete platform's neighbour lists are these rather than
    lists, so that they take no n² memory (10⁴ nodes would hold 10⁸ entries); indexing costs a
    comparison (and a Python call: :func:`complete_neighbours` keeps lists for small graphs).

    >>> o = Others(2, 5)
    >>> list(o), len(o), o[2], 2 in o, o == [0, 1, 3, 4]
    ([0, 1, 3, 4], 4, 3, False, True)
    """

    __slots__ = ("node", "n")

    def __init__(self, node: int, n: int):
        self.node, self.n = int(node), int(n)

    def __len__(self) -> int:
        return self.n - 1

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n - 1))]
        k = operator.index(k)  # a numpy integer gives a Python int, as a list would
        if k < 0:
            k += self.n - 1
        if not 0 <= k < self.n - 1:
            raise IndexError(f"index {k} out of range for the {self.n - 1} others of node {self.node}")
        return k if k < self.node else k + 1

    def __iter__(self):
        yield from range(self.node)
        yield from range(self.node + 1, self.n)

    def __contains__(self, v) -> bool:
        try:
            v = operator.index(v)
        except TypeError:
            return False
        return 0 <= v < self.n and v != self.node

    def __eq__(self, other) -> bool:
        if isinstance(other, Others):
            return (self.node, self.n) == (other.node, other.n) or len(self) == len(other) == 0
        if isinstance(other, (list, tuple, range)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # equal to a list, which is unhashable

    def __repr__(self) -> str:
        return f"Others({self.node}, {self.n})"


#: up to this many nodes, a complete graph's neighbours are lists (8 bytes × n², 34 MB at 2 048 nodes):
#: a list indexes in C, and a work stealer indexes one at every steal request (M2 ran 21% slower on
#: :class:`Others` at 256 nodes); beyond it, :class:`Others`, whose memory does not grow as n²
LIST_NODES = 2048


def complete_neighbours(n: int) -> list[Sequence[int]]:
    """Each node's neighbours in the complete graph on *n* nodes, ascending: lists up to
    :data:`LIST_NODES` nodes, :class:`Others` beyond (the same ints in the same order)."""
    if n > LIST_NODES:
        return [Others(i, n) for i in range(n)]
    # slices of one list share its int objects: a random victim then touches a few cache-hot ints
    # instead of one of n(n-1) scattered ones
    ids = list(range(n))
    return [ids[:i] + ids[i + 1:] for i in range(n)]
