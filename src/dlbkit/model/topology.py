"""Interconnection topologies as networkx graphs over nodes 0..n-1."""

from __future__ import annotations

import math
from typing import Any

import networkx as nx
import numpy as np

from ..errors import ConfigError
from . import check

__all__ = ["KINDS", "build", "hop_matrix", "topology_from_dict"]

KINDS = ("complete", "chain", "ring", "mesh", "torus", "hypercube", "star", "edges")


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
    check.choice(kind, f"{field}.kind", KINDS)
    if n < 1:
        raise ConfigError("nodes", n, "at least one node")
    if kind == "complete":
        g = nx.complete_graph(n)
    elif kind == "chain":
        g = nx.path_graph(n)
    elif kind == "ring":
        if n < 3:
            raise ConfigError(f"{field}.kind", kind, f"used with at least 3 nodes (a ring of {n} is not a ring)")
        g = nx.cycle_graph(n)
    elif kind == "star":
        g = nx.star_graph(n - 1)
    elif kind in ("mesh", "torus"):
        r, c = _grid_shape(n, rows, field, 2 if kind == "torus" else 1)
        g = nx.grid_2d_graph(r, c, periodic=(kind == "torus"))
        g = nx.relabel_nodes(g, {(i, j): i * c + j for i, j in g.nodes})
    elif kind == "hypercube":
        d = n.bit_length() - 1
        if n != 1 << d:
            raise ConfigError(f"{field}.kind", kind, f"used with a power-of-two node count (got {n})")
        g = nx.hypercube_graph(d) if d else nx.empty_graph(1)
        g = nx.relabel_nodes(g, {v: int("".join(map(str, v)) or "0", 2) for v in g.nodes}) if d else g
    else:
        if edges is None:
            raise ConfigError(f"{field}.edges", None, "a list of [a, b] node-index pairs")
        g = nx.empty_graph(n)
        for i, e in enumerate(edges):
            if len(e) != 2 or not all(isinstance(x, int) and 0 <= x < n for x in e):
                raise ConfigError(f"{field}.edges[{i}]", e, f"a pair of node indices in [0, {n - 1}]")
            g.add_edge(*e)
    g = nx.convert_node_labels_to_integers(g, ordering="sorted") if kind != "edges" else g
    if not nx.is_connected(g):
        raise ConfigError(f"{field}.edges", edges, "edges forming a connected graph")
    return g


def hop_matrix(g: nx.Graph) -> np.ndarray:
    """Shortest-path hop counts between every pair of nodes."""
    n = g.number_of_nodes()
    h = np.zeros((n, n), dtype=np.int64)
    for src, lengths in nx.all_pairs_shortest_path_length(g):
        for dst, d in lengths.items():
            h[src, dst] = d
    return h


def topology_from_dict(d: Any, n: int, field: str = "network.topology") -> nx.Graph:
    if isinstance(d, str):
        return build(d, n, field=field)
    d = check.table(d, field)
    check.known_keys(d, field, {"kind", "rows", "edges"})
    kind = check.required(d, "kind", field)
    rows = d.get("rows")
    if rows is not None:
        rows = check.integer(rows, f"{field}.rows", lo=1)
    return build(kind, n, rows=rows, edges=d.get("edges"), field=field)
