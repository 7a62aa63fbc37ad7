"""Sánchez et al.'s round-based balancer: Eq. 1 and its communication-aware form (004)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Sequence

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.params import Interval, Options
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["Sanchez", "eq1", "eq1_comm_aware"]

#: ``floor(x + FLOOR_TOLERANCE)``: float noise must not turn 10.0 into 9.999… and cost the slowest
#: worker a unit (notes/004_sanchez.md §2.7.1).
FLOOR_TOLERANCE = 1e-9
#: Measured times at or below this many seconds count as this much, so a per-unit time never divides
#: by zero (note §2.7.3: "t_calc at or below clock resolution → … an epsilon").
TIME_EPSILON = 1e-9


def eq1(units: Sequence[int], exe_time: Sequence[float], calc_time: Sequence[float]) -> list[float]:
    """Eq. 1 of 004 §3 for every worker, unrounded:
    ``n_{j+1}(i) = (t_exemax_j − t_com_j(i)) / t_unit_j(i)`` with ``t_com = t_exe − t_calc`` and
    ``t_unit = t_calc / n_j(i)``; ``t_exemax_j`` is the largest t_exe among workers that had units.

    Workers with no units last round were not measured: their entry is NaN.
    """
    measured = [i for i, n in enumerate(units) if n > 0]
    out = [math.nan] * len(units)
    if not measured:
        return out
    exe_max = max(exe_time[i] for i in measured)
    for i in measured:
        t_com = exe_time[i] - calc_time[i]
        t_unit = max(calc_time[i], TIME_EPSILON) / units[i]
        out[i] = (exe_max - t_com) / t_unit
    return out


def eq1_comm_aware(units: Sequence[int], exe_time: Sequence[float], send_time: Sequence[float],
                   order: Sequence[int]) -> list[float]:
    """The modified Eq. 1 of 004 §3 for low-r applications, unrounded:
    ``n_{j+1}(i) = (t_exemax_j − Σ_{k before i} t_com_s_j(k)) / t_exe_j(i) × n_j(i)``.

    *order* is the send order of the round being planned; the sum runs over the workers placed
    before i in it, with the blocking-send times t_com_s measured last round (*send_time*). The
    paper's ``unit_j(p_i)`` is read as the number of units (note §2.3). Unmeasured workers get NaN.
    """
    measured = [i for i, n in enumerate(units) if n > 0]
    out = [math.nan] * len(units)
    if not measured:
        return out
    exe_max = max(exe_time[i] for i in measured)
    before = 0.0
    for i in order:
        if units[i] > 0:
            out[i] = (exe_max - before) / max(exe_time[i], TIME_EPSILON) * units[i]
        before += send_time[i]
    return out


@register
class Sanchez(ChunkingBalancer):
    """Sánchez, Macías & Suárez's application-level balancer for heterogeneous clusters (004).

    A bulk-synchronous master–worker loop (004 §3, note §2.2): each round the master gives every
    worker a number of information units (items) predicted from that worker's times in the previous
    round only, sends them with blocking sends, and waits for all results. Round 0 gives every worker
    *c0* units ("initially, it distributes the same amount of data among the processes").

    Estimators (note §2.4–2.6):

    * ``"eq1"`` (high r, compute-bound): Eq. 1, ``n = (t_exemax − t_com(i)) / t_unit(i)`` with
      ``t_com = t_exe − t_calc`` and ``t_unit = t_calc / n``. Every worker gets what it can compute in
      last round's longest execution time; the slowest keeps its count, so *c0* sets the length of
      every round. Sent in rank order.
    * ``"eq1_comm_aware"`` (low r, communication-bound): the modified Eq. 1,
      ``n = (t_exemax − Σ_{k sent before i} t_com_s(k)) / t_exe(i) × n(i)``, sent in the order
      *order*: ``"slowest_first"`` (descending last-round t_exe, ties by index; the note's reading of
      the paper's send-order sentence) or ``"rank"``. Round 0 is always sent in rank order.
    * ``"auto"``: chosen once from round 0 by ``r_ = Σ t_calc / Σ t_com_s``: ``"eq1"`` when
      ``r_ >= r_threshold``, else the comm-aware form. The paper's r is calculation ms per KB sent;
      a balancer sees times, not bytes, so we use calculation seconds per second of the master's
      blocking sends, i.e. the paper's r times the send cost in ms/KB (0.82 ms/KB at 10 Mbps). The
      paper gives no threshold: the default 1 (compute as long as the sends) is our own choice.

    Timing (what the view holds, note §2.5 "measurement definition"): ``t_exe(i)`` runs from the
    start of the master's send to i until i's result is back (the note's recommended ``own_send``
    origin; the simulator measures it that way), ``t_calc(i)`` is the worker's own compute time and
    ``t_com_s(i)`` the duration of the blocking send.

    Guards and open details (note §2.7): a worker with no units last round (a newcomer) gets *c0*;
    a zero, negative or non-finite estimate gives *min_units*; counts are capped at *max_units*
    (e.g. memory; 004's PC4 had 32 MB). *rounding*: ``"floor"`` (``floor(x + 1e-9)``), ``"nearest"``
    or ``"carry"`` (each worker keeps its fractional remainder for the next round). When the counts
    exceed what is left, *clip* ``"proportional"`` scales them down keeping their ratios (largest
    remainders get the spare units), ``"in_order"`` fills workers in send order.

    :meth:`chunk` lets the rule drive self-scheduling too: it returns the worker's next Eq. 1 count
    (no rounds there, so it uses every worker's last chunk and compute time, with t_exe = t_calc and
    t_exemax the longest last compute time); a worker not yet measured gets *c0*.

    Helps when nodes differ in speed and messages are small (004 §5.1: "about six times" faster than
    equal chunks). Backfires when sends dominate: taken literally the comm-aware form starves the
    workers sent last (note §2.5 "known pathology"); with ``c0 = 1`` and floor rounding the fast
    workers' truncated counts leave a lasting imbalance (note §2.7.1).

    Parameters
    ----------
    c0 : units per worker in round 0 (1, 10 and 20 in 004 §5.1; 10 is the middle of those).
    estimator : ``"eq1"``, ``"eq1_comm_aware"`` or ``"auto"``.
    r_threshold : the ``"auto"`` switch point (our choice, see above).
    rounding : ``"floor"``, ``"nearest"`` or ``"carry"``.
    min_units : the least a worker gets (1: a worker with none cannot be measured).
    max_units : the most a worker gets in a round, or None.
    order : send order of the comm-aware form, ``"slowest_first"`` or ``"rank"``.
    clip : ``"proportional"`` or ``"in_order"``.

    Attributes
    ----------
    estimator_ : the formula in use (``None`` until ``"auto"`` has seen round 0).
    r_ : the measured ratio that ``"auto"`` compared (NaN otherwise).
    carry_ : per-worker fractional remainders of ``"carry"`` rounding.
    """

    name = "sanchez"
    source = "Sánchez, Macías & Suárez (004) §3 Eq. 1 and modified Eq. 1; notes/004_sanchez.md §2"
    taxonomy = Taxonomy("master, every round (bulk-synchronous)", "central (master)",
                        "global, last round only (t_exe, t_calc, t_com_s per worker)",
                        "Eq. 1: units to finish within last round's longest execution time",
                        "consecutive items")
    _parameter_constraints = {
        "c0": [Interval(Integral, 1, None)],
        "estimator": [Options("eq1", "eq1_comm_aware", "auto")],
        "r_threshold": [Interval(Real, 0, None)],
        "rounding": [Options("floor", "nearest", "carry")],
        "min_units": [Interval(Integral, 1, None)],
        "max_units": [None, Interval(Integral, 1, None)],
        "order": [Options("slowest_first", "rank")],
        "clip": [Options("proportional", "in_order")],
    }

    def __init__(self, *, c0: int = 10, estimator: str = "eq1", r_threshold: float = 1.0,
                 rounding: str = "floor", min_units: int = 1, max_units: int | None = None,
                 order: str = "slowest_first", clip: str = "proportional"):
        self.c0 = c0
        self.estimator = estimator
        self.r_threshold = r_threshold
        self.rounding = rounding
        self.min_units = min_units
        self.max_units = max_units
        self.order = order
        self.clip = clip

    def start(self, view: LoopView, rng=None) -> None:
        super().start(view, rng)
        if self.max_units is not None and self.max_units < self.min_units:
            raise ConfigError(self.param_field("max_units"), self.max_units,
                              f">= min_units ({self.min_units})")
        self.estimator_ = None if self.estimator == "auto" else self.estimator
        self.r_ = math.nan
        self.carry_ = [0.0] * view.n_nodes

    # --- decisions ------------------------------------------------------------------------------
    def allocate(self, view: LoopView) -> list[int]:
        raw = self._estimates(view)
        counts = [self._to_units(x, i) for i, x in enumerate(raw)]
        return self._clip(counts, view.remaining, self.send_order(view))

    def send_order(self, view: LoopView) -> list[int]:
        P = view.n_nodes
        if view.round == 0 or self.order == "rank" or self._formula(view) != "eq1_comm_aware":
            return list(range(P))
        exe = view.exe_time
        return sorted(range(P), key=lambda i: (-exe[i], i))

    def chunk(self, view: LoopView, worker: int) -> int:
        return self._to_units(self._estimates(view)[worker], worker)

    # --- helpers --------------------------------------------------------------------------------
    def _formula(self, view: LoopView) -> str:
        """The estimator in use; ``"auto"`` decides once, from round 0's measurements."""
        if self.estimator_ is None and view.round > 0:
            sent = [i for i, n in enumerate(view.last_chunk) if n > 0]
            calc = sum(view.calc_time[i] for i in sent)
            send = sum(view.send_time[i] for i in sent)
            self.r_ = calc / send if send > TIME_EPSILON else math.inf
            self.estimator_ = "eq1" if self.r_ >= self.r_threshold else "eq1_comm_aware"
        return self.estimator_ or "eq1"

    def _estimates(self, view: LoopView) -> list[float]:
        """Unrounded next counts; NaN for a worker with nothing measured yet (it gets c0)."""
        if view.round > 0:  # the round mechanism: last round's t_exe, t_calc, t_com_s
            if self._formula(view) == "eq1_comm_aware":
                return eq1_comm_aware(view.last_chunk, view.exe_time, view.send_time, self.send_order(view))
            return eq1(view.last_chunk, view.exe_time, view.calc_time)
        # self-scheduling (no rounds): each worker's last chunk, communication unknown (t_exe = t_calc)
        return eq1(view.last_chunk, view.last_time, view.last_time)

    def _to_units(self, x: float, i: int) -> int:
        """Round an estimate and apply the guards of note §2.7.3."""
        if math.isnan(x):
            n = self.c0  # never measured: the initial equal share
        elif not (math.isfinite(x) and x > 0):
            n = self.min_units
            self.carry_[i] = 0.0
        elif self.rounding == "carry":
            y = x + self.carry_[i]
            n = math.floor(y + FLOOR_TOLERANCE)
            self.carry_[i] = max(y - n, 0.0)
        elif self.rounding == "nearest":
            n = math.floor(x + 0.5)
        else:
            n = math.floor(x + FLOOR_TOLERANCE)
        if n < self.min_units or (self.max_units is not None and n > self.max_units):
            n = max(self.min_units, n if self.max_units is None else min(n, self.max_units))
            self.carry_[i] = 0.0
        return int(n)

    def _clip(self, counts: list[int], remaining: int, order: list[int]) -> list[int]:
        """Fit a round's counts into the *remaining* items (note §2.7.2)."""
        total = sum(counts)
        if total <= remaining:
            return counts
        if self.clip == "in_order":
            out = [0] * len(counts)
            left = remaining
            for i in order:
                out[i] = min(counts[i], left)
                left -= out[i]
            return out
        exact = [c * remaining / total for c in counts]
        out = [math.floor(x) for x in exact]
        spare = remaining - sum(out)
        for i in sorted(range(len(exact)), key=lambda i: (out[i] - exact[i], i))[:spare]:
            out[i] += 1
        return out
