"""The bags family's plots: the shared Gantt chart, and one of its own (each node's tasks stacked)."""

from __future__ import annotations

import numpy as np

from dlbkit.model.trace import Trace

__all__ = ["LEGEND", "CAPTIONS", "figures", "task_stack"]

#: the report's label and caption of each plot kind (``Family.figure_captions``)
CAPTIONS = {"gantt": ("Gantt", "Gantt chart: a bar per task; orange = placed, waiting for its node, blank = idle."),
            "stack": ("task stack", "Below it, each node's tasks stacked in the order it ran them (busy seconds).")}
#: the Gantt chart's labels as this family's trace means them (``Family.gantt_legend``)
LEGEND = {"wait": "placed, waiting for its node", "busy": "computing (tasks alternate shades)"}


def task_stack(trace: Trace, ax=None, *, title: str | None = None):
    """Per node, a bar of its tasks' seconds stacked in the order it ran them (each task a segment,
    labelled with its index): how the dispatcher filled the nodes."""
    import matplotlib.pyplot as plt

    fig, ax = (plt.subplots(figsize=(7, 3.5)) if ax is None else (ax.figure, ax))
    ct = trace.intervals()
    order = np.lexsort((ct["t_start"], ct["node"]))
    base = np.zeros(trace.n_nodes)
    for k in order:
        node, secs = int(ct["node"][k]), float(ct["t_end"][k] - ct["t_start"][k])
        ax.bar(node, secs, bottom=base[node], color=f"C{int(ct['first'][k]) % 10}", edgecolor="white")
        if secs > 0.05 * max(trace.makespan, 1e-12):
            ax.text(node, base[node] + secs / 2, str(int(ct["first"][k])), ha="center", va="center", fontsize=7)
        base[node] += secs
    ax.set_xticks(range(trace.n_nodes), trace.node_labels() or [str(i) for i in range(trace.n_nodes)])
    ax.set_xlabel("node")
    ax.set_ylabel("busy seconds (tasks stacked)")
    ax.set_title(title or f"Tasks per node: {trace.balancer}")
    return fig


def figures(trace: Trace, run: str) -> dict:
    """The figures of one run: the shared Gantt chart and the family's task stack."""
    from dlbkit.plots import gantt

    return {"gantt": gantt(trace, title=f"Gantt chart: {run} (seed {trace.seed}), makespan {trace.makespan:.4g} s",
                           legend=LEGEND),
            "stack": task_stack(trace, title=f"Tasks per node: {run}")}
