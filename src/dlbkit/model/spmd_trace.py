"""The one part of the SPMD family's trace the core still holds: :func:`series_from_intervals`.

It stays here only because :mod:`dlbkit.runtime.record` (the core, which cannot import a family) sets the
series of an SPMD recording written before traces kept them; it moves to
:mod:`dlbkit.families.spmd.model.trace`, which holds the rest of the family's trace, when the recording format's
per-family parts move into the families. The family's modules import it from there.
"""

from __future__ import annotations

import numpy as np

from dlbkit.model.trace import Trace

__all__ = ["series_from_intervals"]


def series_from_intervals(trace: Trace, n_loops: int | None = None) -> Trace:
    """Set an SPMD trace's series from its intervals (one per loop and node, in any order): loop time
    ``t_end − t_start``, points ``count`` and block starts ``first`` (loops × P); return the trace.
    A real run builds its series so, and so does a recording written before traces kept them."""
    ct = trace.intervals()
    n = n_loops if n_loops is not None else (int(ct["round"].max()) + 1 if len(ct["round"]) else 0)
    shape = (n, trace.n_nodes)
    loop_time, points, starts = np.zeros(shape), np.zeros(shape, dtype=np.int64), np.zeros(shape, dtype=np.int64)
    loop_time[ct["round"], ct["node"]] = ct["t_end"] - ct["t_start"]
    points[ct["round"], ct["node"]] = ct["count"]
    starts[ct["round"], ct["node"]] = ct["first"]
    trace.series = {"loop_time": loop_time, "points": points, "starts": starts}
    return trace
