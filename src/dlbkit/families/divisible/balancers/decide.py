"""A chunking balancer's answers, checked: the one way an engine asks it (chunk sizes, a static allocation)."""

from __future__ import annotations

import copy
import math

from dlbkit.balancers.base import (  # chunk_count lives in base: ChunkingBalancer.allocate checks with it too
    whole,
)
from dlbkit.balancers.decide import note
from dlbkit.errors import ConfigError
from dlbkit.families.divisible.balancers.base import ChunkingBalancer, chunk_count

__all__ = ["chunk", "allocation"]


# --- chunking ---------------------------------------------------------------------------------------
def chunk(balancer: ChunkingBalancer, view, node: int, record: list | None = None) -> int:
    """How many items *node* gets now: the balancer's answer clamped to [1, ``view.remaining``]."""
    seen = copy.deepcopy(view) if record is not None else None  # rules may learn in chunk(): copy first
    n = chunk_count(balancer, balancer.chunk(view, node))
    n = 1 if n < 1 else (n if n < view.remaining else view.remaining)
    note(record, view, node, "chunk", n, seen)
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
    note(record, view, -1, "allocate", (counts, order), seen)
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
