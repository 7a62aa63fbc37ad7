"""Adaptive factoring (AF): chunk sizes from each worker's measured mean and variance of item time."""

from __future__ import annotations

import math
from numbers import Integral

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import request_driven, round_half_up

__all__ = ["AdaptiveFactoring"]


@register
class AdaptiveFactoring(ChunkingBalancer):
    """AF, adaptive factoring: chunk_i = (D + 2·T·R − √(D² + 4·D·T·R)) / (2·μ_i).

    Source: Banicescu & Liu 2000, "Adaptive factoring: a dynamic scheduling method tuned to the
    rate of weight changes", Proc. High Performance Computing Symposium 2000: with μ_j and σ_j
    the mean and standard deviation of worker j's time per item, measured while the loop runs,
    D = Σ_j σ_j²/μ_j and T = (Σ_j 1/μ_j)⁻¹. μ_i, σ_i are the view's ``mean_item_time(i)`` and
    ``std_item_time(i)`` (cumulative over the worker's chunks). The chunk is rounded to the nearest
    integer (halves up) and kept ≥ *min_chunk*.

    Choices where the paper is silent: a worker without estimates (fewer than two items measured)
    gets a probe chunk of max(*probe*, *min_chunk*) items (default 2, the fewest that give a σ; the
    DLB tool of Cariño & Banicescu probes with its minimum chunk). In D and T, a worker without
    estimates yet counts with the mean μ and mean σ of the measured workers. With σ = 0 the rule
    reduces to chunk_i = R·(1/μ_i)/Σ_j(1/μ_j): worker i's speed share of all that is left.

    Across time steps (``dlbkit.Loop``, the simulator's ``steps``): μ_j, σ_j as a step ends are
    carried to the next, where a worker without estimates of its own in the new step (fewer than
    two items) uses them instead of a probe chunk; once it has its own, they replace the carried ones.

    Helps: adapts to both speed (μ_i) and variability (σ_i) per worker, the whole loop long, so it
    handles heterogeneous, loaded workers and irregular items. Backfires: estimates from the first
    small chunks are noisy and a worker that looks fast early can take a large chunk; computing D
    and T costs O(P) per chunk at the master; with many cheap items the probes are pure overhead.
    """

    name = "af"
    source = "Banicescu & Liu 2000, Proc. HPC Symposium"
    taxonomy = request_driven("measured μ_i, σ_i of item time, per worker",
                              "(D + 2TR − √(D² + 4DTR)) / (2μ_i)")
    _parameter_constraints = {"probe": [Interval(Integral, 1, None)],
                              "min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, probe: int = 2, min_chunk: int = 1):
        self.probe = probe
        self.min_chunk = min_chunk

    carries_state = True

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.carried_ = None  # (μ_j, σ_j) per worker from the previous time step, or None

    def carry(self, view) -> dict:
        """μ_j, σ_j as this step ends (the previous step's for a worker that measured nothing now)."""
        est = [self._estimate(view, j) for j in range(view.n_nodes)]
        return {"mu": [m for m, _ in est], "sigma": [s for _, s in est]}

    def resume(self, state: dict) -> None:
        self.carried_ = list(zip((float(m) for m in state["mu"]), (float(s) for s in state["sigma"])))

    def _estimate(self, view: LoopView, j: int) -> tuple[float, float]:
        m, s = view.mean_item_time(j), view.std_item_time(j)
        if (not (m > 0.0) or math.isnan(s)) and self.carried_ is not None:
            return self.carried_[j]
        return m, s

    def chunk(self, view: LoopView, worker: int) -> int:
        mu_i, sd_i = self._estimate(view, worker)
        if not (mu_i > 0.0) or math.isnan(sd_i):  # no estimate yet (NaN), or a zero time
            return self.probe if self.probe > self.min_chunk else self.min_chunk
        mus, sds = [], []
        for j in range(view.n_nodes):
            m, s = self._estimate(view, j)
            if m > 0.0 and not math.isnan(s):
                mus.append(m)
                sds.append(s)
        missing = view.n_nodes - len(mus)
        D = sum(s * s / m for m, s in zip(mus, sds))
        inv = sum(1.0 / m for m in mus)
        if missing:
            m_fill, s_fill = sum(mus) / len(mus), sum(sds) / len(sds)
            D += missing * s_fill * s_fill / m_fill
            inv += missing / m_fill
        T = 1.0 / inv
        TR = T * view.remaining
        # (D + 2TR − √(D² + 4DTR)) / (2μ_i), in the equal form without cancellation when D ≫ TR
        n = round_half_up(2.0 * TR * TR / (mu_i * (D + 2.0 * TR + math.sqrt(D * D + 4.0 * D * TR))))
        return n if n > self.min_chunk else self.min_chunk
