"""Adaptive weighted factoring within one loop: AWF-B, AWF-C, AWF-D, AWF-E.

Weighted factoring whose weights are learned from the measured time per item while the loop runs.
B and D update the weights at every batch boundary, C and E at every chunk; D and E count each
chunk's scheduling overhead in its time (Cariño & Banicescu 2008).
"""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.registry import register
from dlbkit.families.divisible.balancers._common import WeightedPerformance, ceil_div, normalised_weights, request_driven, round_half_up
from dlbkit.families.divisible.balancers.factoring import BatchedFactoring, WeightedFactoring

__all__ = ["AdaptiveWeightedFactoring", "AdaptiveWeightedFactoringB", "AdaptiveWeightedFactoringC", "AdaptiveWeightedFactoringD",
           "AdaptiveWeightedFactoringE"]

_SOURCE = ("Cariño & Banicescu 2008, J. Supercomputing 44(1):41–63; weights after Banicescu, "
           "Velusamy & Devaprasad 2003, Cluster Computing 6(3)")

_COMMON_DOC = """
    The rule, for all four variants (Cariño & Banicescu 2008, "Dynamic load balancing with adaptive
    factoring methods in scientific applications", J. Supercomputing 44(1):41–63): worker i's
    chunk is w_i · ⌈R/(2P)⌉ (FAC2's chunk times a weight), rounded to the nearest integer (halves
    up), at least *min_chunk*. The weights are w_i = (π̄/π_i) · P / Σ_j (π̄/π_j) = P·(1/π_i) / Σ_j 1/π_j,
    where π_i is worker i's weighted average time per item: π_i = Σ_k k·t_ik / Σ_k k·n_ik over its
    completed chunks k = 1, 2, … (the k-th result weighs k, so recent behaviour dominates; the
    "weighted average performance" of Banicescu, Velusamy & Devaprasad 2003, as the authors' DLB
    tool computes it). AWF-B/C time a chunk by its compute time, AWF-D/E by compute time plus the
    scheduling overhead the view reports for it (``overhead_time``: from asking to starting).

    Across time steps (``dlbkit.Loop``, the simulator's ``steps``): the weights learned by the end
    of a step are the next step's prior (its weights before any result, and the scaled rate of a
    worker not measured yet), so a step starts where the previous one ended instead of from the
    nominal speeds (``carry``/``resume``).

    Choices where the paper is silent: a worker with no result yet is assumed to run at its nominal
    speed (the view's ``speeds``) scaled to the measured workers, r_i = s_i · mean_j(r_j/s_j); so
    before any result the weights are the normalised nominal speeds and AWF starts as WF (the
    DLB tool instead gives such a worker a minimum-size probe chunk). The view's NaN means are
    never read: the rates come from the cumulative counters directly.

    Helps: speed differences that are unknown, wrong or changing (background load on a
    non-dedicated cluster) are learned within the loop, without a separate profiling run.
    Backfires: weights learned from few chunks are noisy; a worker slowed only briefly keeps a small
    weight until new results arrive; and each weight update costs O(P) at the master.
    """


class _LearnedWeights:
    """What every AWF variant shares: its parameter and the weights it learns (a mixin)."""

    with_overhead: ClassVar[bool] = False
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1):
        self.min_chunk = min_chunk

    carries_state = True

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.prior_ = normalised_weights(view.speeds, view.n_nodes, "nominal speeds of the view")
        self.performance_ = WeightedPerformance(view.n_nodes, self.with_overhead)
        self.weights_ = list(self.prior_)

    def carry(self, view) -> dict:
        """The weights learned by the end of this run: the next time step starts from them."""
        self.performance_.sync(view)
        return {"weights": [float(w) for w in self.performance_.weights(self.prior_)]}

    def resume(self, state: dict) -> None:
        """The previous step's weights replace the nominal speeds as the prior (a worker not measured
        yet in this step runs at its learned weight; before any result the weights are these)."""
        self.prior_ = normalised_weights(state["weights"], len(self.prior_), "carried weights")
        self.weights_ = list(self.prior_)


class _BatchAWF(_LearnedWeights, BatchedFactoring):
    def _batch_chunk(self, view: LoopView) -> int:
        self.weights_ = self.performance_.weights(self.prior_)  # weights change only here
        return ceil_div(view.remaining, 2 * view.n_nodes)

    def _share(self, view: LoopView, worker: int) -> int:
        return round_half_up(self.weights_[worker] * self.batch_chunk_)

    def chunk(self, view: LoopView, worker: int) -> int:
        self.performance_.sync(view)  # book each result as it arrives (its index k matters)
        return super().chunk(view, worker)


class _ChunkAWF(_LearnedWeights, ChunkingBalancer):
    def chunk(self, view: LoopView, worker: int) -> int:
        self.performance_.sync(view)
        self.weights_ = self.performance_.weights(self.prior_)
        n = round_half_up(self.weights_[worker] * ceil_div(view.remaining, 2 * view.n_nodes))
        return n if n > self.min_chunk else self.min_chunk


@register
class AdaptiveWeightedFactoringB(_BatchAWF):
    __doc__ = """AWF-B, batch adaptive weighted factoring: weights (from compute times) are updated at
    each batch boundary; a batch holds P·⌈R/(2P)⌉ items at its start, as in FAC2, and each request
    takes w_i·⌈R/(2P)⌉ of it (see :class:`~dlbkit.families.divisible.balancers.factoring.BatchedFactoring`).
    """ + _COMMON_DOC

    name = "awf-b"
    source = _SOURCE + " (AWF-B)"
    taxonomy = request_driven("measured time per item, per worker",
                              "batches of w_i × ⌈R/(2P)⌉, weights per batch")
    with_overhead = False


