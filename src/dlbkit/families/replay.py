"""What every family's replay shares: the Result of a replay, reading a recording, and the recorded balancer.

A family replays its recordings with its own hook (``Family.replay``: the divisible family's
:mod:`dlbkit.families.divisible.face.replay`, the task-graph and job-stream families' likewise);
:func:`dlbkit.replay` dispatches by the recording's family.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import REGISTRY, resolve
from dlbkit.errors import ConfigError
from dlbkit.families import registry
from dlbkit.families.result import Result
from dlbkit.model.availability import Piecewise, Recorded
from dlbkit.model.trace import Trace
from dlbkit.runtime.record import load_trace

__all__ = ["ReplayResult", "as_trace", "pieces", "recorded_balancer", "check_seconds"]


class ReplayResult(Result):
    """A replay's :class:`~dlbkit.families.result.Result`, with the recorded run it replays (*recorded*) and the
    model used (*model*)."""

    def __init__(self, trace: Trace, balancer, *, platform=None, recorded: Trace | None = None,
                 model: Any = None):
        super().__init__(trace, balancer, platform=platform)
        self.recorded = recorded
        self.model = model

    @property
    def real_makespan(self) -> float:
        return self.recorded.makespan if self.recorded is not None and len(self.recorded.t_end) else math.nan

    @property
    def ratio(self) -> float:
        """Simulated makespan / real makespan."""
        real = self.real_makespan
        return self.makespan / real if real > 0 else math.nan


def as_trace(trace_or_path: Trace | str | Path) -> Trace:
    """*trace_or_path* as a Trace: a Trace itself, or the recording saved at that path."""
    if isinstance(trace_or_path, Trace):
        return trace_or_path
    if isinstance(trace_or_path, (str, Path)):
        return load_trace(trace_or_path)
    raise ConfigError("trace", type(trace_or_path).__name__, "a Trace or the path of a recorded trace file")


def pieces(a: Any, until: float) -> Recorded:
    """A recorded availability as its pieces up to *until* (a realised Piecewise made Recorded)."""
    if isinstance(a, Recorded):
        return a
    if isinstance(a, Piecewise):
        times, levels = a.segments_until(until)
        return Recorded(tuple(float(t) for t in times), tuple(float(x) for x in levels))
    raise ConfigError("trace.availability", a, "realised availabilities (Piecewise)")


def check_seconds(name: str, v: Any) -> None:
    """A replay's time option (*latency*, *overhead*): a finite number of seconds >= 0, or a ConfigError naming it."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        raise ConfigError(name, v, "a finite number of seconds >= 0")


def recorded_balancer(trace: Trace, balancer: Balancer | str | None, params: Mapping | None) -> Balancer:
    """The balancer of a replay: *balancer* (of a kind the recording's family runs) with *params*; None or the
    recorded name: the recorded one with its recorded parameters, updated by *params*."""
    kind = registry.get(trace.family, "trace family").kinds
    recorded = dict(trace.meta.get("balancer_params") or {})
    if balancer is None or (isinstance(balancer, str) and balancer.lower() == trace.balancer):
        if not trace.balancer:
            raise ConfigError("balancer", None, "a balancer name (the trace does not name the one it used)")
        try:
            return resolve(trace.balancer, {**recorded, **dict(params or {})}, kind=kind)
        except ConfigError as e:
            if balancer is None and not params:
                own = "" if str(trace.balancer).lower() in REGISTRY else (
                    " (a balancer of your own: import the module that registers it first: `import MODULE` "
                    "in Python, `dlbkit replay --import MODULE` on the command line)")
                raise ConfigError(f"recorded {e.field}", e.value, e.allowed + own) from None
            raise
    return resolve(balancer, params, kind=kind)

