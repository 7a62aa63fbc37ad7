"""GDEM: the Generalised Dimension Exchange Method, pairwise balancing over the edge colours."""

from __future__ import annotations

import math
from numbers import Real
from collections.abc import Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model.topology import edge_colouring, kary_ncube, neighbour_lists
from dlbkit.families.tree.model.view import TreeView
from dlbkit.params import Interval
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register

__all__ = ["GDEM", "optimal_exchange", "exchange_for", "shape_of"]

#: colour classes with more pairs than this are balanced with numpy, smaller ones in plain Python
#: (same arithmetic either way; numpy's per-call overhead only pays off on large colours)
_VECTOR_PAIRS = 24


def optimal_exchange(dims: Sequence[int], wrap: bool) -> float:
    """Xu & Lau's optimal exchange parameter λ for a k-ary n-cube (*wrap*) or n-D mesh with sides
    *dims* (001 §2.1): hypercube 1/2, mesh 1/(1 + sin(π/k)), torus or ring 1/(1 + sin(2π/k)), k the
    largest side; a chain is a 1-D mesh. When k ≤ 2 the result is 1/2 (001 §2.1 [INF]: the torus formula
    gives λ = 1 at k = 2, which swaps a pair's loads for ever)."""
    dims = [int(d) for d in dims]
    if not dims or min(dims) < 1:
        raise ConfigError("topology.dims", tuple(dims), "one or more sides, each at least 1")
    k = max(dims)
    if k <= 2:
        return 0.5
    angle = (2 * math.pi if wrap else math.pi) / k
    return 1.0 / (1.0 + math.sin(angle))