@register
class AdaptiveWeightedFactoringC(_ChunkAWF):
    __doc__ = """AWF-C, chunk adaptive weighted factoring: weights (from compute times) are updated
    before every chunk, and the FAC2 base ⌈R/(2P)⌉ is taken from the R left at that request (no
    batches), as in the authors' DLB tool.
    """ + _COMMON_DOC

    name = "awf-c"
    source = _SOURCE + " (AWF-C)"
    taxonomy = request_driven("measured time per item, per worker", "w_i × ⌈R/(2P)⌉, weights per chunk")
    with_overhead = False


@register
class AdaptiveWeightedFactoringD(_BatchAWF):
    __doc__ = """AWF-D: AWF-B with each chunk's time including its scheduling overhead (weights updated
    at each batch boundary).
    """ + _COMMON_DOC

    name = "awf-d"
    source = _SOURCE + " (AWF-D)"
    taxonomy = request_driven("measured time per item incl. overhead, per worker",
                              "batches of w_i × ⌈R/(2P)⌉, weights per batch")
    with_overhead = True


@register
class AdaptiveWeightedFactoringE(_ChunkAWF):
    __doc__ = """AWF-E: AWF-C with each chunk's time including its scheduling overhead (weights updated
    before every chunk).
    """ + _COMMON_DOC

    name = "awf-e"
    source = _SOURCE + " (AWF-E)"
    taxonomy = request_driven("measured time per item incl. overhead, per worker",
                              "w_i × ⌈R/(2P)⌉, weights per chunk")
    with_overhead = True


@register
class AdaptiveWeightedFactoring(WeightedFactoring):
    """AWF, time-stepping adaptive weighted factoring: WF within a time step, its weights learned
    between time steps.

    Source: Banicescu, Velusamy & Devaprasad 2003, "On the scalability of dynamic scheduling
    scientific applications with adaptive weighted factoring", Cluster Computing 6(3):215–226
    (AWF for time-stepping applications: the same parallel loop runs once per time step; the
    weights measured in step t are used from the start of step t+1). Within a step it is WF
    (Hummel et al. 1996): batches of P·⌈R/(2P)⌉ items, worker i's chunk w_i·⌈R/(2P)⌉, rounded
    half up, cut to the batch, at least *min_chunk*; the weights do not change within a step. At the
    end of step t every worker's **weighted average performance** is π_i = Σ_{s≤t} s·T_is / Σ_{s≤t}
    s·N_is (T_is seconds computing N_is items in step s: a later step weighs more), and the weights
    of step t + 1 are w_i = P·(1/π_i) / Σ_j (1/π_j). In step 1 the weights are the nominal speeds
    normalised (WF's); a worker that computed nothing in any step so far keeps its nominal speed,
    scaled to the measured ones (as AWF-B–E do within a loop).

    Helps: a time-stepping loop on workers whose speeds are unknown or drift slowly: after one
    step the batches are already weighted right, with FAC2's few chunks. Backfires: a change within
    a step is seen only at the next one (AWF-B/C adapt within the loop), and the step-weighted
    average remembers a worker's old speed for several steps after it changes.
    """

    name = "awf"
    source = ("Banicescu, Velusamy & Devaprasad 2003, Cluster Computing 6(3) (time-stepping AWF); "
              "within a step WF, Hummel et al. 1996")
    taxonomy = request_driven("measured time per item per worker, over past time steps",
                              "batches of w_i × ⌈R/(2P)⌉, weights per time step")
    reads_measurements = True  # the step's measurements set the next step's weights
    carries_state = True
    _parameter_constraints = {"min_chunk": [Interval(Integral, 1, None)]}

    def __init__(self, *, min_chunk: int = 1):
        self.min_chunk = min_chunk

    def start(self, view, rng=None) -> None:
        BatchedFactoring.start(self, view, rng)
        self.weights_ = normalised_weights(view.speeds, view.n_nodes, "nominal speeds of the view")
        self.steps_ = 0  # time steps measured so far
        self.num_ = [0.0] * view.n_nodes  # Σ_s s·T_is
        self.den_ = [0.0] * view.n_nodes  # Σ_s s·N_is

    def carry(self, view) -> dict:
        """This step's measurements booked with weight s = its index; the next step's weights."""
        s = self.steps_ + 1
        num = [a + s * float(t) for a, t in zip(self.num_, view.compute_time)]
        den = [a + s * float(n) for a, n in zip(self.den_, view.items_done)]
        perf = WeightedPerformance(view.n_nodes, False)
        perf.num, perf.den = num, den
        prior = normalised_weights(view.speeds, view.n_nodes, "nominal speeds of the view")
        return {"steps": s, "num": num, "den": den, "weights": [float(w) for w in perf.weights(prior)]}

    def resume(self, state: dict) -> None:
        self.steps_ = int(state["steps"])
        self.num_ = [float(x) for x in state["num"]]
        self.den_ = [float(x) for x in state["den"]]
        self.weights_ = normalised_weights(state["weights"], len(self.weights_), "carried weights")
