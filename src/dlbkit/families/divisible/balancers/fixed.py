"""Fixed-size chunking: one chunk size for the whole loop, chosen before it runs (FSC, mFSC)."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["FixedSize", "ModifiedFixedSize"]

#: mFSC's rounding offset: LB4OMP adds 0.55 to t·ln2/ln t and truncates (kmp_dispatch.cpp, kmp_sch_mfsc)
MFSC_OFFSET = 0.55


@register
class FixedSize(ChunkingBalancer):
    """FSC, fixed-size chunking: every chunk is K = ⌈(√2·N·h / (σ·P·√(ln P)))^(2/3)⌉ items.

    Source: Kruskal & Weiss 1985, "Allocating independent subtasks on parallel processors", IEEE
    Trans. Software Eng. SE-11(10):1001–1016, the optimal fixed chunk K_opt for N items of
    independent, identically distributed times with standard deviation *sigma* (seconds) on P
    workers, *h* seconds of overhead per chunk. Rounded up as in DLS4LB.

    Choices where the paper is silent: it gives no default; ours, h = 0.01 s and σ = 1 s, fit the
    simulator's default item (1 work unit at speed 1) with a modest request overhead, so set both
    for a real loop. The chunk is capped at ⌈N/P⌉ (more cannot help) and is ⌈N/P⌉ when P = 1 or
    σ = 0, where the formula is infinite. The formula is asymptotic (large N, large P).

    Helps: with known, stable h and σ, the best fixed trade-off between overhead (few chunks) and
    balance (small chunks), at O(1) cost per request. Backfires: it ignores speed differences and
    the remaining work, so a slow worker's last chunk or a wrong σ leaves others idle; K is fixed
    for the whole loop, so either the start pays too much overhead or the end is unbalanced.
    """

    name = "fsc"
    source = "Kruskal & Weiss 1985, IEEE TSE 11(10)"
    taxonomy = request_driven("overhead h and item-time σ (parameters)", "fixed K_opt")
    reads_measurements = False
    _parameter_constraints = {"h": [Interval(Real, 0, None, closed="left")],
                              "sigma": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, *, h: float = 0.01, sigma: float = 1.0):
        self.h = h
        self.sigma = sigma

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        N, P = view.n_items, view.n_nodes
        cap = ceil_div(N, P)
        if P == 1 or self.sigma == 0:
            self.size_ = cap
        else:
            k = (math.sqrt(2.0) * N * self.h / (self.sigma * P * math.sqrt(math.log(P)))) ** (2.0 / 3.0)
            self.size_ = min(cap, max(1, math.ceil(k)))

    def chunk(self, view: LoopView, worker: int) -> int:
        return self.size_


@register
class ModifiedFixedSize(ChunkingBalancer):
    """mFSC, modified fixed-size chunking: every chunk is ⌊t·ln 2 / ln t + 0.55⌋ items, t = ⌈N/P⌉.

    Source: the "modified FSC" of Cariño & Banicescu's DLB tool (2008; as carried into DLS4LB and
    LB4OMP), a fixed chunk that needs no h or σ: it makes the number of chunks, N/K ≈ P·log₂(N/P),
    equal to FAC2's. Rounded as LB4OMP rounds it (its ``kmp_sch_mfsc`` case truncates the value
    plus 0.55), so a fractional part of 0.45 or more rounds up: t = 10 gives 3.01 → 3, t = 4 gives
    2 → 2, t = 7 gives 2.49 → 3 where rounding to the nearest would give 2. t = 1 gives 1 (the
    formula divides by ln 1 = 0), as does t = 0 (an empty loop); at least *min_chunk* (LB4OMP's chunk
    parameter).

    Helps: FSC's O(1) simplicity with FAC2's number of chunks and no profiling. Backfires: a fixed
    chunk cannot follow the remaining work, so the end of the loop is only as balanced as one
    chunk is small; ignores speed differences.
    """

    name = "mfsc"
    source = "Cariño & Banicescu 2008 (DLB tool 'modified FSC'); LB4OMP/DLS4LB 'mFSC'"
    taxonomy = request_driven("chunk count", "fixed t·ln2/ln t, t = ⌈N/P⌉")
    reads_measurements = False
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1):
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        t = ceil_div(view.n_items, view.n_nodes)
        # t = 0: an empty loop (a persistent pool's empty step starts the rule too); no chunk is asked
        k = 1 if t <= 1 else math.floor(t * math.log(2.0) / math.log(t) + MFSC_OFFSET)
        self.size_ = max(k, self.min_chunk)

    def chunk(self, view: LoopView, worker: int) -> int:
        return self.size_
