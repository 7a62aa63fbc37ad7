"""Tapering (TAP): guided self-scheduling made cautious by the variability of item times."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import pooled_mean_std, request_driven

__all__ = ["Taper"]


@register
class Taper(ChunkingBalancer):
    """TAP, tapering: chunk = ⌈T + v²/2 − v·√(2T + v²/4)⌉ with T = R/P and v = α·σ/μ.

    Source: Lucco 1992, "A dynamic scheduling method for irregular parallel programs", PLDI '92:
    the GSS share T = R/P reduced so that, with item times of mean μ and standard deviation σ,
    a chunk rarely runs past the expected finish; α (*alpha*) sets the confidence.

    Choices where the paper or our reading of it is silent: *alpha* defaults to 1.3 (about a 90%
    one-sided normal quantile). *mu* and *sigma* may be given (a profiling run); left as None, each
    is estimated at every request from the view, pooled over all workers, and until two items
    have been measured v = 0, which makes TAP exactly GSS. Chunks are at least *min_chunk*.

    Helps: as few chunks as GSS when items are regular (v ≈ 0), smaller ones when they vary, at
    O(1) cost. Backfires: one σ/μ for all workers: on a heterogeneous cluster the pooled σ mixes
    speeds and over-splits, and it gives equal chunks to slow and fast workers.
    """

    name = "tap"
    source = "Lucco 1992, PLDI '92"
    taxonomy = request_driven("μ, σ of item time (given or pooled estimate)", "T + v²/2 − v√(2T + v²/4)")
    _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="left")],
                              "mu": [None, Interval(Real, 0, None, closed="neither")],
                              "sigma": [None, Interval(Real, 0, None, closed="left")],
                              "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, alpha: float = 1.3, mu: float | None = None, sigma: float | None = None,
                 min_chunk: int = 1):
        self.alpha = alpha
        self.mu = mu
        self.sigma = sigma
        self.min_chunk = min_chunk

    def chunk(self, view: LoopView, worker: int) -> int:
        mu, sigma = self.mu, self.sigma
        if mu is None or sigma is None:
            est_mu, est_sigma = pooled_mean_std(view)
            mu = est_mu if mu is None else mu
            sigma = est_sigma if sigma is None else sigma
        v = 0.0 if math.isnan(mu) or math.isnan(sigma) or mu <= 0.0 else self.alpha * sigma / mu
        T = view.remaining / view.n_nodes
        n = math.ceil(T + v * v / 2.0 - v * math.sqrt(2.0 * T + v * v / 4.0))
        return n if n > self.min_chunk else self.min_chunk
