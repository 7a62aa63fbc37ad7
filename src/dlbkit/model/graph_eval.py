"""The one evaluator of the task-graph family: the time of a static plan under either cost model.

It lives in the model layer because it is a pure function of the graph, the costs and a plan (no
clock, no queue): the graph engine (:mod:`dlbkit.sim.graph`) times every plan with it, and mappers that
search over plans (annealing) use it as their objective, without importing an engine.

* **Order.** With an order (a topological sequence of all tasks), each processor runs its tasks in
  that sequence, each as early as its data and its processor allow. Without one, the list rule of
  002 App. A.2: among the tasks whose predecessors have all been placed, the one of highest priority
  (upward rank = 002's precedence level), ties by earliest ready time, then lowest index, goes next on
  its processor. Non-preemptive; no insertion into idle gaps (a plan that wants a gap-filled
  schedule gives the order that says so: HEFT's order sorts tasks by their planned start).
* **standard** (Topcuoglu et al. 2002 §3): task i on p starts at max(processor free, max over
  predecessors j of finish_j + transfer(j → i)); the transfer is free on one machine; processors
  compute while data is in flight.
* **thesis** (002 §2.4, App. A.2, §9.4): a task's time on its processor is receive + compute +
  transmit, all serialised (every off-machine message occupies both ends, ``c · d``); after computing,
  a task sends in decreasing precedence level of its receivers, and a receiver is ready when its
  message *starts* to be sent (its receive time is inside its own time). This reproduces the
  thesis's simulated-annealing row (note §9.4) and the worst-case formulas of §10 (R5, R6).

Availability: with ``availability`` (one piecewise profile per processor, or None for dedicated
nodes) a task's time is stretched by its processor's availability (``Piecewise.finish``).
"""

from __future__ import annotations

import heapq
from typing import Any, Sequence

from ..errors import ConfigError
from .graph_costs import GraphCosts, upward_rank

__all__ = ["Evaluator", "evaluate", "send_order"]


def send_order(costs: GraphCosts, prio: Sequence[float]) -> list[list[tuple[int, float]]]:
    """Per task, its successors in the order the thesis model accumulates them: ascending priority
    (so the highest-priority receiver's message is sent first), ties in successor-list order."""
    g = costs.graph
    return [sorted(g.succs[i], key=lambda e: prio[e[0]]) for i in range(g.n_tasks)]


class Evaluator:
    """The evaluator of one graph on one set of processors, prepared once (priorities, the thesis
    model's send order) to time many plans: ``times(assignment, order=None)`` → (ready, start,
    finish); ``makespan(...)``. :func:`evaluate` is the one-shot form."""

    def __init__(self, costs: GraphCosts, priority: Sequence[float] | None = None,
                 availability: Sequence[Any] | None = None):
        self.costs = costs
        self.prio = list(priority) if priority is not None else upward_rank(costs)
        self.thesis = costs.kind == "thesis"
        self.succs = send_order(costs, self.prio) if self.thesis else costs.graph.succs
        self.npred0 = [len(p) for p in costs.graph.preds]
        self.entries = [i for i, k in enumerate(self.npred0) if k == 0]
        self.availability = list(availability) if availability is not None else None

    def makespan(self, assignment: Sequence[int], order: Sequence[int] | None = None) -> float:
        return max(self.times(assignment, order)[2])

    def times(self, assignment: Sequence[int], order: Sequence[int] | None = None):
        c = self.costs
        g = c.graph
        n = g.n_tasks
        a = assignment
        if len(a) != n:
            raise ConfigError("assignment", f"{len(a)} entries", f"one processor per task ({n})")
        prio, thesis, succs, preds = self.prio, self.thesis, self.succs, g.preds
        ex, host, lat, per = c.exec, c.host, c.lat, c.per
        ready = [0.0] * n
        start = [0.0] * n
        finish = [0.0] * n
        avail = [0.0] * c.n_nodes
        npred = self.npred0[:]
        prof = self.availability
        push, pop = heapq.heappush, heapq.heappop
        if order is None:
            heap = [(-prio[i], 0.0, i) for i in self.entries]
            heapq.heapify(heap)
            it = None
        else:
            heap = None
            it = iter(order)
        done = 0
        while True:
            if it is None:
                if not heap:
                    break
                i = pop(heap)[2]
            else:
                i = next(it, -1)
                if i < 0:
                    break
                if npred[i] != 0:
                    raise ConfigError("order", f"task {g.ids[i]!r} before one of its predecessors",
                                      "a topological order")
            done += 1
            p = a[i]
            hp = host[p]
            st = ready[i]
            if avail[p] > st:
                st = avail[p]
            work = ex[i][p]
            perp = per[p]
            if thesis:
                for j, d in preds[i]:
                    q = a[j]
                    if host[q] != hp:
                        work += d * per[q][p]
                for j, d in succs[i]:
                    q = a[j]
                    if host[q] != hp:
                        work += d * perp[q]
            f = st + work if prof is None else prof[p].finish(st, work)
            start[i] = st
            finish[i] = f
            avail[p] = f
            if thesis:
                csum = 0.0
                for j, d in succs[i]:
                    q = a[j]
                    if host[q] != hp:
                        csum += d * perp[q]
                    t = f - csum
                    if t > ready[j]:
                        ready[j] = t
                    npred[j] -= 1
                    if npred[j] == 0 and it is None:
                        push(heap, (-prio[j], ready[j], j))
            else:
                latp = lat[p]
                for j, d in succs[i]:
                    q = a[j]
                    t = f if host[q] == hp else f + latp[q] + d * perp[q]
                    if t > ready[j]:
                        ready[j] = t
                    npred[j] -= 1
                    if npred[j] == 0 and it is None:
                        push(heap, (-prio[j], ready[j], j))
        if done != n:
            raise ConfigError("order", f"{done} of {n} tasks", "every task exactly once, in a topological order")
        return ready, start, finish


def evaluate(costs: GraphCosts, assignment: Sequence[int], order: Sequence[int] | None = None, *,
             priority: Sequence[float] | None = None, availability: Sequence[Any] | None = None,
             ) -> tuple[list[float], list[float], list[float]]:
    """(ready, start, finish) of every task of ``costs.graph`` under the plan (*assignment*, *order*).

    *priority* (default :func:`~dlbkit.model.graph_costs.upward_rank`) orders the list rule and the
    thesis model's messages. An order that is not a topological order of all tasks is a ConfigError.
    """
    return Evaluator(costs, priority, availability).times(assignment, order)
