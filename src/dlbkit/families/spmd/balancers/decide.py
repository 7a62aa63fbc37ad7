"""A repartition balancer's answers, checked: the one way an engine asks it."""

from __future__ import annotations

import copy
from typing import Sequence

from dlbkit.balancers.base import (  # chunk_count lives in base: ChunkingBalancer.allocate checks with it too
    Transfer,
)
from dlbkit.balancers.decide import checked_transfers, note
from dlbkit.errors import ConfigError
from dlbkit.families.spmd.balancers.base import RepartitionBalancer

__all__ = ["repartition"]


# --- repartition --------------------------------------------------------------------------------------
def repartition(balancer: RepartitionBalancer, view, node: int, neighbours: Sequence[Sequence[int]],
                record: list | None = None) -> list[Transfer]:
    """The data points *node* (-1: a central rule) moves now; every transfer between neighbours with
    n ≥ 0 (the engine still keeps at least one data point on the sender)."""
    seen = copy.deepcopy(view) if record is not None else None
    out = checked_transfers(balancer, "decide", balancer.decide(view, node) or (), view.n_nodes)
    note(record, view, node, "decide", out, seen)
    for tr in out:
        if tr.dst not in neighbours[tr.src] or tr.n < 0:
            raise ConfigError(f"a transfer {balancer.name}.decide returned for node {node}", tr,
                              "a move between neighbours with n >= 0")
    return out
