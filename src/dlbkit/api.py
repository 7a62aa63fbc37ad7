"""The Python entry points: ``dlbkit.simulate`` and its Result."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from . import families
from .balancers.base import Balancer
from .balancers.registry import resolve
from .errors import ConfigError
from .model.platform import Platform
from .model.spmd_trace import SpmdTrace
from .model.trace import Trace

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


def simulate(platform: Platform | str | Path, workload: Any, balancer: Balancer | str | None = "gss", *,
             params: Mapping[str, Any] | None = None, seed: int = 0, **engine: Any) -> Result:
    """Simulate *workload* on *platform* under *balancer*; return a :class:`Result`.

    The workload's family (``dlbkit families``) picks the engine and the balancer kind: a
    :class:`~dlbkit.model.workload.Divisible` loop runs on the master–worker engine with a chunking
    balancer; a :class:`~dlbkit.model.tree.TaskTree` on the asynchronous tree engine with a migration
    balancer; an :class:`~dlbkit.model.spmd.Spmd` loop (Osman 2003, 000) on the pipelined-SPMD engine
    with a repartition balancer or ``"none"``/None (no balancing; its Result's trace is an SpmdTrace).
    *balancer* is a balancer object or a registered name (with *params*); *platform* a Platform or
    the path of a platform TOML file. *engine* options go to the engine (``dlbkit families`` lists
    them per family; an unknown one is a ConfigError naming those allowed).

    >>> from dlbkit import Platform, Node, Divisible, simulate
    >>> p = Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)])
    >>> r = simulate(p, Divisible(400), "ss", seed=1)
    >>> round(r.metrics["efficiency"], 2)
    1.0
    """
    if isinstance(platform, (str, Path)):
        platform = Platform.from_toml(platform)
    family = families.of(workload)
    eng = family.engine
    allowed = eng.api_options
    for k in engine:
        if k not in allowed:
            raise ConfigError(f"engine.{k}", "<unknown option>",
                              f"an option of the {family.name} family's {eng.name} engine: " + ", ".join(allowed))
    b = resolve(balancer, dict(params or {}), kind=family.kind, allow_none=family.allow_none)
    trace = eng.run(platform, workload, b, seed=seed, **engine)
    return Result(trace, platform, b, family.metrics(trace))
