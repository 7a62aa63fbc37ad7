"""Random placement: each task on a node drawn uniformly (the supermarket model's d = 1)."""

from __future__ import annotations

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers._draw import RandomizedPlacement

__all__ = ["RandomPlacement"]


@register
class RandomPlacement(RandomizedPlacement):
    """Random: each task on a node drawn uniformly from all nodes (the origin included).

    Source: the supermarket model with one choice (003 §3.2, Mitzenmacher 1996/2001: every server an
    M/M/1 queue at load λ). Registered as ``random-place``: ``random`` is the migration kind's random
    placement (001), and balancer names are one namespace.

    Helps: no information at all, no hot spot. Backfires: queues as long as with no balancing at
    equal rates (E[Q] = λ/(1−λ), 19 at λ = 0.95 against 3.2 with two choices).
    """

    name = "random-place"
    source = "003 §3.2 (supermarket model, d = 1); Mitzenmacher 2001"
    taxonomy = Taxonomy("arrival", "distributed", "none", "one task", "a node uniformly at random")
    reads_loads = False

    def place(self, view) -> int:
        return self.draws_.below(view.n_nodes)
