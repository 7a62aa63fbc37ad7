"""Random chunk sizes (RND): a baseline that no rule should lose to."""

from __future__ import annotations

from numbers import Integral

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["RandomChunk"]


@register
class RandomChunk(ChunkingBalancer):
    """RND: every chunk's size is drawn uniformly from the integers in [*min_chunk*, *max_chunk*].

    Source: Ciorba, Iwainsky & Buder 2018, "OpenMP loop scheduling revisited: making a case for
    more schedules", IWOMP 2018 (the ``random`` schedule); LB4OMP ``rnd``.

    Choices where the sources are silent: *max_chunk* None means ⌈N/(2P)⌉ (FAC2's largest chunk;
    LB4OMP's default upper bound is N − 1), raised to *min_chunk* if smaller; *max_chunk* below
    *min_chunk* raises ConfigError. Draws come only from the Generator the engine passes to
    ``start`` (same seed, same sizes); calling ``start`` without one raises ConfigError.

    Helps: as a baseline and a stress test; on average it mixes large and small chunks without any
    model. Backfires: a large chunk drawn near the end unbalances the loop; results vary with the
    seed, so compare over repetitions.
    """

    name = "rnd"
    source = "Ciorba, Iwainsky & Buder 2018, IWOMP; LB4OMP 'rnd'"
    taxonomy = request_driven("none", "uniform random in [min_chunk, max_chunk]")
    reads_measurements = False
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)],
                              "max_chunk": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1, max_chunk: int | None = None):
        self.min_chunk = min_chunk
        self.max_chunk = max_chunk

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        if rng is None:
            raise ConfigError(f"the rng passed to {self.name}.start", None,
                              "a numpy.random.Generator (engines pass one)")
        if self.max_chunk is None:
            self.high_ = max(self.min_chunk, ceil_div(view.n_items, 2 * view.n_nodes))
        elif self.max_chunk < self.min_chunk:
            raise ConfigError(self.param_field("max_chunk"), self.max_chunk,
                              f"an int >= min_chunk ({self.min_chunk})")
        else:
            self.high_ = self.max_chunk

    def chunk(self, view: LoopView, worker: int) -> int:
        return int(self.rng_.integers(self.min_chunk, self.high_ + 1))
