"""The chunking kind: the base of the divisible family's balancers (how many items a worker gets next)."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from dlbkit.balancers.base import Balancer, whole
from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView

__all__ = ["chunk_count", "ChunkingBalancer"]


def chunk_count(balancer: ChunkingBalancer, answer) -> int:
    """A chunking rule's *answer* as a whole number of items (:func:`whole`), or a ConfigError
    naming the balancer: a rule's own code returning None (a forgotten ``return``), text or NaN
    otherwise surfaced as a bare ``int()`` error from inside dlbkit."""
    try:
        return whole(answer)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"the answer of {balancer.name}.chunk", answer,
                          "a number of items (engines take its integer part, clamped to [1, remaining])") from None


class ChunkingBalancer(Balancer):
    """Decides how many items the next request (or round) gets.

    One required method, :meth:`chunk`. Optional hooks for the round-based mechanism:
    :meth:`allocate` (all workers' counts for the next round; default asks :meth:`chunk` per worker
    in send order) and :meth:`send_order`. Engines clamp a decision to [1, remaining] and record it.
    """

    kind = "chunking"
    kind_use = "it cuts a loop into chunks: dlbkit.map, dlbkit.Loop, a divisible workload"
    #: False for rules that never read the view's per-worker measurements; engines then skip
    #: updating them (the simulator's hot loop). Adaptive rules leave it True.
    reads_measurements: ClassVar[bool] = True

    @abstractmethod
    def chunk(self, view: LoopView, worker: int) -> int:
        """The number of items to give *worker* now (engines clamp it to [1, remaining])."""

    def allocate(self, view: LoopView) -> list[int]:
        counts = [0] * view.n_nodes
        left = view.remaining
        for w in self.send_order(view):
            if left <= 0:
                break
            n = max(1, min(chunk_count(self, self.chunk(view, w)), left))
            counts[w] = n
            left -= n
            view.remaining = left  # rules such as GSS read the remainder as they go
        view.remaining = left + sum(counts)
        return counts

    def send_order(self, view: LoopView) -> list[int]:
        return list(range(view.n_nodes))
