"""The Python entry points: ``dlbkit.simulate`` and its Result."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from . import families
from .balancers.base import Balancer
from .balancers.registry import resolve
from .errors import ConfigError
from .model.platform import Platform
from .results import Result

__all__ = ["simulate", "Result"]


def simulate(platform: Platform | str | Path, workload: Any, balancer: Balancer | str | None = "gss", *,
             params: Mapping[str, Any] | None = None, seed: int = 0, **engine: Any) -> Result:
    """Simulate *workload* on *platform* under *balancer*; return a :class:`Result`.

    The workload's family (``dlbkit families``) picks the engine and the balancer kind: a
    :class:`~dlbkit.model.workload.Divisible` loop runs on the master–worker engine with a chunking
    balancer; a :class:`~dlbkit.model.tree.TaskTree` on the asynchronous tree engine with a migration
    balancer; an :class:`~dlbkit.model.spmd.Spmd` loop (Osman 2003, 000) on the pipelined-SPMD engine
    with a repartition balancer or ``"none"``/None (no balancing).
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
    return Result(trace, b, platform=platform)
