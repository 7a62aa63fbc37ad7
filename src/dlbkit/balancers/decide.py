"""Asking a balancer for a decision, and checking the answer: written once for every engine.

A balancer decides and an engine does; between the two sits what every engine must do with an
answer before acting on it: clamp it to what is possible (a chunk to [1, remaining], a gift to the
tasks the victim holds) and refuse what is not allowed (a victim that is not another node, a transfer
to oneself, a move between nodes that are not neighbours). Each function here asks one hook and
returns the checked answer, raising :class:`~dlbkit.errors.ConfigError` that names the balancer, the
hook and the node. The simulator and the runtime call these same functions, so given the same view a
balancer's decision is the same in both (tests/test_same_decisions_sim_and_runtime.py records the views of real runs
and feeds them to both engines' paths).

A hot loop may inline one of these for speed (the M1 engine inlines :func:`chunk`); it then says so
where it does, and a test checks the inlined copy against this one.

**Decision records.** Given a list as *record*, each function appends a
:class:`~dlbkit.model.trace.Decision` (time, deciding node, hook, checked answer, the mean age of the
other nodes' entries in the view, and a copy of the view): an engine asked to record decisions passes
its trace's ``decisions``. Replaying the recorded views through these functions with a fresh balancer
gives the recorded answers (tests/test_same_decisions_sim_and_runtime.py), whichever engine recorded them.
"""

from __future__ import annotations

import copy
import math
from numbers import Integral, Real
from typing import Sequence

from dlbkit.errors import ConfigError
from dlbkit.model.trace import Decision
from dlbkit.model.view import Candidates
from dlbkit.balancers.base import (ChunkingBalancer, MappingBalancer, MigrationBalancer, PlacementBalancer, Plan, RepartitionBalancer,
                   Transfer, chunk_count, whole)  # chunk_count lives in base: ChunkingBalancer.allocate checks with it too

__all__ = ["chunk", "chunk_count", "allocation", "victims", "checked_requests", "given", "placements", "transfers", "repartition", "plan",
           "online_place", "place", "checked_node"]


def _is_int(x) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool)


def _note(record: list | None, view, node: int, hook: str, answer, view_copy=None) -> None:
    """Append the decision to *record* (None: not recording): the view as it was when asked."""
    if record is None:
        return
    others = [view.time - view.updated_at[j] for j in range(view.n_nodes) if j != node]
    age = sum(others) / len(others) if others else 0.0
    record.append(Decision(view.time, node, hook, answer, age, view_copy if view_copy is not None else
                           copy.deepcopy(view)))


# --- chunking ---------------------------------------------------------------------------------------
def chunk(balancer: ChunkingBalancer, view, node: int, record: list | None = None) -> int:
    """How many items *node* gets now: the balancer's answer clamped to [1, ``view.remaining``]."""
    seen = copy.deepcopy(view) if record is not None else None  # rules may learn in chunk(): copy first
    n = chunk_count(balancer, balancer.chunk(view, node))
    n = 1 if n < 1 else (n if n < view.remaining else view.remaining)
    _note(record, view, node, "chunk", n, seen)
    return n


def allocation(balancer: ChunkingBalancer, view, record: list | None = None) -> tuple[list[int], list[int]]:
    """A round's counts per node and its send order (the round mechanism, 004 §2.2): one
    non-negative count per node and a permutation of the nodes; counts beyond what remains are
    scaled down proportionally (004 note §2.7.2), and a round of nothing gives node 0 one item."""
    P = view.n_nodes
    seen = copy.deepcopy(view) if record is not None else None
    raw = balancer.allocate(view)
    counts = _whole(raw, f"allocation of balancer {balancer.name!r}", f"{P} non-negative counts")
    raw = balancer.send_order(view)
    order = _whole(raw, f"send_order of balancer {balancer.name!r}", f"a permutation of the worker indices 0..{P - 1}")
    if sorted(order) != list(range(P)):
        raise ConfigError(f"send_order of balancer {balancer.name!r}", order,
                          f"a permutation of the worker indices 0..{P - 1}")
    if len(counts) != P or any(c < 0 for c in counts):
        raise ConfigError(f"allocation of balancer {balancer.name!r}", counts, f"{P} non-negative counts")
    counts = _clip(counts, view.remaining)
    _note(record, view, -1, "allocate", (counts, order), seen)
    return counts, order


