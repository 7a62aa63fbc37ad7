"""The divisible family's plots: its figures of a run (the chunk plots and, for time steps ``balancer="auto"``
ran, its choices) and the drawing of those choices (:func:`auto_steps`, ``dlbkit advise --plot``)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt

from dlbkit.model.trace import Trace
from dlbkit.plots import axes, chunk_figures

__all__ = ["figures", "auto_records", "auto_steps"]


def figures(trace, run: str) -> dict:
    """A Gantt chart and the work done per worker over time; for time steps run by ``balancer="auto"``
    also its choice and the predicted against the measured makespan per step ("auto")."""
    out = chunk_figures(trace, run)
    if auto_records(trace):  # only auto records them: every other run's figures are as they were
        out["auto"] = auto_steps(trace, title=f"auto's choices: {run} (seed {trace.seed})")
    return out


def auto_records(trace: Trace) -> list[tuple[int, dict]]:
    """(step, record) for each time step of *trace* that ``balancer="auto"`` ran
    (``meta["time_steps"][k]["auto"]``, docs/loop.md); empty for any other trace."""
    return [(k, s["auto"]) for k, s in enumerate(trace.meta.get("time_steps") or []) if "auto" in s]


def auto_steps(trace: Trace, ax=None, *, title: str | None = None):
    """A time-stepping run under ``balancer="auto"``: per step the measured makespan (dots coloured by
    the balancer used), the prediction for that balancer made at the last evaluation (crosses), and
    the evaluations (dotted lines between steps, labelled with the rule chosen for the next step)."""
    fig, ax = axes(ax, (8, 4), margins=(0.8, 0.2, 0.4, 0.55))
    rows = auto_records(trace)
    if not rows:
        ax.text(0.5, 0.5, "no auto record in this trace", ha="center", va="center", transform=ax.transAxes)
        return fig
    order = [a["used"] for _, a in rows]
    used = sorted(set(order), key=order.index)  # first use first: the legend reads in time order
    colours = {n: plt.cm.tab10(i % 10) for i, n in enumerate(used)}
    for n in used:
        ks = [k for k, a in rows if a["used"] == n]
        ax.plot(ks, [a["measured"] for _, a in rows if a["used"] == n], "o", color=colours[n],
                label=f"measured ({n})")
    pk = [(k, a["predicted"]) for k, a in rows if a.get("predicted") is not None and math.isfinite(a["predicted"])]
    if pk:
        ax.plot([k for k, _ in pk], [p for _, p in pk], "x", color="black", label="predicted for the balancer used")
    for k, a in rows:
        if a.get("evaluated"):
            ax.axvline(k + 0.5, color="grey", lw=0.6, ls=":")
            ax.annotate(a["next"], (k + 0.5, ax.get_ylim()[1]), fontsize=7, rotation=90, va="top", ha="right")
    n_steps = len(trace.meta.get("time_steps") or [])
    evaluations = sum(1 for _, a in rows if a.get("evaluated"))
    ax.set_xlabel("time step")
    ax.set_ylabel("step makespan (s)")
    ax.set_title((f"{title}: " if title else "balancer auto: ") + f"{n_steps} steps, {evaluations} evaluations",
                 fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig
