"""Trapezoid rules: chunk sizes that fall linearly from a first size f to a last size l (TSS), and
its batched form for heterogeneous clusters (TFSS)."""

from __future__ import annotations

from numbers import Integral

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval, Options
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["Trapezoid", "TrapezoidFactoring"]


class _TrapezoidSequence:
    """The TSS chunk sequence for a loop of *n_items* on *n_nodes*: sizes c_k, k = 0, 1, ... (*field*
    names *first* in an error)."""

    __slots__ = ("first", "last", "n_chunks", "integer", "step")

    def __init__(self, n_items: int, n_nodes: int, first: int | None, last: int, decrement: str,
                 field: str):
        f = max(ceil_div(n_items, 2 * n_nodes), last) if first is None else first
        if f < last:
            raise ConfigError(field, f, f"an int >= last ({last})")
        self.first = f
        self.last = last
        self.n_chunks = ceil_div(2 * n_items, f + last)  # n = ⌈2N/(f+l)⌉
        self.integer = decrement == "integer"
        # the integer decrement ⌊δ⌋ = ⌊(f−l)/(n−1)⌋ (0 when n = 1: one chunk of f)
        self.step = (f - last) // (self.n_chunks - 1) if self.n_chunks > 1 else 0

    def size(self, k: int) -> int:
        """c_k: f − k·⌊δ⌋ (integer) or ⌊f − k·δ⌋ (real, computed exactly), never below l."""
        if self.integer:
            return max(self.first - k * self.step, self.last)
        n = self.n_chunks
        if k >= n - 1:
            return self.first if n == 1 and k == 0 else self.last
        f, l = self.first, self.last
        return (f * (n - 1) - k * (f - l)) // (n - 1)


@register
class Trapezoid(ChunkingBalancer):
    """TSS, trapezoid self-scheduling: chunk k = f − k·δ, falling linearly from *first* to *last*.

    Source: Tzen & Ni 1993, "Trapezoid self-scheduling: a practical scheduling scheme for parallel
    compilers", IEEE TPDS 4(1):87–98: TSS(f, l) with f = ⌈N/(2P)⌉ and l = 1 by default,
    n = ⌈2N/(f+l)⌉ chunks and decrement δ = (f−l)/(n−1).

    Rounding, *decrement*: ``"integer"`` (default) subtracts the integer ⌊δ⌋ each time, chunk
    k = f − k·⌊δ⌋, as the published example does: N = 1000, P = 4 gives f = 125, n = 16,
    δ = 124/15 = 8.27 → 8, so 125, 117, 109, …, 37 (twelve chunks, 972 items) and the remainder 28
    (LLVM's OpenMP runtime truncates δ the same way). With ⌊δ⌋ every chunk is at or above the
    real-valued line, so the n chunks always cover N, usually in fewer than n; when f − l < n − 1,
    ⌊δ⌋ = 0 and TSS is fixed-size chunking at f. ``"real"`` keeps the real-valued δ: chunk
    k = ⌊f − k·δ⌋, evaluated exactly as ⌊(f·(n−1) − k·(f−l)) / (n−1)⌋, so chunk n−1 is l (for the
    example: 125, 116, 108, 100, 91, …); flooring can leave a few items after the n planned chunks,
    which go out in chunks of l. Either way no chunk is below l. A *first* below *last* raises
    ConfigError; the default f is raised to l if N/(2P) < l.

    Helps: like GSS it shrinks chunks, but linearly, so the first chunks are half GSS's and the
    number of chunks is known in advance (at most n), with a cheap O(1) rule. Backfires: the linear
    decrease is blind to the actual speeds; on strongly heterogeneous or loaded workers the last
    chunks can still be too large (l is the only knob), and with the integer decrement on a short
    loop (f − l < n − 1) the chunks do not shrink at all.
    """

    name = "tss"
    source = "Tzen & Ni 1993, IEEE TPDS 4(1):87–98"
    taxonomy = request_driven("chunk count", "linearly decreasing sizes f → l")
    reads_measurements = False
    _parameter_constraints = {"first": [None, Interval(Integral, 1, None)],
                              "last": [Interval(Integral, 1, None)],
                              "decrement": [Options("integer", "real")]}

    def __init__(self, *, first: int | None = None, last: int = 1, decrement: str = "integer"):
        self.first = first
        self.last = last
        self.decrement = decrement  # "integer": ⌊δ⌋, the published example's; "real": δ itself

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.sequence_ = _TrapezoidSequence(view.n_items, view.n_nodes, self.first, self.last,
                                            self.decrement, self.param_field("first"))
        self.issued_ = 0

    def chunk(self, view: LoopView, worker: int) -> int:
        k = self.issued_
        self.issued_ = k + 1
        return self.sequence_.size(k)


@register
class TrapezoidFactoring(Trapezoid):
    """TFSS, trapezoid factoring self-scheduling: batches of P equal chunks, each the mean of the
    next P chunks of TSS.

    Source: Chronopoulos, Andonie, Benche & Grosu 2001, "A class of loop self-scheduling for
    heterogeneous clusters", IEEE CLUSTER 2001 (TFSS). Batch b (requests bP … bP+P−1) hands out
    ⌈(c_{bP} + … + c_{bP+P−1}) / P⌉ items per chunk, c_k being the TSS sequence of :class:`Trapezoid`
    (same *first*, *last* and *decrement*; the integer decrement by default). The published example,
    N = 1000, P = 4: TSS 125 117 109 101 | 93 85 77 69 | 61 53 45 37 | 29 … gives 113 ×4, 81 ×4,
    49 ×4, then 17 and the remainder 11. The mean is rounded up (our choice; the paper does not
    say, and the example's means are whole), so a batch never assigns fewer items than the P TSS
    chunks it replaces.

    Helps: TSS's predictable decrease with factoring's batches, so each batch spreads evenly over
    the P workers and the early chunks are smaller than GSS's. Backfires: the batch is P equal
    chunks, blind to speed: a slow worker's chunk in a late batch can still decide the end.
    """

    name = "tfss"
    source = "Chronopoulos, Andonie, Benche & Grosu 2001, IEEE CLUSTER"
    taxonomy = request_driven("chunk count", "batches of P means of TSS chunks")

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.batch_chunk_ = 0

    def chunk(self, view: LoopView, worker: int) -> int:
        P = view.n_nodes
        k = self.issued_
        if k % P == 0:
            size = self.sequence_.size
            self.batch_chunk_ = ceil_div(sum(size(k + j) for j in range(P)), P)
        self.issued_ = k + 1
        return self.batch_chunk_
