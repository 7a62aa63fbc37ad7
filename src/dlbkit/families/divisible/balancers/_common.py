"""Small helpers shared by the chunking rules: exact integer rounding, pooled estimates, weights,
and the per-worker "weighted average performance" that the adaptive weighted factoring rules learn.

Not a balancer: nothing here is registered.
"""

from __future__ import annotations

import math

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.balancers.base import Taxonomy

__all__ = ["ceil_div", "round_half_up", "pooled_mean_std", "normalised_weights", "WeightedPerformance",
           "request_driven"]


def request_driven(information: str, transfer: str) -> Taxonomy:
    """The taxonomy every self-scheduling rule shares: an idle worker asks the master."""
    return Taxonomy("receiver (idle worker requests)", "central (master)", information, transfer,
                    "next items")


def ceil_div(a: int, b: int) -> int:
    """⌈a/b⌉ for integers, exactly (no float round-off)."""
    return -(-a // b)


def round_half_up(x: float) -> int:
    """Nearest integer, halves rounded up (deterministic, unlike Python's banker's ``round``)."""
    return math.floor(x + 0.5)


def pooled_mean_std(view: LoopView) -> tuple[float, float]:
    """Mean and standard deviation of the measured time per item, pooled over every worker.

    NaN before two items have been measured. Pooling mixes the workers' speeds into σ, which is
    what a master that times items without knowing who is fast sees.
    """
    n = sum(view.items_done)
    if n < 2:
        return math.nan, math.nan
    mu = sum(view.compute_time) / n
    var = sum(view.sq_item_time) / n - mu * mu
    return mu, math.sqrt(max(var, 0.0))


def normalised_weights(values, n_nodes: int, field: str) -> list[float]:
    """*values* scaled so that they sum to *n_nodes* (a weight of 1 = an average worker).

    Raise :class:`~dlbkit.errors.ConfigError` naming *field* unless there is one finite, positive
    value per worker.
    """
    vals = [float(v) for v in values]
    if len(vals) != n_nodes:
        raise ConfigError(field, list(values), f"one value per worker ({n_nodes} values)")
    if not all(math.isfinite(v) and v > 0 for v in vals):
        raise ConfigError(field, list(values), "finite values > 0")
    total = sum(vals)
    return [n_nodes * v / total for v in vals]


class WeightedPerformance:
    """Per-worker time per item, averaged with the j-th chunk weighted by j (recent chunks count more).

    π_i = Σ_j j·t_ij / Σ_j j·n_ij over worker i's completed chunks j = 1, 2, ... (t_ij seconds,
    n_ij items): the "weighted average performance" of Banicescu, Velusamy & Devaprasad 2003, as
    Cariño & Banicescu's DLB tool computes it. With *with_overhead*, t_ij also counts the chunk's
    scheduling overhead (the view's ``overhead_time``): AWF-D and AWF-E.

    The tracker reads the view's cumulative counters and books each difference as new chunks; a
    difference of several chunks at once (a coarse view) gets their mean index.
    """

    __slots__ = ("with_overhead", "seen_chunks", "seen_items", "seen_time", "num", "den")

    def __init__(self, n_nodes: int, with_overhead: bool):
        self.with_overhead = with_overhead
        self.seen_chunks = [0] * n_nodes
        self.seen_items = [0] * n_nodes
        self.seen_time = [0.0] * n_nodes
        self.num = [0.0] * n_nodes  # Σ j·t_ij
        self.den = [0.0] * n_nodes  # Σ j·n_ij

    def sync(self, view: LoopView) -> None:
        """Book every chunk result that reached the view since the last call."""
        if view.chunks_done == self.seen_chunks:  # the common case, checked at C speed
            return
        for i, c in enumerate(view.chunks_done):
            k = self.seen_chunks[i]
            if c == k:
                continue
            t = view.compute_time[i] + (view.overhead_time[i] if self.with_overhead else 0.0)
            dn = view.items_done[i] - self.seen_items[i]
            dt = t - self.seen_time[i]
            j = k + (c - k + 1) / 2  # index of the new chunk (mean index if several)
            self.num[i] += j * dt
            self.den[i] += j * dn
            self.seen_chunks[i] = c
            self.seen_items[i] = view.items_done[i]
            self.seen_time[i] = t

    def weights(self, prior: list[float]) -> list[float]:
        """Weights w_i = P·r_i / Σ_j r_j from the measured rates r_i = 1/π_i (items per second).

        A worker without a measurement yet gets r_i = prior_i · mean over measured j of r_j/prior_j
        (its nominal speed, scaled to the measured ones); with no measurement at all the weights
        are the normalised *prior*.
        """
        P = len(prior)
        rates = [d / n if n > 0.0 and d > 0.0 else 0.0 for n, d in zip(self.num, self.den)]
        measured = [i for i in range(P) if rates[i] > 0.0]
        if not measured:
            return list(prior)
        if len(measured) < P:
            scale = sum(rates[i] / prior[i] for i in measured) / len(measured)
            rates = [r if r > 0.0 else prior[i] * scale for i, r in enumerate(rates)]
        total = sum(rates)
        return [P * r / total for r in rates]
