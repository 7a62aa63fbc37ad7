"""The Python entry points: ``dlbkit.simulate`` and its Result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .balancers.base import Balancer, MigrationBalancer
from .balancers.registry import make
from .errors import ConfigError
from .model import metrics as _metrics
from .model.platform import Platform
from .model.trace import Trace
from .model.tree import FlatTasks, TaskTree
from .model.workload import Divisible
from .sim.divisible import simulate_divisible

__all__ = ["simulate", "Result"]


@dataclass
class Result:
    """One run: its Trace, the metrics computed from it, and what produced it."""

    trace: Trace
    platform: Platform
    balancer: Balancer
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def makespan(self) -> float:
        return self.metrics["makespan"]

    def table(self) -> dict[str, list]:
        """The chunk records as columns (a DataFrame-like dict: ``pandas.DataFrame(result.table())``)."""
        return {k: v.tolist() for k, v in self.trace.chunk_table().items()}

    def plot_gantt(self, ax=None, **kw):
        from .experiments.plots import gantt
        return gantt(self.trace, ax=ax, **kw)

    def plot_work(self, ax=None, **kw):
        from .experiments.plots import work_over_time
        return work_over_time(self.trace, ax=ax, **kw)


def simulate(platform: Platform | str | Path, workload: Divisible, balancer: Balancer | str = "gss", *,
             params: Mapping[str, Any] | None = None, seed: int = 0, **engine: Any) -> Result:
    """Simulate *workload* on *platform* under *balancer*; return a :class:`Result`.

    *balancer* is a balancer object or a registered name (with *params*); *platform* a Platform or
    the path of a platform TOML file. *engine* options go to the engine: for a
    :class:`~dlbkit.model.workload.Divisible` loop the master–worker engine (mechanism, master,
    master_computes, master_overhead, master_cost_per_byte, request_bytes, costs); for a
    :class:`~dlbkit.model.tree.TaskTree` the asynchronous tree engine
    (:func:`~dlbkit.sim.tree_async.simulate_tree_async`: start_node, control_bytes, task_bytes),
    with a migration balancer.

    >>> from dlbkit import Platform, Node, Divisible, simulate
    >>> p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)])
    >>> r = simulate(p, Divisible(400), "ss", seed=1)
    >>> round(r.metrics["efficiency"], 2)
    1.0
    """
    if isinstance(platform, (str, Path)):
        platform = Platform.from_toml(platform)
    if isinstance(balancer, str):
        balancer = make(balancer, dict(params or {}))
    elif params:
        balancer = balancer.clone().set_params(**params)
    if isinstance(workload, (TaskTree, FlatTasks)):
        from .sim.tree_async import simulate_tree_async
        if not isinstance(balancer, MigrationBalancer):
            raise ConfigError("balancer", balancer.name, "a migration balancer for a task tree")
        trace = simulate_tree_async(platform, workload, balancer, seed=seed, **engine)
    elif isinstance(workload, Divisible):
        trace = simulate_divisible(platform, workload, balancer, seed=seed, **engine)
    else:
        raise ConfigError("workload", type(workload).__name__, "a Divisible workload or a TaskTree")
    return Result(trace, platform, balancer, _metrics.compute(trace))
