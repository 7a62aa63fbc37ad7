"""The Python entry points: ``dlbkit.simulate`` and its Result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .balancers.base import Balancer, MigrationBalancer, RepartitionBalancer
from .balancers.registry import make
from .errors import ConfigError
from .model import metrics as _metrics
from .model.platform import Platform
from .model.spmd import Spmd
from .model.trace import Trace
from .model.tree import FlatTasks, TaskTree
from .model.workload import Divisible
from .sim.divisible import simulate_divisible
from .model.spmd_trace import SpmdTrace

__all__ = ["simulate", "Result"]


@dataclass
class Result:
    """One run: its Trace, the metrics computed from it, and what produced it.

    For an :class:`~dlbkit.model.spmd.Spmd` workload *trace* is the engine's
    :class:`~dlbkit.model.spmd_trace.SpmdTrace` (loop times and DP per loop and workstation, transfers):
    an SPMD run has loops, not chunks.
    """

    trace: Trace | SpmdTrace
    platform: Platform
    balancer: Balancer
    metrics: dict[str, float] = field(default_factory=dict)

    @property
    def makespan(self) -> float:
        return self.metrics["makespan"]

    def table(self) -> dict[str, list]:
        """The chunk records as columns (a DataFrame-like dict: ``pandas.DataFrame(result.table())``);
        for an SPMD run one row per loop and workstation: loop, node, points, loop_time."""
        if isinstance(self.trace, SpmdTrace):
            import numpy as np
            t = self.trace
            loops, P = t.loop_time.shape
            return {"loop": np.repeat(np.arange(loops), P).tolist(), "node": np.tile(np.arange(P), loops).tolist(),
                    "points": t.points.ravel().tolist(), "loop_time": t.loop_time.ravel().tolist()}
        return {k: v.tolist() for k, v in self.trace.chunk_table().items()}

    def plot_gantt(self, ax=None, **kw):
        self._not_spmd("plot_gantt")
        from .plots import gantt
        return gantt(self.trace, ax=ax, **kw)

    def plot_work(self, ax=None, **kw):
        self._not_spmd("plot_work")
        from .plots import work_over_time
        return work_over_time(self.trace, ax=ax, **kw)

    def plot_loop_times(self, ax=None, **kw):
        """SPMD: loop time per workstation over the loops."""
        from .plots import spmd_loop_times
        return spmd_loop_times(self.trace, ax=ax, **kw)

    def plot_points(self, ax=None, **kw):
        """SPMD: data points per workstation over the loops."""
        from .plots import spmd_points
        return spmd_points(self.trace, ax=ax, **kw)

    def _not_spmd(self, what: str) -> None:
        if isinstance(self.trace, SpmdTrace):  # an SPMD run has no chunks to draw
            raise ConfigError(what, "an SPMD run", "plot_loop_times() or plot_points() for an SPMD run")


def simulate(platform: Platform | str | Path, workload: Divisible | TaskTree | Spmd,
             balancer: Balancer | str | None = "gss", *,
             params: Mapping[str, Any] | None = None, seed: int = 0, **engine: Any) -> Result:
    """Simulate *workload* on *platform* under *balancer*; return a :class:`Result`.

    *balancer* is a balancer object or a registered name (with *params*); *platform* a Platform or
    the path of a platform TOML file. *engine* options go to the engine: for a
    :class:`~dlbkit.model.workload.Divisible` loop the master–worker engine (mechanism, master,
    master_computes, master_overhead, master_cost_per_byte, request_bytes, broadcast_bytes, costs,
    startup); for a
    :class:`~dlbkit.model.tree.TaskTree` the asynchronous tree engine
    (:func:`~dlbkit.sim.tree_async.simulate_tree_async`: start_node, control_bytes, task_bytes),
    with a migration balancer; for an :class:`~dlbkit.model.spmd.Spmd` loop (Osman 2003, 000) the
    pipelined-SPMD engine (:func:`~dlbkit.sim.spmd_platform.simulate_spmd_platform`: window), with a
    repartition balancer or ``"none"``/None (no balancing); its Result's trace is an SpmdTrace.

    >>> from dlbkit import Platform, Node, Divisible, simulate
    >>> p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)])
    >>> r = simulate(p, Divisible(400), "ss", seed=1)
    >>> round(r.metrics["efficiency"], 2)
    1.0
    """
    if isinstance(platform, (str, Path)):
        platform = Platform.from_toml(platform)
    if isinstance(workload, Spmd):
        return _simulate_spmd(platform, workload, balancer, params, seed, engine)
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
        raise ConfigError("workload", type(workload).__name__, "a Divisible workload, a TaskTree or an Spmd")
    return Result(trace, platform, balancer, _metrics.compute(trace))


def _simulate_spmd(platform: Platform, workload: Spmd, balancer, params, seed, engine) -> Result:
    from .sim.spmd_platform import ENGINE_KEYS, simulate_spmd_platform, spmd_metrics
    if balancer is None or (isinstance(balancer, str) and balancer.lower() == "none"):  # unbalanced baseline
        if params:
            raise ConfigError("params", dict(params), "none for balancer 'none'")
        balancer = None
    elif isinstance(balancer, str):
        balancer = make(balancer, dict(params or {}))
    elif params:
        balancer = balancer.clone().set_params(**params)
    if balancer is not None and not isinstance(balancer, RepartitionBalancer):
        raise ConfigError("balancer", balancer.name, "a repartition balancer for an SPMD workload: dlah, "
                          "homogeneous-diffusion, processor-only, optimal-chain, or 'none'")
    for k in engine:
        if k not in ENGINE_KEYS:
            raise ConfigError(f"engine.{k}", "<unknown option>", "an SPMD engine option: " + ", ".join(sorted(ENGINE_KEYS)))
    trace = simulate_spmd_platform(platform, workload, balancer, seed=seed, **engine)
    return Result(trace, platform, balancer, spmd_metrics(trace))