def shape_of(neighbours: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], bool] | None:
    """(dims, wrap) of the k-ary n-cube or mesh whose node numbering (first dimension fastest, as
    :func:`~dlbkit.model.topology.kary_ncube`) gives exactly these neighbour lists; None for any
    other graph. Tried: hypercube, 2-D torus and mesh (every factorisation), ring, chain."""
    n = len(neighbours)
    target = [sorted(int(v) for v in nb) for nb in neighbours]
    degree2 = sum(len(nb) for nb in target)
    cands: list[tuple[tuple[int, ...], bool]] = []
    d = n.bit_length() - 1
    if n >= 2 and n == 1 << d:
        cands.append(((2,) * d, True))
    for a in range(n, 0, -1):
        if n % a == 0 and 2 <= a and n // a >= 2:
            cands += [((a, n // a), True), ((a, n // a), False)]
    cands += [((n,), True), ((n,), False)]
    for dims, wrap in cands:
        g = kary_ncube(dims, wrap=wrap)
        if 2 * g.number_of_edges() == degree2 and neighbour_lists(g) == target:
            return dims, wrap
    return None


def exchange_for(neighbours: Sequence[Sequence[int]]) -> float:
    """The optimal λ for the topology these neighbour lists describe; 1/2 (pairwise averaging, the
    hypercube's optimum) for a graph that is not a k-ary n-cube or mesh."""
    shape = shape_of(neighbours)
    return 0.5 if shape is None else optimal_exchange(*shape)


def colours_for(neighbours: Sequence[Sequence[int]]) -> list[list[tuple[int, int]]]:
    """Edge colour classes for these neighbour lists: the dimension colouring of a recognised k-ary
    n-cube (001 §3.1: x-A, x-B, y-A, y-B), else a greedy colouring of the graph."""
    shape = shape_of(neighbours)
    if shape is not None:
        return edge_colouring(kary_ncube(shape[0], wrap=shape[1]))
    import networkx as nx

    g = nx.empty_graph(len(neighbours))
    g.add_edges_from((u, int(v)) for u, nb in enumerate(neighbours) for v in nb if u != int(v))
    return edge_colouring(g)


@register
class GDEM(MigrationBalancer):
    """GDEM: for each edge colour of the topology in turn, every pair (a, b) of that colour compares
    its queue lengths and, when they differ by more than one, the heavier sends the lighter
    ⌊λ·|l_a − l_b|⌋ of its oldest waiting tasks; one sweep visits every colour once.

    Source: 001 §2.1 (Haron 1998, Fig. 2.2 and 4.6): Cybenko's dimension exchange (1989) generalised
    to any topology by edge colouring (Hosseini et al. 1990), integer form after Wu & Shu; the
    exchange parameter λ (*exchange*) of Xu & Lau 1992, whose optimum is :func:`optimal_exchange` of the
    topology (the default, *exchange* None; 001 §5.2.5 uses λ_opt of the 2-D torus). *interval* is
    Haron's LB interval i, the nodes each processor executes between invocations (001 §2.9; 1 in the
    validation runs, 16–64 tuned in Ch. 5).

    The colour classes are ``view.colours`` when the engine fills them, else derived at
    :meth:`start` from ``view.neighbours``: a k-ary n-cube or mesh numbered as
    :func:`~dlbkit.model.topology.kary_ncube` is coloured by dimension (x-A, x-B, y-A, y-B: the order
    that reproduces 001 Table 4.7 exactly), any other graph greedily. λ's default comes from the
    neighbour lists the same way (1/2 for an unrecognised graph). Loads are updated pair by pair,
    so a later colour sees the earlier colours' transfers; :meth:`balance` returns the transfers in
    colour order with ``step`` = colour index, and a superstep engine costs one load exchange per
    pair and colour (``protocol = "pairwise"``). Draws nothing from the Generator; it still asks for
    one, like every migration balancer (engines always pass it).

    Helps: on a hypercube one sweep balances any load vector exactly (λ = 1/2); every decision is
    local to a pair and needs no central node; migration moves the oldest (largest) subtrees.
    Backfires: each invocation is a global synchronisation of all pairs (Willebeek-LeMair & Reeves
    1993), so a small interval on a large machine spends more on exchanges than it saves; on
    a torus or mesh balance needs O(k) sweeps, and λ above 1/2 can overshoot a pair.
    """

    name = "gdem"
    source = "001 §2.1, §4.2.2 (Haron 1998); Cybenko 1989; Xu & Lau 1992 (optimal λ)"
    taxonomy = Taxonomy("periodic (every interval nodes, all processors together)", "distributed (per pair)",
                        "the partner's queue length (one edge colour at a time)",
                        "floor(exchange * difference) when the pair differs by more than 1",
                        "oldest waiting tasks; partner = the pair of the current edge colour")
    periodic = True
    protocol = "pairwise"
    _parameter_constraints = {"exchange": [None, Interval(Real, 0, 1, closed="right")],
                              "interval": [Interval(Real, 1, None, closed="left")]}

    def __init__(self, *, exchange: float | None = None, interval: float = 1):
        self.exchange = exchange
        self.interval = interval

    def start(self, view: TreeView, rng=None) -> None:
        super().start(view, rng)
        colours = view.colours if view.colours else colours_for(view.neighbours)
        self.colours_ = [[(int(a), int(b)) for a, b in c] for c in colours]
        self.exchange_ = float(self.exchange) if self.exchange is not None else exchange_for(view.neighbours)
        self._arrays = [(np.array([a for a, _ in c], dtype=np.int64), np.array([b for _, b in c], dtype=np.int64))
                        if len(c) > _VECTOR_PAIRS else None for c in self.colours_]

    def last_exchange(self) -> list:
        """Every pair of every colour class swaps loads at every decision (dimension exchange)."""
        return self.colours_

    def balance(self, view: TreeView) -> list[Transfer]:
        lam = self.exchange_
        loads = list(view.queue)
        arr = None
        out: list[Transfer] = []
        for step, (pairs, vec) in enumerate(zip(self.colours_, self._arrays)):
            if vec is None:
                if arr is not None:
                    loads = arr.tolist()
                    arr = None
                for a, b in pairs:
                    d = loads[a] - loads[b]
                    if d > 1:
                        m = math.floor(lam * d)
                        if m > 0:
                            loads[a] -= m
                            loads[b] += m
                            out.append(Transfer(a, b, m, step))
                    elif d < -1:
                        m = math.floor(lam * -d)
                        if m > 0:
                            loads[b] -= m
                            loads[a] += m
                            out.append(Transfer(b, a, m, step))
                continue
            if arr is None:
                arr = np.array(loads, dtype=np.int64)
            A, B = vec
            d = arr[A] - arr[B]
            hit = np.flatnonzero(np.abs(d) > 1)
            if hit.size == 0:
                continue
            dh = d[hit]
            m = np.floor(lam * np.abs(dh)).astype(np.int64)
            src = np.where(dh > 0, A[hit], B[hit])
            dst = np.where(dh > 0, B[hit], A[hit])
            keep = m > 0
            src, dst, m = src[keep], dst[keep], m[keep]
            arr[src] -= m  # the pairs of one colour are disjoint: no index repeats
            arr[dst] += m
            out.extend(Transfer(s, t, n, step) for s, t, n in zip(src.tolist(), dst.tolist(), m.tolist()))
        return out
