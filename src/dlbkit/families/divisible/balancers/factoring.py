"""Factoring: the loop is handed out in batches, each a fraction of what is left, split into P chunks
(FAC with known μ and σ, the practical FAC2, and weighted factoring WF for unequal workers)."""

from __future__ import annotations

from abc import abstractmethod

import math
from numbers import Integral, Real

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, normalised_weights, pooled_mean_std, request_driven, round_half_up

__all__ = ["Factoring", "Factoring2", "WeightedFactoring", "BatchedFactoring"]


class BatchedFactoring(ChunkingBalancer):
    """Base of the batch rules (FAC, FAC2, WF, AWF-B/D); not registered.

    At the start of a batch, :meth:`_batch_chunk` gives the batch's chunk size c (never below
    *min_chunk*) and the batch holds P·c items. Each request then gets :meth:`_share` items (c, or
    c times the worker's weight), cut to what the batch still holds; the next request after the
    batch is used up opens a new batch from the then remaining R. For equal shares this is exactly
    "P chunks of c per batch"; for weighted shares the batch keeps its total, as in Cariño &
    Banicescu's DLB tool. Subclasses declare *min_chunk*.
    """

    min_chunk: int

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.batches_ = 0  # batches opened so far
        self.batch_chunk_ = 0  # c of the current batch
        self.batch_left_ = 0  # items the current batch has not handed out yet

    @abstractmethod
    def _batch_chunk(self, view: LoopView) -> int:
        """The chunk size c of a batch opening now (the rule that distinguishes FAC, FAC2, AWF)."""

    def _new_batch(self, view: LoopView) -> None:
        c = self._batch_chunk(view)
        self.batch_chunk_ = c if c > self.min_chunk else self.min_chunk
        self.batch_left_ = view.n_nodes * self.batch_chunk_
        self.batches_ += 1

    def _share(self, view: LoopView, worker: int) -> int:
        return self.batch_chunk_

    def chunk(self, view: LoopView, worker: int) -> int:
        if self.batch_left_ <= 0:
            self._new_batch(view)
        n = self._share(view, worker)
        if n > self.batch_left_:
            n = self.batch_left_
        if n < self.min_chunk:
            n = self.min_chunk
        self.batch_left_ -= n
        return n


