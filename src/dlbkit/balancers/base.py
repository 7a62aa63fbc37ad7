"""Balancer base classes: a balancer decides, an engine does.

A balancer is a :class:`~dlbkit.params.Parameterised` object: keyword-only parameters stored
unchanged, declared constraints, ``get_params``/``set_params``/``clone``. Learned state ends in ``_``
and is reset by ``start(view)``, which engines call before the first decision of every run.
Randomised balancers draw only from the Generator the engine passes to ``start``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import ClassVar

import numpy as np

from ..model.view import LoopView
from ..params import Parameterised

__all__ = ["Taxonomy", "Balancer", "ChunkingBalancer"]


@dataclass(frozen=True)
class Taxonomy:
    """Where a balancer sits on the axes of notes/overview.md §3 (after Osman 2003 §2.5, Haron §2.4).

    *initiation*: who triggers a decision (sender, receiver, periodic, master, arrival);
    *location*: where it is made (central, distributed, hybrid);
    *information*: what it uses (none, local, neighbourhood, global; and how fresh);
    *transfer*: the rule that sets how much work moves; *selection*: which work moves.
    """

    initiation: str
    location: str
    information: str
    transfer: str
    selection: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


class Balancer(Parameterised, ABC):
    """Root of every balancer. Subclasses set ``name``, ``kind``, ``source`` and ``taxonomy``."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = ""
    source: ClassVar[str] = ""
    taxonomy: ClassVar[Taxonomy]

    def start(self, view, rng: np.random.Generator | None = None) -> None:
        """Validate parameters and reset learned state before a run (engines call this)."""
        self.validate()
        self.rng_ = rng


class ChunkingBalancer(Balancer):
    """Decides how many items the next request (or round) gets.

    One required method, :meth:`chunk`. Optional hooks for the round-based mechanism:
    :meth:`allocate` (all workers' counts for the next round; default asks :meth:`chunk` per worker
    in send order) and :meth:`send_order`. Engines clamp a decision to [1, remaining] and record it.
    """

    kind = "chunking"
    #: False for rules that never read the view's per-worker measurements; engines then skip
    #: updating them (the simulator's hot loop). Adaptive rules leave it True.
    reads_measurements: ClassVar[bool] = True

    @abstractmethod
    def chunk(self, view: LoopView, worker: int) -> int:
        """The number of items to give *worker* now (engines clamp it to [1, remaining])."""

    def allocate(self, view: LoopView) -> list[int]:
        counts = [0] * view.n_workers
        left = view.remaining
        for w in self.send_order(view):
            if left <= 0:
                break
            n = max(1, min(int(self.chunk(view, w)), left))
            counts[w] = n
            left -= n
            view.remaining = left  # rules such as GSS read the remainder as they go
        view.remaining = left + sum(counts)
        return counts

    def send_order(self, view: LoopView) -> list[int]:
        return list(range(view.n_workers))
