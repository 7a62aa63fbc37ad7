"""Tabu search over allocations with single-task moves (the thesis's tabu baseline, 002 §6.1.2)."""

from __future__ import annotations

from collections import deque
from numbers import Integral

from dlbkit.families.graph.model.evaluate import Evaluator
from dlbkit.params import Interval
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import random_move, random_start

__all__ = ["TabuSearch"]


@register
class TabuSearch(MappingBalancer):
    """Tabu search: at each step the best of a few random single-task moves that is not tabu (a
    recently moved task), unless a tabu move beats the best allocation found so far (aspiration).

    Source: 002 (Sinclair 1993) §6.1.2 and App. E (``tabu.c``): tabu list of size n/3 ("sizes
    depending on m were no better"); aspiration: a tabu move is allowed if it gives a lower execution
    time; each step takes the best of 20 random single-task moves; up to 20·n·m perturbations (moves
    evaluated). What is tabu is not stated; ours: the task moved, for *tenure* steps (default ⌈n/3⌉).
    The start allocation is uniform at random (the engine's Generator); the objective is the graph
    evaluator's makespan under the run's cost model (list rule), so the plan carries no order.

    Helps: escapes local minima that a greedy descent stops in; deterministic given the seed.
    Backfires: the thesis found it usually behind SA (Tables 6–7); slow on large graphs: the budget
    of 20·n·m moves, each a whole-graph evaluation O(n + e), is O(m·n·(n + e)) by definition (over
    20 s of CPU at 500 tasks on 8 processors; *perturbations* bounds it).
    """

    name = "tabu"
    source = "002 §6.1.2, App. E (Sinclair 1993); Glover 1989"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its costs",
                        "every task placed once", "best of random single-task moves, tabu list, aspiration")
    _parameter_constraints = {"tenure": [None, Interval(Integral, 1, None)],
                              "candidates": [Interval(Integral, 1, None)],
                              "perturbations": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, tenure: int | None = None, candidates: int = 20, perturbations: int | None = None):
        self.tenure = tenure
        self.candidates = candidates
        self.perturbations = perturbations

    def map(self, view) -> Plan:
        rng = self.rng_
        n, m, cur = random_start(view, rng)
        if m == 1:
            return Plan(tuple(cur), None, {"evaluations": 0})
        ev = Evaluator(view.costs)
        best, best_v = cur[:], ev.makespan(cur)
        budget = self.perturbations if self.perturbations is not None else 20 * n * m  # 002 §6.1.2
        tabu: deque = deque(maxlen=self.tenure if self.tenure is not None else max(1, -(-n // 3)))
        evals = 1
        while evals < budget:
            choice = None
            for _ in range(min(self.candidates, budget - evals)):
                i, p = random_move(rng, cur, n, m)
                old = cur[i]
                cur[i] = p
                v = ev.makespan(cur)
                cur[i] = old
                evals += 1
                allowed = i not in tabu or v < best_v  # aspiration
                if allowed and (choice is None or v < choice[0]):
                    choice = (v, i, p)
            if choice is None:
                continue
            v, i, p = choice
            cur[i] = p
            tabu.append(i)
            if v < best_v:
                best, best_v = cur[:], v
        return Plan(tuple(best), None, {"estimate": best_v, "evaluations": evals})
