"""How an SPMD run's recordings are read (the family's ``Family.recording``): :func:`restore` gives the per-node
counts back their arrays and rebuilds the per-loop series of a file written before traces kept them."""

from __future__ import annotations

import numpy as np

from dlbkit.families.spmd.model.trace import series_from_intervals
from dlbkit.model.trace import Trace
from dlbkit.runtime.record import Checker

__all__ = ["restore"]


def restore(trace: Trace, d: dict, ck: Checker) -> Trace:
    """*trace* as an SPMD run's: ``meta["steps"]`` and ``meta["decided"]`` (per node) as arrays, as the run
    made them; ``series`` (``loop_time``, ``points``, ``starts``) from the loop rows if the file has none."""
    for k in ("steps", "decided"):
        if k in trace.meta:
            trace.meta[k] = np.asarray(trace.meta[k])
    if "loop_time" not in trace.series:  # written before traces kept their series
        series_from_intervals(trace)
    return trace
