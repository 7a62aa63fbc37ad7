"""The stream family's plots: its figures of a run, the queues per node over time and the response-time CDF."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from dlbkit.families.stream.face.family import response_times

__all__ = ["figures"]


def figures(trace, run: str) -> dict:
    """Queue length per node over time (a heat map) and the response-time CDF of the run."""
    out = {}
    s = trace.series
    if "queue" in s and len(s["queue"]) > 1:
        q = s["queue"].T.astype(float)
        t = s["queue_time"]
        fig, ax = plt.subplots(figsize=(10, 4.5))
        edges = np.concatenate((t, [t[-1] + (t[-1] - t[-2])]))
        mesh = ax.pcolormesh(edges, np.arange(q.shape[0] + 1) - 0.5, q, shading="flat", cmap="magma_r",
                             vmin=0, vmax=max(1.0, float(np.percentile(q, 99))))
        fig.colorbar(mesh, ax=ax, label="tasks in the node's system")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("node")
        ax.set_title(f"Queue length per node: {run}")
        out["queues"] = fig
    r = np.sort(response_times(trace))
    if len(r):
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.step(r, np.arange(1, len(r) + 1) / len(r), where="post")
        ax.set_xscale("log" if r[0] > 0 and r[-1] / r[0] > 100 else "linear")
        ax.set_xlabel("response time (s)")
        ax.set_ylabel("share of jobs")
        ax.set_title(f"Response-time CDF: {run}")
        ax.grid(alpha=0.3)
        out["response_cdf"] = fig
    return out
