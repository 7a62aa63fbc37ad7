"""The bags family's metrics: the shared ones of a trace, and one of its own."""

from __future__ import annotations

import math

from dlbkit.model.metrics import compute, worker_loads
from dlbkit.model.trace import Trace

__all__ = ["OWN_METRICS", "finish_spread", "metrics"]

#: the family's own metric: name → (meaning, which direction is better), as METRICS holds the shared ones
OWN_METRICS = {"finish_spread": ("last finish minus first finish over the nodes that ran a task (s)", "lower")}


def finish_spread(trace: Trace) -> float:
    """How far apart the busy nodes stop: max − min of their last tasks' ends (NaN for an empty trace).
    A node that got no task is left out: it says nothing about how the work was spread."""
    loads = worker_loads(trace)
    used = loads["finish"][loads["items"] > 0]
    return float(used.max() - used.min()) if len(used) else math.nan


def metrics(trace: Trace) -> dict[str, float]:
    """Every shared metric (:func:`dlbkit.model.metrics.compute`) plus :data:`OWN_METRICS`."""
    return {**compute(trace), "finish_spread": finish_spread(trace)}
