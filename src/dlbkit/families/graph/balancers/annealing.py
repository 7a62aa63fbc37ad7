"""Simulated annealing over allocations with single-task moves (the thesis's SA baseline, 002 §6.1.2)."""

from __future__ import annotations

import math
from numbers import Integral, Real

from dlbkit.families.graph.model.evaluate import Evaluator
from dlbkit.params import Interval
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import random_move, random_start

__all__ = ["Annealing"]


@register
class Annealing(MappingBalancer):
    """Simulated annealing: random single-task moves, accepted by the Metropolis rule on the
    relative change of makespan, with a geometric temperature schedule; the best allocation seen wins.

    Source: 002 (Sinclair 1993) §6.1.2 and App. D (``sanneal.c``): start temperature 0.9, cooling
    factor 0.8; at each temperature up to 25·m·n allocations are tested, each a single-task move of
    the previous one; a stage ends after 25·m·n tested or 10·n improving allocations. The thesis does
    not state the acceptance function or the stop rule (the note's §9.2); our choices, as the note
    suggests: accept a move of relative change Δ = (new − current)/current with probability
    exp(−Δ/T) (always when Δ ≤ 0), and stop after *patience* stages in a row without a new best (or
    *max_stages*). The start allocation is uniform at random; every draw comes from the engine's
    Generator, so a seed gives one plan. The objective is the graph evaluator's makespan under the
    run's cost model with the list rule (:mod:`dlbkit.families.graph.model.evaluate`), so the plan carries no order.

    Helps: a strong reference for small graphs (the note's §9.4 reproduces the thesis's SA row with
    this objective).
    Backfires: slow (thousands of evaluations per stage); a heuristic, not a bound; results depend on
    the seed. Cost, by the thesis's budget: up to 25·m·n moves per stage, each a whole-graph
    evaluation O(n + e), so O(m·n·(n + e)) per stage: over 60 s of CPU already at 500 tasks on 8
    processors (BENCHMARKS.md, "Mapping balancers at scale"); *moves* and *max_stages* bound it.
    """

    name = "annealing"
    source = "002 §6.1.2, App. D (Sinclair 1993); Kirkpatrick, Gelatt & Vecchi 1983"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its costs",
                        "every task placed once", "random single-task moves, Metropolis acceptance")
    _parameter_constraints = {"t0": [Interval(Real, 0, None, closed="neither")],
                              "cooling": [Interval(Real, 0, 1, closed="neither")],
                              "moves": [None, Interval(Integral, 1, None)],
                              "improving": [None, Interval(Integral, 1, None)],
                              "patience": [Interval(Integral, 1, None)],
                              "max_stages": [Interval(Integral, 1, None)]}

    def __init__(self, *, t0: float = 0.9, cooling: float = 0.8, moves: int | None = None,
                 improving: int | None = None, patience: int = 10, max_stages: int = 100):
        self.t0 = t0
        self.cooling = cooling
        self.moves = moves
        self.improving = improving
        self.patience = patience
        self.max_stages = max_stages

    def map(self, view) -> Plan:
        rng = self.rng_
        n, m, cur = random_start(view, rng)
        if m == 1:
            return Plan(tuple(cur), None, {"stages": 0, "evaluations": 0})
        ev = Evaluator(view.costs)
        cur_v = ev.makespan(cur)
        best, best_v = cur[:], cur_v
        per_stage = self.moves if self.moves is not None else 25 * m * n  # 002 §6.1.2
        enough = self.improving if self.improving is not None else 10 * n  # 002 §6.1.2
        t, stale, stages, evals = self.t0, 0, 0, 1
        while stages < self.max_stages and stale < self.patience:
            stages += 1
            new_best = False
            tested = improving = 0
            while tested < per_stage and improving < enough:
                i, p = random_move(rng, cur, n, m)
                old = cur[i]
                cur[i] = p
                v = ev.makespan(cur)
                tested += 1
                d = (v - cur_v) / cur_v if cur_v > 0 else v - cur_v
                # a temperature cooled below the smallest float is 0: only improving moves pass (and
                # -d / 0 is not computed)
                if d <= 0 or (t > 0 and rng.random() < math.exp(-d / t)):
                    if v < cur_v:
                        improving += 1
                    cur_v = v
                    if v < best_v:
                        best, best_v, new_best = cur[:], v, True
                else:
                    cur[i] = old
            evals += tested
            stale = 0 if new_best else stale + 1
            t *= self.cooling
        return Plan(tuple(best), None, {"estimate": best_v, "stages": stages, "evaluations": evals})
