"""A mapper's and an online mapper's answers, checked: the one way an engine asks them."""

from __future__ import annotations

import copy
import math
from numbers import Real

from dlbkit.balancers.decide import is_int, note
from dlbkit.errors import ConfigError
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.families.graph.model.view import Candidates

__all__ = ["plan", "online_place"]


# --- mapping (task graphs) ----------------------------------------------------------------------------
def plan(balancer: MappingBalancer, view, record: list | None = None) -> Plan:
    """The balancer's :class:`Plan` for the graph in *view*, checked: one processor in
    [0, ``view.n_nodes``) per task, and an order (when given) that lists every task once and puts
    each after its predecessors."""
    seen = copy.deepcopy(view) if record is not None else None
    p = balancer.map(view)
    who = f"{balancer.name}.map"
    if not isinstance(p, Plan):
        raise ConfigError(f"the answer of {who}", type(p).__name__, "a Plan")
    g = view.costs.graph
    n, m = g.n_tasks, view.n_nodes
    a = tuple(p.assignment)
    if len(a) != n:
        raise ConfigError(f"{who} assignment", f"{len(a)} entries", f"one processor per task ({n})")
    for i, x in enumerate(a):
        if not is_int(x) or not 0 <= x < m:
            raise ConfigError(f"{who} assignment[{g.ids[i]!r}]", x, f"a processor in [0, {m - 1}]")
    order = None
    if p.order is not None:
        order = tuple(int(x) for x in p.order)
        if sorted(order) != list(range(n)):
            raise ConfigError(f"{who} order", "not a permutation", f"every task index 0..{n - 1} exactly once")
        pos = [0] * n
        for k, i in enumerate(order):
            pos[i] = k
        for i in range(n):
            for j, _ in g.succs[i]:
                if pos[j] < pos[i]:
                    raise ConfigError(f"{who} order", f"{g.ids[j]!r} before its predecessor {g.ids[i]!r}",
                                      "a topological order")
    out = Plan(tuple(int(x) for x in a), order, p.info)
    note(record, view, -1, "map", out, seen)
    return out


def online_place(balancer, view, record: list | None = None) -> list[tuple]:
    """An online mapper's placements now (:meth:`~dlbkit.families.graph.balancers.base.OnlineMapping.place`),
    checked: a list of (task, node) pairs, each task a candidate of *view* placed once, each node in
    [0, ``view.n_nodes``); for a mapper whose ``local_order`` is ``"plan"``, (task, node, key)
    triples, the key a finite number or a tuple of them (returned as a tuple)."""
    seen = copy.deepcopy(view) if record is not None else None
    ans = balancer.place(view)
    who = f"{balancer.name}.place"
    keyed = getattr(balancer, "local_order", "priority") == "plan"
    shape = "(task index, node index, key) triples" if keyed else "(task index, node index) pairs"
    if not isinstance(ans, (list, tuple)):
        raise ConfigError(f"the answer of {who}", type(ans).__name__, "a list of " + shape)
    cand = view.candidates
    if not isinstance(cand, Candidates):  # a list set by hand: one pass, not one per pair
        cand = set(cand)
    taken: set = set()
    ids = view.costs.graph.ids
    m = view.n_nodes
    out: list[tuple] = []
    for pair in ans:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 + keyed or not is_int(pair[0]) \
                or not is_int(pair[1]):
            raise ConfigError(f"the answer of {who}", repr(pair), shape)
        i, p = int(pair[0]), int(pair[1])
        key = None
        if keyed:
            key = pair[2] if isinstance(pair[2], tuple) else (pair[2],)
            if not key or not all(isinstance(x, Real) and not isinstance(x, bool) and math.isfinite(x) for x in key):
                raise ConfigError(f"{who} key of task {ids[i] if 0 <= i < len(ids) else i!r}", repr(pair[2]),
                                  "a finite number or a non-empty tuple of them")
        if i not in cand or i in taken:
            raise ConfigError(f"{who} task", ids[i] if 0 <= i < len(ids) else i,
                              "a candidate of the view (unplaced, zero holds), placed once")
        if not 0 <= p < m:
            raise ConfigError(f"{who} node of task {ids[i]!r}", p, f"a node in [0, {m - 1}]")
        taken.add(i)
        out.append((i, p, key) if keyed else (i, p))
    note(record, view, -1, "place", out, seen)
    return out
