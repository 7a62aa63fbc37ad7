"""``dlbkit.schedule``: a task graph's static schedule on the user's nodes (a mapper's plan, evaluated)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.families.result import Result
from dlbkit.model.platform import Platform

__all__ = ["Schedule", "schedule"]


class Schedule(Result):
    """A task graph's plan, timed: ``makespan``, and per task id its processor (``assignment``),
    ``start`` and ``finish``; ``as_dict()`` is what ``dlbkit schedule --json`` prints; ``plot_gantt()``."""

    @property
    def assignment(self) -> dict:
        return dict(zip(self.trace.meta["ids"], self.trace.meta["assignment"]))

    @property
    def start(self) -> dict:
        return _by_task(self.trace, self.trace.t_start)

    @property
    def finish(self) -> dict:
        return _by_task(self.trace, self.trace.t_end)

    def as_dict(self) -> dict:
        return {"makespan": self.makespan, "assignment": self.assignment, "start": self.start, "finish": self.finish}


def _by_task(trace, column) -> dict:
    ids = trace.meta["ids"]
    return {ids[i]: float(column[k]) for k, i in enumerate(trace.first)}


def schedule(graph: Any, nodes: Any, balancer: Any = "heft", *, params: Mapping[str, Any] | None = None,
             cost_model: str = "standard", contention: bool | str = False, seed: int = 0) -> Schedule:
    """Map task *graph* onto *nodes* with a mapping balancer and time the plan; return a :class:`Schedule`.

    *graph* is a :class:`~dlbkit.families.graph.model.workload.TaskGraph`, a ``.json`` (dlbkit's or WfFormat)/``.stg``/``.adg``/``.dax`` path or a
    ``networkx.DiGraph`` (node ``load`` or ``costs``, edge ``data``). *nodes* is a processor count M
    (identical nodes of speed 1; a transfer takes exactly its data), a Platform, a platform TOML path
    or a thesis ``.ntp`` network file. *cost_model* is ``"standard"`` or ``"thesis"`` (002's both-ends-busy model);
    *contention* True adds the standard model's one-port contention (one message at a
    time per machine's send and receive port); ``"link"`` link contention on the platform's routed
    topology (a message holds every link of its route; Sinnen & Sousa 2005).

    >>> import dlbkit
    >>> from dlbkit.families.graph.model.generate import topcuoglu10
    >>> dlbkit.schedule(topcuoglu10(), 3, "heft").makespan
    80.0
    """
    from dlbkit.families.graph.model.workload import TaskGraph
    from dlbkit.families.graph.sim.static import simulate_graph
    from dlbkit.model.topology import is_networkx
    if isinstance(graph, (str, Path)):
        graph = TaskGraph.read(graph)
    elif is_networkx(graph, "DiGraph"):
        graph = TaskGraph.from_networkx(graph)
    elif not isinstance(graph, TaskGraph):
        raise ConfigError("graph", type(graph).__name__, "a TaskGraph, a .json/.stg/.adg/.dax/.xml path or a networkx.DiGraph")
    if isinstance(nodes, (str, Path)):
        from dlbkit.families.graph.model.costs import platform_from_ntp
        nodes = platform_from_ntp(nodes) if str(nodes).lower().endswith(".ntp") else Platform.read(nodes)
    b = resolve(balancer, dict(params or {}), kind="mapping")
    trace = simulate_graph(nodes, graph, b, seed=seed, cost_model=cost_model, contention=contention)
    if not isinstance(nodes, Platform):  # M identical nodes: numbers are their names
        return Schedule(trace, b, platform=None)
    trace.name_nodes(nodes)
    return Schedule(trace, b, platform=nodes)
