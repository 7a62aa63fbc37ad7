"""Self-scheduling rules whose chunk depends only on counts: SS, GSS, TSS."""

from __future__ import annotations

from numbers import Integral

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["SelfScheduling"]

_SELF = Taxonomy("receiver (idle worker requests)", "central (master)", "none", "fixed rule", "next items")


@register
class SelfScheduling(ChunkingBalancer):
    """SS, pure self-scheduling: every request gets *size* items (1 in the classic form).

    Source: Tang & Yew 1986 (self-scheduling of loops); LB4OMP ``ss``. Best possible balance, at the
    price of one request per *size* items: the scheduling overhead dominates when items are cheap.
    """

    name = "ss"
    source = "Tang & Yew 1986; LB4OMP/DLS4LB 'SS'"
    taxonomy = _SELF
    reads_measurements = False
    _parameter_constraints = {"size": [Interval(Integral, 1, None)]}

    def __init__(self, *, size: int = 1):
        self.size = size

    def chunk(self, view: LoopView, worker: int) -> int:
        return self.size
