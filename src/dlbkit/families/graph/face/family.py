"""The task-graph family: a DAG of tasks mapped onto heterogeneous processors (002; Topcuoglu 2002)."""

from __future__ import annotations

import math
from typing import Mapping

from dlbkit.model import check
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.generate import SEEDED, graph_from_dict, topcuoglu10
from dlbkit.model.metrics import compute
from dlbkit.model.platform import Platform
from dlbkit.families.graph.model.view import GraphView
from dlbkit.families.graph.sim.static import simulate_graph
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
from dlbkit.families.graph.sim.options import GraphDynamicOptions, GraphOptions
import dlbkit.families.graph.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import Engine, Family, Replay, deferred, register
from dlbkit.families.graph.face.describe import FILES

__all__ = ["FAMILY", "describe", "metrics"]


def describe(g: TaskGraph) -> str:
    kind = "loads" if g.loads is not None else f"a cost table on {g.width} nodes"
    return f"task graph {g.name!r}: {g.n_tasks:,} tasks, {g.n_edges:,} edges, {kind}"


def metrics(trace) -> dict:
    """The common metrics, with the graph's own lower bound (critical path at the fastest times, or
    the fastest total over the processors: :func:`~dlbkit.families.graph.model.costs.critical_path_bound`);
    ``messages``/``bytes`` count the edges that cross machines and their data."""
    out = compute(trace)
    lb = float(trace.meta.get("lower_bound", math.nan))
    out["lower_bound"] = lb
    out["efficiency"] = lb / out["makespan"] if out["makespan"] > 0 else math.nan
    out["recorded_makespan"] = float(trace.meta.get("recorded_makespan", math.nan))
    return out


def inputs(table: Mapping) -> dict:
    """A WfCommons-generated workload's wfcommons version (another release may draw another workflow from
    the same seed), for the runs' fingerprints; nothing for any other ``[workload]`` table."""
    if table.get("generator") != "wfcommons":
        return {}
    from dlbkit.families.graph.model import wfcommons_recipes

    return {"wfcommons": wfcommons_recipes.version()}


#: the family's own metrics (``Family.own_metrics``)
OWN_METRICS = {"recorded_makespan": ("the makespan a workflow file records of its real run, on the machines it ran "
                                     "on (s; none for a generated or a dlbkit graph)", "lower")}


#: what a graph trace's Gantt chart shows: ``t_ask`` is when a task's inputs are all on its processor, so
#: the orange stretch is a ready task waiting for its turn there, and a processor with no bar is waiting
#: for the inputs of its next task
LEGEND = {"busy": "computing (tasks alternate shades)", "wait": "ready, waiting for its turn on the processor",
          "idle": "idle (waiting for inputs)"}


def sample_view() -> GraphView:
    """Topcuoglu 2002's 10-task graph on 3 identical processors."""
    return GraphView(3, costs_for(topcuoglu10(), 3))


def per_repetition(g: TaskGraph, table: Mapping, seed: int) -> TaskGraph:
    """A random graph (a layered or a WfCommons one: :data:`~dlbkit.families.graph.model.generate.SEEDED`)
    without a seed of its own is drawn anew in every repetition, from the repetition's seed, the same
    for every balancer (common random numbers); other graphs are fixed."""
    if table.get("generator") in SEEDED and "seed" not in table:
        return graph_from_dict({**table, "seed": seed})
    return g


def check_fit(platform: Platform, workload: TaskGraph) -> None:
    """A cost table needs one column per processor (a node with c cores gives c processors)."""
    if workload.costs is not None:
        workload.exec_times([n.speed for n in platform.nodes for _ in range(n.cores)])


def check_balancer(platform: Platform, balancer, path: str, workload: TaskGraph | None = None,
                   options: Mapping | None = None) -> None:
    """A static mapper's own checks against the graph's size and the processor count (max-k1-sum:
    *capacity* × processors ≥ tasks), so an experiment file refuses them before any run."""
    check_graph = getattr(balancer, "check_graph", None)
    if workload is None or check_graph is None:
        return
    with check.within(path):
        check_graph(workload.n_tasks, sum(n.cores for n in platform.nodes))


FAMILY = register(Family(
    name="graph",
    summary="a DAG of tasks with computation and communication weights, mapped once onto the processors "
            "(a static plan) and timed by one evaluator, or placed online as tasks become ready (dynamic engine)",
    source="002 (Sinclair 1993); Topcuoglu, Hariri & Wu 2002",
    workloads=(TaskGraph,),
    view=GraphView,
    kind="mapping",
    engines=(Engine("static", "the mapping balancer's plan timed by the evaluator (standard or thesis cost model; "
                    "availability stretches tasks)", "dlbkit.families.graph.sim.static.simulate_graph", simulate_graph,
                    GraphOptions),
             Engine("dynamic", "the graph run on the kernel while availability changes: a static plan replayed, or "
                    "an online mapper (pd) placing tasks as they become placeable; several programs may arrive",
                    "dlbkit.families.graph.sim.dynamic.simulate_graph_dynamic", simulate_graph_dynamic,
                    GraphDynamicOptions, kinds=("mapping", "graph-online"))),
    run=deferred("dlbkit.families.graph.face.run", "graph"),
    runtime="dlbkit.graph, dlbkit.run_graph, dlbkit.run_workflow",
    metrics=metrics,
    own_metrics=OWN_METRICS,
    metric_names=("makespan", "lower_bound", "recorded_makespan", "efficiency", "imbalance", "idle_share", "chunks", "messages",
                  "bytes"),
    metric_text={"makespan": "time the last task ended (s)",
                 "lower_bound": "the longest path with every task at its fastest time, or the fastest times' "
                                "total over the processors if longer; communication free (s)",
                 "imbalance": "max / mean of the processors' finish times",
                 "idle_share": "share of processor time not running tasks, up to the makespan",
                 "chunks": "stretches tasks ran: one per task, more where a task was preempted or (thesis cost "
                           "model) paused to transmit",
                 "messages": "edges whose data crosses machines (a message each)",
                 "bytes": "data carried by the edges that cross machines"},
    figures=deferred("dlbkit.families.graph.face.plots", "figures"),
    figure_kinds=("gantt",),
    figure_captions={"gantt": ("Gantt", "Gantt chart: a bar per task; orange = ready, waiting for its turn on the "
                                        "processor, blank = idle (waiting for inputs), red shade = background load.")},
    bar_metrics=("makespan", "efficiency"),
    parse=graph_from_dict,
    file_keys=("file",),  # a graph file named in an experiment is read from the experiment's folder
    inputs=inputs,
    describe=describe,
    files=FILES,
    per_repetition=per_repetition,
    check_fit=check_fit,
    check_balancer=check_balancer,
    sample_view=sample_view,
    gantt_legend=LEGEND,
    progress_unit="tasks",
    replay=Replay(deferred("dlbkit.families.graph.face.replay", "replay_graph"),
                  recorded_by="a task graph (dlbkit.graph, run_graph)", noun="task-graph",
                  report=deferred("dlbkit.families.graph.face.replay", "report"), options=("latency",)),
))
