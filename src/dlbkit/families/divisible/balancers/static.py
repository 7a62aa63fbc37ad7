"""Static chunking: the loop divided before it runs, by count or by known speed."""

from __future__ import annotations

import math
from numbers import Integral

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["Static", "Proportional"]


@register
class Static(ChunkingBalancer):
    """STATIC: each worker gets one block of ceil(N/P) items (OpenMP ``schedule(static)``).

    Source: the baseline of loop-scheduling studies (Hummel, Schonberg & Flynn 1992, §1; LB4OMP's
    ``static``). With *size* set, every request (or every round of the round-based mechanism) gets
    *size* items: that is 004's "no balancing" case E4/E5, units "always equally distributed".
    Helps when items cost the same and workers are equal; backfires on any heterogeneity.
    """

    name = "static"
    source = "Hummel, Schonberg & Flynn 1992 §1 (baseline); Sánchez et al. (004) §4, E4/E5"
    taxonomy = Taxonomy("master (once)", "central", "none", "equal blocks", "consecutive items")
    reads_measurements = False
    _parameter_constraints = {"size": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, size: int | None = None):
        self.size = size

    def chunk(self, view: LoopView, worker: int) -> int:
        if self.size is not None:
            return self.size
        return math.ceil(view.n_items / view.n_nodes)


@register
class Proportional(ChunkingBalancer):
    """Static split proportional to the *known* (nominal) worker speeds: worker i gets
    round(N · s_i / Σ s) items once (largest-remainder rounding so the blocks sum to N).

    Source: 004 §1's definition of load balancing, "assign to each processor a load proportional to
    its performance"; the static speed-proportional baseline its note §8 asks for. Ideal when speeds
    are known and constant; blind to background load and to uneven item costs.
    """

    name = "proportional"
    source = "Sánchez et al. (004) §1 definition; notes/004_sanchez.md §8 (static baseline)"
    taxonomy = Taxonomy("master (once)", "central", "global static (nominal speeds)",
                        "blocks proportional to speed", "consecutive items")

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        total = sum(view.speeds)
        exact = [view.n_items * s / total for s in view.speeds]
        blocks = [math.floor(x) for x in exact]
        short = view.n_items - sum(blocks)
        for i in sorted(range(len(exact)), key=lambda i: blocks[i] - exact[i])[:short]:
            blocks[i] += 1
        self.blocks_ = blocks

    def chunk(self, view: LoopView, worker: int) -> int:
        # a worker asking again after its block gets what is left in small pieces (rare: rounding)
        n = self.blocks_[worker]
        self.blocks_[worker] = 1
        return max(n, 1)
