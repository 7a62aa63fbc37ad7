"""Replanning HEFT: HEFT's plan, recomputed over the unplaced tasks when the processors' measured
speeds change (Topcuoglu, Hariri & Wu 2002; Sakellariou & Zhao 2004)."""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real

import numpy as np

from dlbkit.families.graph.model.evaluate import Timeline
from dlbkit.params import Interval, Options
from dlbkit.families.graph.balancers.base import OnlineMapping
from dlbkit.balancers.base import Taxonomy
from dlbkit.families.graph.balancers.heft import heft_schedule
from dlbkit.balancers.registry import register

__all__ = ["ReplanningHEFT", "MIN_RATE"]

#: a processor measured at no speed at all is planned as this fraction of its nominal speed (its tasks
#: would never end: the plan then puts nothing on it unless every processor has stopped)
MIN_RATE = 1e-6


@register
class ReplanningHEFT(OnlineMapping):
    """HEFT planned at the start, and planned again, over the tasks not yet placed, whenever a
    processor's measured speed has changed by more than *threshold* (relative to the speed the plan
    assumed) or *every* tasks have finished since the last plan; each candidate is placed where the
    current plan puts it.

    Sources: Topcuoglu, Hariri & Wu 2002, IEEE TPDS 13(3), §4.1 (HEFT: decreasing upward rank,
    earliest finish time with insertion; :func:`~dlbkit.families.graph.balancers.heft.heft_schedule`, the
    static ``heft``'s own code); Sakellariou & Zhao 2004, "A low-cost rescheduling policy for efficient
    mapping of workflows on grid systems", Scientific Programming 12(4) (reschedule the tasks not yet
    started with HEFT, during the run, only when the run has drifted significantly from the plan, not
    at every event). Their trigger is a task's delay against its slack; ours, the reading the view
    holds, is a processor's measured speed against the speed the plan assumed (or a count of finished
    tasks, the periodic policy they compare against).

    A replan at time t (the view's ``time``): execution times are the table's divided by each
    processor's measured rate (``measured_speed / speeds``; at least :data:`MIN_RATE`); finished tasks
    keep their times; tasks placed and not finished are estimated, in topological order, on their
    processors' timelines (a running task ends at its start + its time at the current rate, not before
    t; a waiting one as early as its inputs and its processor allow, not before t, an unplaced
    predecessor, which only a real run's lost worker leaves, not counted); HEFT then places
    the unplaced tasks around them, none before t, with the ranks of the current rates. Placed tasks
    stay where they are: the engine commits a task when it is placed (its inputs are sent there).

    Parameters: *threshold* (relative change of any processor's measured speed that triggers a
    replan; default 0.2), *every* (replan after this many finished tasks; 0: never by count, the
    default), *insertion* (HEFT's insertion policy), *local_order* (``"plan"``, the default: each node
    runs its tasks in the plan's order, below; ``"priority"``: the engine's priority rule, pd's,
    work-conserving). Not preemptive: HEFT's schedule is not.

    Helps: a static plan meets a processor that slows during the run (background load): the tasks
    not yet placed move off it. Backfires: it sees a slowdown only once measured, cannot move tasks
    already placed there (one level of look-ahead in the ``dynamic`` engine), and a replan costs a
    full HEFT pass, O(e·m) (BENCHMARKS.md). With ``local_order="plan"`` each task's key is
    (plan number, planned start, planned finish, HEFT position), so a node runs its tasks in the plan's
    order, as static HEFT replayed, and a later plan's tasks after an earlier one's (keys rise along
    every edge). Under constant speeds it then equals static HEFT, except where a remote
    predecessor's output waited at its sender for the task's placement (docs/graphs.md).
    """

    name = "heft-replan"
    source = "Topcuoglu, Hariri & Wu 2002 §4.1; Sakellariou & Zhao 2004"
    taxonomy = Taxonomy("arrival (a task becomes placeable); replan on a speed change or every k finished tasks",
                        "central", "global: the graph, placements, start and finish times, measured speeds",
                        "each task placed once, where the current plan puts it",
                        "HEFT: decreasing upward rank; earliest finish time with insertion")
    _parameter_constraints = {"threshold": [Interval(Real, 0, None)], "every": [Interval(Integral, 0, None)],
                              "insertion": [bool], "local_order": [Options("plan", "priority")]}
    preemptive = False

    def __init__(self, *, threshold: float = 0.2, every: int = 0, insertion: bool = True, local_order: str = "plan"):
        self.threshold = threshold
        self.every = every
        self.insertion = insertion
        self.local_order = local_order

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        self.plan_: list | None = None
        self.keys_: list | None = None  # per task: (plan number, planned start, finish, HEFT position)
        self.rates_: list | None = None
        self.done_at_plan_ = 0
        self.replans_: list = []  # (time, tasks finished) of every replan after the first plan
        self.exec_of_: tuple = (None, None)  # (the costs' exec table, it as a float array)

    @staticmethod
    def rates(view) -> list[float]:
        """Each processor's measured speed over its nominal speed (≥ :data:`MIN_RATE`)."""
        return [max(ms / sp, MIN_RATE) for ms, sp in zip(view.measured_speed, view.speeds)]

    def _due(self, view, rates: list[float]) -> bool:
        if self.every and view.n_finished - self.done_at_plan_ >= self.every:
            return True
        return any(abs(r - r0) > self.threshold * r0 for r, r0 in zip(rates, self.rates_))

    def place(self, view) -> list:
        if not view.candidates:
            return []
        rates = self.rates(view)
        if self.plan_ is None:
            self._plan(view, rates)
        elif self._due(view, rates):
            self._plan(view, rates)
            self.replans_.append((view.time, view.n_finished))
        if self.local_order == "priority":
            return [(i, self.plan_[i]) for i in view.candidates]
        return [(i, self.plan_[i], self.keys_[i]) for i in view.candidates]

    def _plan(self, view, rates: list[float]) -> None:
        n = len(self.replans_) + (self.plan_ is not None)
        self.plan_, start, finish, pos = self.replan(view, rates, full=True)
        # a node runs its tasks in the plan's order (that of the static heft: start, finish, position); a
        # later plan's tasks after an earlier one's, so that keys rise along every edge (no stall)
        self.keys_ = [(n, start[i], finish[i], pos[i]) for i in range(len(start))]
        self.rates_ = rates
        self.done_at_plan_ = view.n_finished

    def replan(self, view, rates: list[float], full: bool = False):
        """HEFT over the unplaced tasks at ``view.time`` under *rates* (class docstring): the
        processor of every task (placed ones: where they are); with *full*, HEFT's (processor, start,
        finish, position) lists."""
        c = view.costs
        g = c.graph
        m = view.n_nodes
        t = view.time
        # one C division per entry, not a Python one per (task, processor) every replan: the same quotients
        if self.exec_of_[0] is not c.exec:
            self.exec_of_ = (c.exec, np.asarray(c.exec, dtype=float))
        ex = (self.exec_of_[1] / np.asarray(rates, dtype=float)).tolist()
        now = dataclasses.replace(c, exec=ex)
        placed, start, finish = view.placed, view.start, view.finish
        fixed: dict = {}
        est = {}
        lines = [Timeline() for _ in range(m)]
        for i in g.topo:
            p = placed[i]
            if p < 0:
                continue
            if finish[i] is not None:
                s0, f0 = start[i], finish[i]
            elif start[i] is not None:
                s0 = start[i]
                f0 = max(t, s0 + ex[i][p])
            else:
                ready = t
                for j, d in g.preds[i]:
                    if j in est:  # a real run may unplace a lost predecessor: its time is unknown
                        v = est[j] + c.comm(d, placed[j], p)
                        if v > ready:
                            ready = v
                s0 = lines[p].earliest(ready, ex[i][p])
                f0 = s0 + ex[i][p]
            est[i] = f0
            lines[p].add(s0, f0)
            fixed[i] = (p, s0, f0)
        out = heft_schedule(now, m, self.insertion, fixed=fixed, release=t)
        return out if full else out[0]
