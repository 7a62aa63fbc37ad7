"""The SPMD family's plots: its figures of a run and what they draw, a line per workstation over the loops
(loop times, data points held)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from dlbkit.model.trace import Trace
from dlbkit.plots import axes

__all__ = ["figures", "spmd_loop_times", "spmd_points"]


def figures(trace, run: str) -> dict:
    """Loop time and data points per workstation over the loops (an SPMD run has loops, not chunks)."""
    return {"looptime": spmd_loop_times(trace, title=f"Loop time per workstation: {run} (seed {trace.seed}), "
                                                     f"makespan {trace.makespan:.4g} s"),
            "points": spmd_points(trace, title=f"Data points per workstation: {run}, "
                                               f"{trace.moved:,} DP moved")}


def _per_workstation(trace: Trace, values: np.ndarray, ax, ylabel: str, title: str):
    """One line per workstation over the loops, coloured along a colour map; dotted lines at the
    loops at whose end a transfer was decided."""
    loops, P = values.shape
    fig, ax = axes(ax, (10, 5), margins=(0.9, 1.1, 0.4, 0.55))
    cmap = plt.get_cmap("viridis" if P > 10 else "tab10")
    x = np.arange(loops)
    for i in range(P):
        colour = cmap(i / max(1, P - 1)) if P > 10 else cmap(i % 10)
        ax.plot(x, values[:, i], color=colour, lw=1.0, label=f"WS {i}")
    for k in sorted({t[0] for t in trace.transfers}):
        ax.axvline(k + 0.5, color="0.6", lw=0.5, ls=":")
    ax.set_xlim(0, max(1, loops - 1))
    ax.set_xlabel("loop")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if P <= 16:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    ax.grid(alpha=0.3)
    return fig


def spmd_loop_times(trace: Trace, ax=None, *, title: str | None = None):
    """Pipelined SPMD (Osman 2003, 000 §8 figures): each workstation's loop time (busy seconds:
    compute + swap + boundaries + transfers) per loop; dotted: loops ending in a balancing decision."""
    return _per_workstation(trace, trace.series["loop_time"], ax, "loop time (s)",
                            title or f"Loop time per workstation: {trace.balancer} (seed {trace.seed})")


def spmd_points(trace: Trace, ax=None, *, title: str | None = None):
    """Pipelined SPMD (000): data points (DP) each workstation holds per loop; they change only by
    balancing transfers, so flat lines mean no balancing."""
    return _per_workstation(trace, trace.series["points"], ax, "data points (DP)",
                            title or f"Data points per workstation: {trace.balancer} (seed {trace.seed})")
