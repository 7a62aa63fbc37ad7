"""Guided self-scheduling (GSS): each request gets a 1/P share of what is left."""

from __future__ import annotations

from numbers import Integral

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import ceil_div, request_driven

__all__ = ["Guided"]


@register
class Guided(ChunkingBalancer):
    """GSS, guided self-scheduling: chunk = max(⌈R/P⌉, *min_chunk*), R = items not yet assigned.

    Source: Polychronopoulos & Kuck 1987, "Guided self-scheduling: a practical scheduling scheme for
    parallel supercomputers", IEEE Trans. Computers 36(12): the rule ⌈R_i/P⌉, and GSS(k), the
    variant whose chunks never fall below k (*min_chunk*; LB4OMP's chunk parameter).

    Helps: few chunks (about P·ln(N/P)) yet small ones at the end, so workers that start late or
    run slower still finish together; needs no measurement. Backfires: the first chunks are huge
    (N/P): when early items are expensive, or a worker is much slower than the rest, the first
    worker to ask can end long after everyone else (factoring was designed against this).
    """

    name = "gss"
    source = "Polychronopoulos & Kuck 1987, IEEE Trans. Computers 36(12)"
    taxonomy = request_driven("remaining count", "⌈R/P⌉")
    reads_measurements = False
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1):
        self.min_chunk = min_chunk

    def chunk(self, view: LoopView, worker: int) -> int:
        n = ceil_div(view.remaining, view.n_nodes)
        return n if n > self.min_chunk else self.min_chunk
