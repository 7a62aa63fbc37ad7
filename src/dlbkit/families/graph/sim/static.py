"""The task-graph family's engine: ask a mapping balancer for a plan, check it, time it with the one
evaluator (:mod:`dlbkit.families.graph.model.evaluate`, re-exported here), and record the run as the one Trace.

Every mapping balancer's plan is timed by that evaluator and nowhere else ("balancers decide, engines
do"); a balancer's own estimate (HEFT's finish times) is only its estimate.
"""

from __future__ import annotations

from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.graph.balancers import decide
from dlbkit.families.graph.balancers.base import MappingBalancer, OnlineMapping
from dlbkit.families.graph.model.costs import costs_for, critical_path_bound
from dlbkit.families.graph.model.evaluate import Evaluator, evaluate, send_order
from dlbkit.families.graph.model.view import GraphView
from dlbkit.families.graph.model.workload import TaskGraph, recorded_makespan
from dlbkit.model.platform import Platform
from dlbkit.families.graph.model.seeding import GRAPH
from dlbkit.model.seeding import streams
from dlbkit.model.trace import Trace
from dlbkit.families.graph.sim.options import GraphOptions
from dlbkit.sim.progress import ticker

__all__ = ["evaluate", "Evaluator", "simulate_graph", "send_order"]


def simulate_graph(platform: Platform | int, workload: TaskGraph, balancer: MappingBalancer, *, seed: Any = 0,
                   options: GraphOptions | None = None, **kwargs: Any) -> Trace:
    """Ask *balancer* for a plan of *workload* on *platform* (a Platform, or a processor count:
    identical nodes of speed 1, a transfer takes its data), check it (:func:`decide.plan`), time it
    with :func:`evaluate` under *cost_model* ("standard" or "thesis"; *contention*: the standard model's
    one-port option (True) or link contention on the platform's routed topology (``"link"``;
    ``[engine] contention = "link"``, ``dlbkit schedule --contention link``),
    :mod:`dlbkit.families.graph.model.costs`), and return the run's Trace:
    one interval per task (``first`` = the task's index, ``t_ask`` = when its data was ready), the
    plan in ``meta``. Seeding: layout ``GRAPH`` (balancer, availability). *progress* ``(done, total)``:
    called with 0 tasks timed once the plan is made and with all of them at the end (the evaluator
    times the plan in one call). The options are a :class:`~dlbkit.families.graph.sim.options.GraphOptions`
    (*options*), or its fields as keywords (*cost_model*, *contention*, *record_decisions*, *progress*)."""
    o = GraphOptions.of(options, kwargs, "simulate_graph")
    cost_model, contention, record_decisions = o.cost_model, o.contention, o.record_decisions
    if not isinstance(workload, TaskGraph):
        raise ConfigError("workload", type(workload).__name__, "a TaskGraph")
    if isinstance(balancer, OnlineMapping):
        raise ConfigError("balancer", balancer.name, "a static mapping balancer for the 'static' engine; "
                          f"{balancer.name!r} places tasks during the run: use the graph family's 'dynamic' engine "
                          "(dlbkit.families.graph.sim.dynamic.simulate_graph_dynamic)")
    tick = ticker(o.progress)
    costs = costs_for(workload, platform, cost_model, contention=contention)
    st = streams(seed, GRAPH)
    view = GraphView(costs.n_nodes, costs)
    balancer.start(view, st.rng("balancer"))
    tr = Trace(n_nodes=costs.n_nodes, node_of=list(costs.host), balancer=balancer.name,
               seed=seed if isinstance(seed, int) else None, family="graph")
    plan = decide.plan(balancer, view, tr.decisions if record_decisions else None)
    profiles = None
    if isinstance(platform, Platform):
        rng = st.rng("availability")
        per_node = platform.realise_availability(rng)
        profiles = [per_node[h] for h in costs.host]
        tr.availability = profiles
        if all(pr.constant == 1.0 for pr in profiles):
            profiles = None
    if tick is not None:
        tick(0, workload.n_tasks)
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
                    "cost_model": cost_model, "contention": contention, "ids": list(workload.ids), "graph": workload.name,
                    "lower_bound": critical_path_bound(costs), "plan_info": dict(plan.info or {}),
                    **recorded_makespan(workload)})
    if tick is not None:
        tick.finish(workload.n_tasks)
    return tr
