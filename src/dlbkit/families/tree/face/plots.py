"""The tree family's plots: its figures of a run (the chunk plots, a chunk being a task here, and the waiting
tasks per node) and the waiting tasks over time with the workload's three phases (001 §2.7)."""

from __future__ import annotations

import math
from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from dlbkit.model.trace import Trace
from dlbkit.plots import chunk_figures

__all__ = ["figures", "HEATMAP_ROWS", "tasks_over_time", "workload_phases"]

#: the most rows of a per-node heat map (waiting tasks over time); more nodes share a row
HEATMAP_ROWS = 1024


def figures(trace, run: str) -> dict:
    """The chunk plots (a chunk is a task here), and waiting tasks per node with n(t)'s phases."""
    out = chunk_figures(trace, run)
    if trace.meta.get("queues"):
        out["tasks"] = tasks_over_time(trace, title=f"Waiting tasks per node: {run}")
    return out


def workload_phases(times: Sequence[float], waiting: Sequence[int], p: int) -> tuple[float, float]:
    """The two transition times of 001 §2.7 read off a waiting-task series with c1 = c2 = 1: phase I
    (filling) lasts until n(t) first reaches p, phase III (emptying) starts when n(t) last falls
    below p (n(t) is not monotone, so this is known only afterwards). (nan, nan) if n never reaches p."""
    n = np.asarray(waiting)
    hit = np.flatnonzero(n >= p)
    if not len(hit):
        return math.nan, math.nan
    last = hit[-1] + 1
    return float(times[hit[0]]), float(times[last]) if last < len(times) else float(times[-1])


def tasks_over_time(trace: Trace, ax=None, *, title: str | None = None):
    """Waiting tasks per node over time (a heat map, node by node) above the total n(t), with the
    three workload phases of 001 §2.7 shaded (filling, steady, emptying, read from n(t) against p)
    and, dashed, the transitions a phase-adaptive balancer detected while running. Needs a trace of
    the asynchronous tree engine (``meta["queues"]``)."""
    series = trace.meta.get("waiting") or []
    queues = trace.meta.get("queues") or []
    if not series or not queues:
        raise ValueError("tasks_over_time needs a task-tree trace with meta['waiting'] and meta['queues']")
    times = np.array([t for t, _ in series], dtype=float)
    n = np.array([x for _, x in series], dtype=float)
    q = np.asarray(queues, dtype=float).T  # nodes x samples
    P = q.shape[0]
    if ax is None:
        fig, (ax_q, ax_n) = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True,
                                         gridspec_kw={"height_ratios": [3, 2]})
        fig.subplots_adjust(left=0.08, right=0.9, top=0.93, bottom=0.09, hspace=0.08)
    else:
        fig, ax_q, ax_n = ax.figure, None, ax
    if ax_q is not None:
        edges = np.concatenate((times, [times[-1]]))
        vmax = max(1.0, float(np.percentile(q, 99)))
        # beyond HEATMAP_ROWS nodes a row is a band of k nodes (their most waiting tasks), still on
        # the node axis: a cell per node and sample was 1.2 GB to draw at 16 384 nodes
        k = -(-P // HEATMAP_ROWS)
        if k > 1:
            pad = np.zeros((-P % k, q.shape[1]))
            q = np.concatenate((q, pad)).reshape(-1, k, q.shape[1]).max(axis=1)
        rows = np.minimum(np.arange(q.shape[0] + 1) * k, P) - 0.5
        mesh = ax_q.pcolormesh(edges, rows, q[:, :], shading="flat", cmap="magma_r", vmin=0, vmax=vmax)
        ax_q.set_ylabel("node" if k == 1 else f"node (bands of {k}: their most waiting tasks)")
        cax = fig.add_axes((0.915, 0.5, 0.015, 0.43))
        fig.colorbar(mesh, cax=cax, label="waiting tasks")
        ax_q.set_title(title or f"Waiting tasks per node: {trace.balancer} (seed {trace.seed})")
    ax_n.step(times, n, where="post", color="k", lw=1.2, label="n(t): waiting tasks, all nodes")
    ax_n.axhline(P, color="0.4", lw=0.8, ls=":", label=f"p = {P}")
    t1, t2 = workload_phases(times, n, P)
    end = float(times[-1])
    if not math.isnan(t1):
        for a, b, c, name in ((0.0, t1, "#cfe8ff", "I filling"), (t1, t2, "#d9f2d0", "II steady"),
                              (t2, end, "#ffe2c6", "III emptying")):
            ax_n.axvspan(a, b, color=c, alpha=0.7, lw=0, label=f"phase {name}")
    for t, ph in trace.meta.get("phases", [])[1:]:
        ax_n.axvline(t, color="tab:red", ls="--", lw=1.0)
        ax_n.annotate(f"→ {['', 'I', 'II', 'III'][ph] if ph in (1, 2, 3) else ph}", (t, ax_n.get_ylim()[1]),
                      xytext=(2, -10), textcoords="offset points", color="tab:red", fontsize=8)
    ax_n.set_yscale("symlog", linthresh=max(1, P))
    ax_n.set_xlim(0, end)
    ax_n.set_xlabel("time (s)")
    ax_n.set_ylabel("waiting tasks")
    ax_n.legend(loc="lower left", fontsize=7, ncol=2)
    ax_n.grid(alpha=0.3)
    return fig
