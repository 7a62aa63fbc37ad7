"""Performance-based loop scheduling (PLS): a static part first, then guided self-scheduling."""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Integral, Real

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["PartialStatic"]


@register
class PartialStatic(ChunkingBalancer):
    """PLS: each worker's first chunk is a static block of ⌈N·SWR/P⌉ items; the rest goes by GSS.

    Source: Shih, Yang & Tseng 2007, "A performance-based parallel loop scheduling on grid
    environments", J. Supercomputing 41(3) (PLS, with a static workload ratio SWR), as implemented
    in LB4OMP (``pls``, SWR default 0.5); the LB4OMP form without per-node performance weights. After its static block, a
    worker gets max(⌈R_dyn/P⌉, *min_chunk*) items, GSS on the dynamic pool R_dyn = R − (static
    blocks of workers that have not asked yet).

    Choices where the sources are silent: in a request-driven engine the static blocks are handed
    out on each worker's first request rather than before the loop, so the dynamic pool excludes
    the blocks still reserved for workers that have not asked yet (as if they had been assigned
    at the start). With *swr* = 1 a block can exceed what is left; the engine then cuts it.

    Helps: the static part costs one request per worker and keeps data locality; GSS then absorbs
    moderate imbalance. Backfires: the static blocks are equal, so on workers of very different
    speed a large *swr* makes the slow worker's block decide the makespan.
    """

    name = "pls"
    source = "Shih, Yang & Tseng 2007, J. Supercomputing 41(3) (PLS); LB4OMP 'pls'"
    taxonomy = request_driven("remaining count", "static block ⌈N·SWR/P⌉, then ⌈R/P⌉")
    reads_measurements = False
    _parameter_constraints = {"swr": [Interval(Real, 0, 1, closed="both")],
                              "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, swr: float = 0.5, min_chunk: int = 1):
        self.swr = swr
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        P = view.n_nodes
        self.block_ = math.ceil(Fraction(float(self.swr)) * view.n_items / P)  # exact: no float round-off
        self.started_ = [False] * P
        self.reserved_ = self.block_ * P  # static items not yet handed out

    def chunk(self, view: LoopView, worker: int) -> int:
        if not self.started_[worker]:
            self.started_[worker] = True
            self.reserved_ -= self.block_
            if self.block_ > 0:
                return self.block_
        pool = view.remaining - self.reserved_
        n = ceil_div(pool, view.n_nodes) if pool > 0 else 0
        return n if n > self.min_chunk else self.min_chunk
