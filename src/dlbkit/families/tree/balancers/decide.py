"""A migration balancer's answers, checked: the one way an engine asks it (victims, tasks given, spawned tasks' nodes, transfers)."""

from __future__ import annotations

import copy

from dlbkit.balancers.base import (  # chunk_count lives in base: ChunkingBalancer.allocate checks with it too
    Transfer,
)
from dlbkit.balancers.decide import checked_transfers, is_int, note
from dlbkit.errors import ConfigError
from dlbkit.families.tree.balancers.base import MigrationBalancer

__all__ = ["victims", "checked_requests", "given", "placements", "transfers"]


# --- migration ----------------------------------------------------------------------------------------
def victims(balancer: MigrationBalancer, view, node: int, record: list | None = None) -> list[tuple[int, int]]:
    """Whom *node* asks for work and how much it wants (0: whatever the victim gives), from
    :meth:`~MigrationBalancer.on_idle`; each victim must be another node."""
    seen = copy.deepcopy(view) if record is not None else None
    out = checked_requests(balancer, node, balancer.on_idle(view, node), view.n_nodes)
    note(record, view, node, "on_idle", out, seen)
    return out


def checked_requests(balancer: MigrationBalancer, node: int, decision, P: int) -> list[tuple[int, int]]:
    """:meth:`~MigrationBalancer.on_idle`'s *decision* for *node* as checked (victim, wanted) pairs
    (for an engine that has asked already, e.g. to take a fast path for a single victim first)."""
    out = []
    for r in MigrationBalancer.requests(node, decision):
        v = r.src
        if not is_int(v) or not (0 <= v < P) or v == node:
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
    note(record, view, victim, "on_request", (thief, queue_length, wanted, n), seen)
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
        if not is_int(x) or not 0 <= x < P:
            raise ConfigError(f"the destination {balancer.name}.on_spawn chose on node {node}", x,
                              f"a node index in [0, {P - 1}]")
    out = [int(x) for x in dests]
    note(record, view, node, "on_spawn", out, seen)
    return out


def transfers(balancer: MigrationBalancer, view, record: list | None = None) -> list[Transfer]:
    """The periodic, central decision (:meth:`~MigrationBalancer.balance`), each transfer checked
    (the engine still clamps *n* to what the source holds)."""
    seen = copy.deepcopy(view) if record is not None else None
    out = checked_transfers(balancer, "balance", balancer.balance(view), view.n_nodes)
    note(record, view, -1, "balance", out, seen)
    return out