def _whole(answer, field: str, allowed: str) -> list[int]:
    """A rule's list *answer* as ints (each one's integer part), or the ConfigError naming *field*: a
    custom ``allocate``/``send_order`` answering None, text or NaN surfaced as a bare ``int()`` error."""
    try:
        if isinstance(answer, (str, bytes, bytearray)):
            raise TypeError
        return [whole(c) for c in answer]  # one pass: an iterator (reversed(range(P))) is read once
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(field, answer, allowed) from None


def _clip(counts: list[int], remaining: int) -> list[int]:
    """Scale a round's counts down proportionally when they exceed what is left (004 note §2.7.2)."""
    total = sum(counts)
    if total <= remaining:
        if total == 0:
            counts = list(counts)
            counts[0] = min(1, remaining)  # a round must make progress
        return counts
    exact = [c * remaining / total for c in counts]
    out = [math.floor(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: out[i] - exact[i])[: remaining - sum(out)]:
        out[i] += 1
    return out


# --- migration ----------------------------------------------------------------------------------------
def victims(balancer: MigrationBalancer, view, node: int, record: list | None = None) -> list[tuple[int, int]]:
    """Whom *node* asks for work and how much it wants (0: whatever the victim gives), from
    :meth:`~MigrationBalancer.on_idle`; each victim must be another node."""
    seen = copy.deepcopy(view) if record is not None else None
    out = checked_requests(balancer, node, balancer.on_idle(view, node), view.n_nodes)
    _note(record, view, node, "on_idle", out, seen)
    return out


def checked_requests(balancer: MigrationBalancer, node: int, decision, P: int) -> list[tuple[int, int]]:
    """:meth:`~MigrationBalancer.on_idle`'s *decision* for *node* as checked (victim, wanted) pairs
    (for an engine that has asked already, e.g. to take a fast path for a single victim first)."""
    out = []
    for r in MigrationBalancer.requests(node, decision):
        v = r.src
        if not _is_int(v) or not (0 <= v < P) or v == node:
            raise ConfigError(f"the victim {balancer.name}.on_idle chose for node {node}", v,
                              f"another node in 0..{P - 1}")
        out.append((int(v), max(0, int(r.n))))
    return out


def given(balancer: MigrationBalancer, view, victim: int, thief: int, queue_length: int, wanted: int = 0,
          record: list | None = None) -> int:
    """How many of its *queue_length* waiting tasks *victim* gives *thief*, clamped to [0, queue_length]."""
    seen = copy.deepcopy(view) if record is not None else None
    n = int(balancer.on_request(view, victim, thief, queue_length, wanted))
    n = 0 if n < 0 else (n if n < queue_length else queue_length)
    _note(record, view, victim, "on_request", (thief, queue_length, wanted, n), seen)
    return n


def placements(balancer: MigrationBalancer, view, node: int, n_children: int,
               record: list | None = None) -> list[int]:
    """Where each of the *n_children* just created on *node* goes: one node index per child."""
    seen = copy.deepcopy(view) if record is not None else None
    dests = list(balancer.on_spawn(view, node, n_children))
    if len(dests) != n_children:
        raise ConfigError(f"{balancer.name}.on_spawn's answer for node {node}", f"{len(dests)} destinations",
                          f"one per child ({n_children})")
    P = view.n_nodes
    for x in dests:
        if not _is_int(x) or not 0 <= x < P:
            raise ConfigError(f"the destination {balancer.name}.on_spawn chose on node {node}", x,
                              f"a node index in [0, {P - 1}]")
    out = [int(x) for x in dests]
    _note(record, view, node, "on_spawn", out, seen)
    return out


def _checked(balancer, where: str, decided: Sequence, P: int) -> list[Transfer]:
    out = []
    for tr in decided:
        ok = isinstance(tr, Transfer) and all(_is_int(x) for x in (tr.src, tr.dst, tr.n))
        if not (ok and 0 <= tr.src < P and 0 <= tr.dst < P and tr.src != tr.dst):
            raise ConfigError(f"a transfer {balancer.name}.{where} returned", tr,
                              f"a Transfer with src != dst, both in 0..{P - 1}, n an integer")
        out.append(Transfer(int(tr.src), int(tr.dst), int(tr.n), int(tr.step)))
    return out


def transfers(balancer: MigrationBalancer, view, record: list | None = None) -> list[Transfer]:
    """The periodic, central decision (:meth:`~MigrationBalancer.balance`), each transfer checked
    (the engine still clamps *n* to what the source holds)."""
    seen = copy.deepcopy(view) if record is not None else None
    out = _checked(balancer, "balance", balancer.balance(view), view.n_nodes)
    _note(record, view, -1, "balance", out, seen)
    return out


# --- repartition --------------------------------------------------------------------------------------
def repartition(balancer: RepartitionBalancer, view, node: int, neighbours: Sequence[Sequence[int]],
                record: list | None = None) -> list[Transfer]:
    """The data points *node* (-1: a central rule) moves now; every transfer between neighbours with
    n ≥ 0 (the engine still keeps at least one data point on the sender)."""
    seen = copy.deepcopy(view) if record is not None else None
    out = _checked(balancer, "decide", balancer.decide(view, node) or (), view.n_nodes)
    _note(record, view, node, "decide", out, seen)
    for tr in out:
        if tr.dst not in neighbours[tr.src] or tr.n < 0:
            raise ConfigError(f"a transfer {balancer.name}.decide returned for node {node}", tr,
                              "a move between neighbours with n >= 0")
    return out


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
        if not _is_int(x) or not 0 <= x < m:
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
    _note(record, view, -1, "map", out, seen)
    return out


def online_place(balancer, view, record: list | None = None) -> list[tuple]:
    """An online mapper's placements now (:meth:`~dlbkit.balancers.base.OnlineMapping.place`),
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
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 + keyed or not _is_int(pair[0]) \
                or not _is_int(pair[1]):
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
    _note(record, view, -1, "place", out, seen)
    return out


# --- placement (job streams) ------------------------------------------------------------------------------
def place(balancer: PlacementBalancer, view, k: int = 1, update: bool = True, record: list | None = None) -> list[int]:
    """The nodes of the *k* tasks of a job that arrived at ``view.node``, checked: each a node in
    [0, ``view.n_nodes``). A batch (*k* > 1) is placed on a copy of ``view.queue`` (a balancer that
    counts its own placements with *update* must not change the engine's list, which with exact
    information is the truth itself)."""
    seen = copy.deepcopy(view) if record is not None else None
    if k == 1:
        nodes = [balancer.place(view)]
    else:
        live = view.queue
        view.queue = list(live)
        try:
            nodes = balancer.place_batch(view, k, update)
        finally:
            view.queue = live
    if len(nodes) != k:
        raise ConfigError(f"the answer of {balancer.name}.place_batch", f"{len(nodes)} nodes", f"one node per task ({k})")
    nodes = [checked_node(balancer, view, j) for j in nodes]
    _note(record, view, view.node, "place", list(nodes), seen)
    return nodes


def checked_node(balancer: PlacementBalancer, view, j) -> int:
    """:meth:`~PlacementBalancer.place`'s answer *j*, already asked for (a hot loop that inlines
    :func:`place` for a single task and found *j* not a plain int in range), checked as :func:`place`
    checks it: an integer (a numpy integer too) node in [0, ``view.n_nodes``), returned as an int;
    otherwise :func:`place`'s ConfigError. The balancer is not asked again."""
    n = view.n_nodes
    if not _is_int(j) or not 0 <= j < n:
        raise ConfigError(f"the answer of {balancer.name}.place", j, f"a node in [0, {n - 1}]")
    return int(j)
