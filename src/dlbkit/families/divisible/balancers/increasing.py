"""Increasing chunk sizes for heterogeneous clusters: fixed (FISS) or vanishing (VISS) increments per
stage of P chunks."""

from __future__ import annotations

from numbers import Integral

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["FixedIncrease", "VariableIncrease"]

_MAX_STAGE = 64  # VISS: beyond this stage c0·(2 − 2^-s) no longer changes for any integer c0 < 2^63


@register
class FixedIncrease(ChunkingBalancer):
    """FISS, fixed increase self-scheduling: stage s (P chunks) gets C₀ + s·δ items.

    Source: Philip & Das 1997 (FISS, for distributed-memory clusters), with the rule as LB4OMP
    implements it (we could not consult the paper itself): with B stages and X = B + 2,
    C₀ = ⌊N/(X·P)⌋ and δ = ⌊2N(1 − B/X) / (P·B·(B−1))⌋, so the B stages cover about N (the C₀
    terms N·B/X, the increments the rest). *stages* = B defaults to P − 1 as in LB4OMP, but at
    least 2 (δ needs B ≥ 2). C₀ is at least *min_chunk* (LB4OMP's chunk parameter).

    Choice where the paper is silent: the floors can leave items after the B stages; they go out
    in chunks of the last stage's size (C₀ + (B−1)·δ).

    Helps: on a cluster where chunks travel over a network, small first chunks start every worker
    quickly and later, larger chunks cut the number of messages. Backfires: the largest chunks
    come last, exactly when balance matters most; a slow worker holding a last-stage chunk ends
    the loop late.
    """

    name = "fiss"
    source = "Philip & Das 1997 (FISS); LB4OMP 'fiss'"
    taxonomy = request_driven("chunk count", "stages of P chunks, C₀ + s·δ")
    reads_measurements = False
    _parameter_constraints = {"stages": [None, Interval(Integral, 2, None)],
                              "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, stages: int | None = None, min_chunk: int = 1):
        self.stages = stages
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        N, P = view.n_items, view.n_nodes
        B = max(2, P - 1) if self.stages is None else self.stages
        X = B + 2
        self.stages_ = B
        self.first_ = max(self.min_chunk, N // (X * P))
        # δ = ⌊2N(1 − B/X) / (P·B·(B−1))⌋ = ⌊2N·(X − B) / (X·P·B·(B−1))⌋, in integers
        self.increment_ = (2 * N * (X - B)) // (X * P * B * (B - 1))
        self.issued_ = 0

    def chunk(self, view: LoopView, worker: int) -> int:
        s = self.issued_ // view.n_nodes
        self.issued_ += 1
        if s >= self.stages_:
            s = self.stages_ - 1
        return self.first_ + s * self.increment_


@register
class VariableIncrease(ChunkingBalancer):
    """VISS, variable increase self-scheduling: stage s (P chunks) gets ⌊c₀·(1 − 0.5^(s+1))/0.5⌋.

    Source: Philip & Das 1997 (VISS), with the rule as LB4OMP implements it: c₀ = ⌈N/(k·P)⌉ with
    *k* defaulting to P; the stage sizes c₀, 1.5c₀, 1.75c₀, … grow by halving increments towards
    2c₀. Computed exactly in integers as 2c₀ − ⌈c₀/2^s⌉. (LB4OMP's integer division makes its c₀
    ⌊N/(kP)⌋; we keep the ceiling of the rule as the literature states it.)

    Helps: like FISS, small chunks first to start every worker fast, then fewer requests, while
    the chunk never exceeds 2c₀, so the end stays better balanced than FISS's. Backfires: blind to
    speed and remaining work; with small k the chunks are large and the end is unbalanced.
    """

    name = "viss"
    source = "Philip & Das 1997 (VISS); LB4OMP 'viss'"
    taxonomy = request_driven("chunk count", "stages of P chunks, c₀·(2 − 2^-s)")
    reads_measurements = False
    _parameter_constraints = {"k": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, k: int | None = None):
        self.k = k

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        k = view.n_nodes if self.k is None else self.k
        self.first_ = ceil_div(view.n_items, k * view.n_nodes)
        self.issued_ = 0

    def chunk(self, view: LoopView, worker: int) -> int:
        s = self.issued_ // view.n_nodes
        self.issued_ += 1
        if s > _MAX_STAGE:
            s = _MAX_STAGE
        c0 = self.first_
        return 2 * c0 - ((c0 + (1 << s) - 1) >> s)