@register
class Factoring(BatchedFactoring):
    """FAC, factoring: batches of P chunks of ⌈R_j / (x_j·P)⌉, with x_j from μ and σ.

    Source: Hummel, Schonberg & Flynn 1992, "Factoring: a method for scheduling parallel loops",
    CACM 35(8):90–101: at the start of batch j with R_j items left,
    b_j = P·σ / (2μ·√R_j), x_j = 1 + b_j² + b_j·√(b_j² + 2), chunk = ⌈R_j/(x_j·P)⌉, where μ and σ are
    the mean and standard deviation of an item's execution time. Only σ/μ matters.

    Where the paper assumes μ and σ known (a profiling run), *mu* and *sigma* may be given. Left as
    None (our choice), each is estimated at every batch start from the view, pooled over all
    workers (measured seconds per item); until two items have been measured x_j = 2, i.e. FAC2's
    batch. σ = 0 gives x = 1: one batch of ⌈N/P⌉, the static schedule, as the analysis intends.

    Helps: the batch shrinks just fast enough that the probability of one chunk finishing far
    after the others stays small, for any σ/μ, with few chunks. Backfires: pooled σ also measures
    the workers' differing speeds, so on a heterogeneous cluster it over-splits; and the P chunks of
    a batch are equal, so a slow worker still gets as much as a fast one (see WF, AWF, AF).
    """

    name = "fac"
    source = "Hummel, Schonberg & Flynn 1992, CACM 35(8)"
    taxonomy = request_driven("μ, σ of item time (given or pooled estimate)", "batches of ⌈R/(x·P)⌉")
    _parameter_constraints = {"mu": [None, Interval(Real, 0, None, closed="neither")],
                              "sigma": [None, Interval(Real, 0, None, closed="left")],
                              "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, mu: float | None = None, sigma: float | None = None, min_chunk: int = 1):
        self.mu = mu
        self.sigma = sigma
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.x_ = math.nan  # x_j of the current batch

    def _batch_chunk(self, view: LoopView) -> int:
        P, R = view.n_nodes, view.remaining
        mu, sigma = self.mu, self.sigma
        if mu is None or sigma is None:
            est_mu, est_sigma = pooled_mean_std(view)
            mu = est_mu if mu is None else mu
            sigma = est_sigma if sigma is None else sigma
        if math.isnan(mu) or math.isnan(sigma) or mu <= 0.0:
            self.x_ = 2.0
            return ceil_div(R, 2 * P)
        b = P * sigma / (2.0 * mu * math.sqrt(R))
        self.x_ = 1.0 + b * b + b * math.sqrt(b * b + 2.0)
        return math.ceil(R / (self.x_ * P))


@register
class Factoring2(BatchedFactoring):
    """FAC2, practical factoring: each batch is P chunks of ⌈R/(2P)⌉, half of what is left.

    Source: Hummel, Schonberg & Flynn 1992, CACM 35(8), the x = 2 rule recommended when μ and σ
    are unknown ("half of the remaining iterations per batch"); LB4OMP/DLS4LB ``fac2``.
    *min_chunk* (LB4OMP's chunk parameter) bounds chunks from below.

    Helps: robust default: about P·log₂(N/P) chunks, and the last batches are small enough to
    absorb moderate item-cost variance and late starts. Backfires: equal chunks within a batch, so
    on workers of very different speed the first batch (N/(2P) each) already decides the makespan:
    the slowest worker's first chunk can outlast everything else.
    """

    name = "fac2"
    source = "Hummel, Schonberg & Flynn 1992, CACM 35(8) (x = 2)"
    taxonomy = request_driven("remaining count", "batches of P × ⌈R/(2P)⌉")
    reads_measurements = False
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1):
        self.min_chunk = min_chunk

    def _batch_chunk(self, view: LoopView) -> int:
        return ceil_div(view.remaining, 2 * view.n_nodes)


@register
class WeightedFactoring(BatchedFactoring):
    """WF, weighted factoring: FAC2's batches, worker i's chunk scaled by its fixed weight w_i.

    Source: Hummel, Schmidt, Uma & Wein 1996, "Load-sharing in heterogeneous systems via weighted
    factoring", SPAA '96: chunk_i = w_i · ⌈R_j/(2P)⌉ in batch j, Σ w_i = P. Weights come from
    *weights* (any positive numbers, one per worker, normalised to sum to P) or, when None, from the
    view's nominal worker speeds. The product is rounded to the nearest integer (halves up), cut to
    what the batch still holds (see :class:`BatchedFactoring`), and kept ≥ *min_chunk*.

    Helps: a known, constant speed difference is absorbed from the first batch on. Backfires: the
    weights never change, so background load, a mis-stated speed or items whose cost depends on
    the worker (memory, cache) unbalance it as badly as FAC2 (that is AWF's motivation).
    """

    name = "wf"
    source = "Hummel, Schmidt, Uma & Wein 1996, SPAA '96"
    taxonomy = request_driven("nominal speeds (static weights)", "batches of w_i × ⌈R/(2P)⌉")
    reads_measurements = False
    _parameter_constraints = {"weights": [None, "array"], "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, weights: list[float] | None = None, min_chunk: int = 1):
        self.weights = weights
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        if self.weights is None:
            self.weights_ = normalised_weights(view.speeds, view.n_nodes, "nominal speeds of the view")
        else:
            self.weights_ = normalised_weights(self.weights, view.n_nodes,
                                               self.param_field("weights"))

    def _batch_chunk(self, view: LoopView) -> int:
        return ceil_div(view.remaining, 2 * view.n_nodes)

    def _share(self, view: LoopView, worker: int) -> int:
        return round_half_up(self.weights_[worker] * self.batch_chunk_)
