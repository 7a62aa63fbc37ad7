"""The task-graph family's engine: one evaluator that times any static plan, under either cost model.

:func:`evaluate` takes the costs (:class:`~dlbkit.model.graph_costs.GraphCosts`), an assignment and an
optional global order, and returns every task's ready, start and finish time. Every mapping
balancer's plan is timed here and nowhere else ("balancers decide, engines do"); a balancer's own
estimate (HEFT's finish times) is only its estimate.

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

from ..balancers import decide
from ..balancers.base import MappingBalancer
from ..errors import ConfigError
from ..model.graph import TaskGraph
from ..model.graph_costs import COST_MODELS, GraphCosts, costs_for, critical_path_bound, upward_rank
from ..model.platform import Platform
from ..model.seeding import GRAPH, streams
from ..model.trace import Trace
from ..model.view import GraphView

__all__ = ["evaluate", "Evaluator", "simulate_graph", "send_order"]


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


def simulate_graph(platform: Platform | int, workload: TaskGraph, balancer: MappingBalancer, *, seed: Any = 0,
                   cost_model: str = "standard", record_decisions: bool = False) -> Trace:
    """Ask *balancer* for a plan of *workload* on *platform* (a Platform, or a processor count:
    identical nodes of speed 1, a transfer takes its data), check it (:func:`decide.plan`), time it
    with :func:`evaluate` under *cost_model* ("standard" or "thesis"), and return the run's Trace:
    one interval per task (``first`` = the task's index, ``t_ask`` = when its data was ready), the
    plan in ``meta``. Seeding: layout ``GRAPH`` (balancer, availability)."""
    if cost_model not in COST_MODELS:
        raise ConfigError("engine.cost_model", cost_model, "one of " + ", ".join(repr(k) for k in COST_MODELS))
    if not isinstance(workload, TaskGraph):
        raise ConfigError("workload", type(workload).__name__, "a TaskGraph")
    costs = costs_for(workload, platform, cost_model)
    st = streams(seed, GRAPH)
    view = GraphView(costs.n_nodes, costs)
    balancer.start(view, st.rng("balancer"))
    tr = Trace(n_nodes=costs.n_nodes, node_of=list(costs.host), balancer=balancer.name,
               seed=seed if isinstance(seed, int) else None, family="graph")
    plan = decide.plan(balancer, view, tr.decisions if record_decisions else None)
    profiles = None
    if isinstance(platform, Platform):
        rng = st.rng("availability")
        per_node = [n.availability.realise(rng) for n in platform.nodes]
        profiles = [per_node[h] for h in costs.host]
        tr.availability = profiles
        if all(pr.constant == 1.0 for pr in profiles):
            profiles = None
    ready, start, finish = evaluate(costs, plan.assignment, plan.order, availability=profiles)
    a = plan.assignment
    for i in range(workload.n_tasks):
        tr.add_interval(a[i], i, 1, ready[i], start[i], finish[i])
    host = costs.host
    off = [(i, j, d) for i in range(workload.n_tasks) for j, d in workload.succs[i] if host[a[i]] != host[a[j]]]
    tr.messages = len(off)
    tr.bytes = float(sum(d for _, _, d in off))
    tr.speeds = list(costs.speeds)
    tr.end_time = max(finish)
    tr.events = workload.n_tasks
    tr.meta.update({"assignment": list(a), "order": list(plan.order) if plan.order is not None else None,
                    "cost_model": cost_model, "ids": list(workload.ids), "graph": workload.name,
                    "lower_bound": critical_path_bound(costs), "plan_info": dict(plan.info or {})})
    return tr
