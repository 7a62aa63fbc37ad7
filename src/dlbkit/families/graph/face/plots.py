"""The graph family's plots: its figure of a run, the Gantt chart of the schedule."""

from __future__ import annotations

from dlbkit.families.graph.face.family import LEGEND
from dlbkit.plots import gantt

__all__ = ["figures"]


def figures(trace, run: str) -> dict:
    """The Gantt chart: one bar per task on its processor (orange: ready, waiting for the processor)."""
    return {"gantt": gantt(trace, title=f"Schedule: {run}, {trace.n_intervals} tasks, makespan {trace.makespan:.4g}",
                           legend=LEGEND)}
