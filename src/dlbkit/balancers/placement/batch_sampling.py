"""Batch sampling (Sparrow): probe d·m nodes for a job of m tasks and give the tasks to the least loaded probes."""

from __future__ import annotations

from numbers import Integral

from ...params import Interval
from ..base import Taxonomy
from ..registry import register
from ._draw import RandomizedPlacement, least

__all__ = ["BatchSampling"]


@register
class BatchSampling(RandomizedPlacement):
    """Batch sampling: for a job of m tasks, probe d·m distinct nodes drawn uniformly (all nodes when
    d·m ≥ n) and place the tasks one by one on the probed node of fewest tasks, counting each
    placement (so a probe receives a second task only once every probe has as many); ties broken
    uniformly at random (placements within the batch are counted whatever *update* says: the batch
    shares its probes). For a single task it is d choices without replacement.

    Source: Ousterhout, Wendell, Zaharia & Stoica 2013, "Sparrow: distributed, low latency scheduling"
    (SOSP), §3.2 batch sampling with probe ratio d = 2; late binding (§3.3: a probed worker asks for
    its task when it is free) is approximated by choosing on the probes' queue lengths at placement
    time. Cited by 003 §5.2 as the fix for Nezha's weak parallel batch placement.

    Helps: a batch shares its probes, so its tasks land on the least loaded of d·m nodes instead of
    each on the better of its own d (fewer unlucky tasks; a job waits for its slowest task).
    Backfires: d·m probes per job; queue length is a poor proxy for wait on heterogeneous nodes and
    with long-tailed demands (late binding's strength, not modelled here).
    """

    name = "batch-sampling"
    source = "Ousterhout et al. 2013 (Sparrow) §3.2; 003 §5.2"
    taxonomy = Taxonomy("arrival", "distributed", "d·m probed nodes", "a batch",
                        "the least loaded of the d·m probes, one task at a time")
    _parameter_constraints = {"d": [Interval(Integral, 1, None)]}

    def __init__(self, *, d: int = 2):
        self.d = d  # Sparrow's probe ratio

    def place(self, view) -> int:
        return self.place_batch(view, 1, False)[0]

    def place_batch(self, view, k: int, update: bool = True) -> list[int]:
        n = view.n_nodes
        probes = list(range(n)) if self.d * k >= n else self.draws_.sample(range(n), self.d * k, False)
        q = view.queue
        if k == 1:  # the view may be the engine's own queues: read, never write
            return [least(probes, q.__getitem__, self.draws_)]
        out = []
        for _ in range(k):  # the batch shares its probes: placements within it are always counted
            j = least(probes, q.__getitem__, self.draws_)
            out.append(j)
            q[j] += 1
        return out
