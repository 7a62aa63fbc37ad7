"""Replay a recorded real graph run in the task-graph family's simulator (its ``Family.replay``).

A **graph** run (``dlbkit.run_graph(..., record=path)``, trace family ``graph``) replays into the graph
simulator instead (:func:`replay_graph`): its DAG with each task's measured cost as its load, one
node per worker at its recorded (emulated) speed and availability, transfers of the recorded data
volumes plus a latency, the median over tasks of how long a ready task waited on an idle worker (the
coordinator's dispatch; ``latency=`` overrides it); a static mapper's plan is timed by the ``static``
engine, an online mapper runs on the ``dynamic`` engine. **Startup**: the replay starts when the recorded
first task did (:func:`graph_startup`), its times shifted by it, as a tree's replay does: starting the
worker processes (tens of ms) is no part of the model. What it misses: a worker that started later than the
first (every replayed worker is ready at the first task's start), and the coordinator's own delays between
a task's end and its result read (a few ms a task at 1-4 ms tasks, so the replay reads low on those).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_seconds, earlier, makespan_report, pieces,
                                    recorded_balancer, shift, speeds_text)
from dlbkit.model.availability import Recorded
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["replay_graph", "dispatch_latency", "graph_startup", "report"]


def replay_graph(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                 seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """Simulate a recorded real graph run (``dlbkit.run_graph``) under *balancer* (default: the one it
    used) in the graph simulator; see the module docstring."""
    from dlbkit.families.graph.balancers.base import OnlineMapping
    from dlbkit.families.graph.model.workload import TaskGraph
    from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
    from dlbkit.families.graph.sim.static import simulate_graph

    dag, costs = trace.meta.get("dag"), trace.meta.get("item_cost")
    if not isinstance(dag, Mapping) or costs is None:
        raise ConfigError("trace meta.dag", "<missing>", "the DAG and measured task costs of a real graph run")
    tasks = dag.get("tasks", [])
    if len(tasks) != len(costs):
        raise ConfigError("trace item_cost", f"{len(costs)} costs", f"one per task of meta.dag ({len(tasks)})")
    edges = tuple((e["from"], e["to"], e.get("data", 0.0)) for e in dag.get("edges", []))
    g = TaskGraph(tuple(t["id"] for t in tasks), loads=tuple(float(c) for c in costs), edges=edges,
                  name=str(dag.get("name", "graph")))
    if latency is None:
        latency = dispatch_latency(trace)
    else:
        check_seconds("latency", latency)
    P = trace.n_nodes
    until = max([float(trace.end_time)] + [float(t) for t in trace.t_end])
    startup = graph_startup(trace)
    nodes = [Node(f"w{w}", speed=float(trace.speeds[w]) if trace.speeds else 1.0,
                  availability=earlier(pieces(trace.availability[w], until), startup) if trace.availability
                  else Recorded((0.0,), (1.0,)))
             for w in range(P)]
    platform = Platform(nodes, Network(latency=float(latency), bandwidth=1.0), name="replay")
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    engine = simulate_graph_dynamic if isinstance(b, OnlineMapping) else simulate_graph
    tr = engine(platform, g, b, seed=seed)
    shift(tr, startup)  # the simulated plan from 0 is the recorded one from its first task's start
    tr.source = "replay"
    tr.meta.update(replay_of=trace.balancer, replay_latency=float(latency), replay_startup=startup,
                   balancer_params=b.get_params())
    return ReplayResult(tr, b, platform=platform, recorded=trace)


def graph_startup(trace: Trace) -> float:
    """When the recorded run's first task started (0 for a run without tasks): the worker processes' start
    before it is no part of the replay model, which starts its plan then."""
    return float(min(trace.t_start)) if len(trace.t_start) else 0.0


def dispatch_latency(trace: Trace) -> float:
    """The median wait of a task that was ready on an idle worker (from ready, or the worker's previous
    end, to its start): the coordinator's dispatch, what the replay charges as a transfer's latency."""
    last: dict[int, float] = {}
    waits = []
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        w = trace.node[k]
        ready = max(trace.t_ask[k], last.get(w, 0.0))
        if trace.t_start[k] >= ready:
            waits.append(trace.t_start[k] - ready)
        last[w] = trace.t_end[k]
    return float(np.median(waits)) if waits else 0.0



def report(trace: Trace, named, *, seed: int | None, source: str, label) -> ReplayReport:
    """``dlbkit replay`` of a task graph (the family's ``Replay.report``): the makespan table, under the line of
    its model: the measured task costs on the recorded speeds; no master; a transfer's latency the
    coordinator's dispatch; the plan starts when the recorded first task did (the loops' ``--model`` does not
    apply)."""
    model = {"model": "recorded", "speeds": [float(s) for s in trace.speeds], "latency": dispatch_latency(trace),
             "startup": graph_startup(trace)}
    line = (f"model: recorded speeds {speeds_text(model['speeds'])}; dispatch latency {model['latency'] * 1e3:.3g} ms;"
            f" startup {model['startup'] * 1e3:.3g} ms")
    return makespan_report(trace, named, replay_graph, seed=seed, source=source, label=label, model=model,
                           model_line=line, count=len(trace.meta.get("item_cost") or ()), unit="tasks")
