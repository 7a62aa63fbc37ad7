"""The plots every family draws with (matplotlib): a run's Gantt chart and work done over time, a sweep's
bars per balancer, and the axes they are drawn on. Depends only on the model. A plot only one family draws is
that family's (``dlbkit.families.<family>.face.plots``).

Importing this module never chooses a matplotlib backend (the user's stays as it is); the CLI, which
only writes files, selects Agg itself.

Every function takes an optional *ax* and returns the Figure it drew on.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.cbook import pts_to_poststep
from matplotlib.collections import Collection, LineCollection
from matplotlib.colors import to_rgba
from matplotlib.patches import Patch
from matplotlib.path import Path
from matplotlib.transforms import Bbox, IdentityTransform

from dlbkit.model.metrics import METRICS
from dlbkit.model.names import slug
from dlbkit.model.trace import Trace

__all__ = ["chunk_figures", "GANTT_LEGEND", "GANTT_ROWS", "gantt", "work_over_time", "makespan_bars", "efficiency_bars",
           "metric_bars", "axes", "slug"]

_BUSY = ("#1f77b4", "#5fa2d6")  # alternate shades so consecutive chunks stay distinguishable
_BUSY_RGBA = np.array([to_rgba(c) for c in _BUSY])
_WAIT = "#f2a541"  # asked for work, waiting for it (scheduling + communication)
_LOAD = "#d62728"  # background load: availability below 1

#: the Gantt legend's labels (a family relabels what its trace means otherwise: ``Family.gantt_legend``)
GANTT_LEGEND = {"busy": "computing (chunks alternate shades)", "wait": "waiting for work (request + reply)",
                "idle": "idle"}


def axes(ax, size, margins=(0.9, 0.3, 0.4, 0.65)):
    """A new figure of *size* inches with fixed *margins* (left, right, top, bottom, in inches:
    cheaper than a constrained layout), or *ax*'s figure."""
    if ax is None:
        fig, ax = plt.subplots(figsize=size)
        w, h = size
        left, right, top, bottom = margins
        fig.subplots_adjust(left=left / w, right=1 - right / w, top=1 - top / h, bottom=bottom / h)
        return fig, ax
    return ax.figure, ax


def _worker_labels(trace: Trace) -> list[str]:
    """One label per row: the platform node's name (``meta["node_names"]``, as simulations record
    it; "/k" numbers the workers of a node with several cores) and speed; ``worker i`` for a real
    run, whose workers are processes rather than platform nodes."""
    speeds = trace.speeds or [math.nan] * trace.n_nodes
    names = trace.node_labels()
    if names is None:
        return [f"worker {i} (s={s:g})" for i, s in enumerate(speeds)]
    return [f"{name} (s={s:g})" for name, s in zip(names, speeds)]


#: the most worker rows a Gantt chart grows tall for (more share its height and every k-th is labelled)
GANTT_ROWS = 256


class _Rectangles(Collection):
    """Axis-aligned rectangles as one unit square and an affine map per rectangle (72 B, and 16 B of
    zero offset, which Agg needs to draw more than one): a PolyCollection keeps a ``Path`` per
    rectangle, about 800 B a chunk while a Gantt chart is drawn (BENCHMARKS.md)."""

    _UNIT = Path([(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0), (0.0, 0.0)], closed=True)

    def __init__(self, x0, dx, y0, dy, **kwargs):
        n = len(x0)
        super().__init__(offsets=np.zeros((n, 2)), offset_transform=IdentityTransform(), **kwargs)
        maps = np.zeros((n, 3, 3))
        maps[:, 0, 0], maps[:, 0, 2], maps[:, 1, 1], maps[:, 1, 2], maps[:, 2, 2] = dx, x0, dy, y0, 1.0
        self._transforms = maps
        self._paths = [self._UNIT]

    def get_datalim(self, transData):
        """The bounds of the corners (and their least positive x and y, for log scales), as
        Collection.get_datalim finds them through every mapped square: that took longer than the
        rest of the drawing at a million rectangles."""
        if self.get_transform() is not transData:
            return super().get_datalim(transData)
        m = self._transforms
        x0, y0 = m[:, 0, 2], m[:, 1, 2]
        corners = np.column_stack((np.concatenate((x0, x0 + m[:, 0, 0])), np.concatenate((y0, y0 + m[:, 1, 1]))))
        box = Bbox.null()
        box.update_from_data_xy(corners, ignore=True)
        return box


def _rects(ax, x0, dx, y0, dy: float, colours) -> None:
    """Rectangles [x0, x0 + dx] × [y0, y0 + dy] (arrays) as one collection, with the corners, in the
    order, ``Axes.broken_barh`` gives them, and no edges."""
    x0, y0 = np.asarray(x0, dtype=float), np.asarray(y0, dtype=float)
    if not len(x0):
        return
    ax.add_collection(_Rectangles(x0, np.asarray(dx, dtype=float), y0, np.broadcast_to(float(dy), x0.shape),
                                  facecolors=colours, linewidth=0))


def gantt(trace: Trace, ax=None, *, title: str | None = None, show_load: bool = True,
          legend: Mapping[str, str] | None = None):
    """Per worker, a bar per chunk from ``t_start`` to ``t_end``; the wait between asking for work
    and receiving it (``t_ask`` → ``t_start``) in orange; idle time left blank; with *show_load*,
    periods of background load (availability < 1) shaded red behind the bars. *legend* replaces
    labels of :data:`GANTT_LEGEND` (``busy``, ``wait``, ``idle``; a family's ``gantt_legend``)."""
    labels = {**GANTT_LEGEND, **(legend or {})}
    if set(labels) != set(GANTT_LEGEND):
        raise ValueError(f"legend keys {sorted(set(labels) - set(GANTT_LEGEND))} are not among {sorted(GANTT_LEGEND)}")
    P = trace.n_nodes
    own = ax is None
    # the figure grows with the rows up to GANTT_ROWS of them, then stays that tall (beyond it the
    # rows get thinner and every k-th is labelled): 0.32 inch per row would be a 2.8 GB image at
    # 16 384 workers
    fig, ax = axes(ax, (11, max(3.0, 0.32 * min(P, GANTT_ROWS) + 1.5)), margins=(1.35, 0.2, 0.4, 0.85))
    ct = trace.intervals()
    end = trace.makespan or 1.0
    # every rectangle goes into one collection per kind (load, wait, busy), in the order the rows
    # drew them one collection per row before: rows do not overlap, so the picture is the same,
    # without a pass over all chunks and a collection per row (P of each at P workers)
    if show_load and trace.availability:
        load, rows_of, shades = [], [], []
        for i, a in enumerate(trace.availability[:P]):
            times, levels = a.segments_until(end)
            bounds = list(times[1:]) + [end]
            spans = [(t0, t1 - t0) for t0, t1, lv in zip(times, bounds, levels) if lv < 1.0 and t1 > t0]
            alphas = [0.15 + 0.45 * (1.0 - lv) for lv in levels if lv < 1.0]
            for (t0, w), al in zip(spans, alphas):
                load.append((t0, w))
                rows_of.append(i - 0.48)
                shades.append(to_rgba(_LOAD, al))
        spans = np.array(load, dtype=float).reshape(-1, 2)
        _rects(ax, spans[:, 0], spans[:, 1], rows_of, 0.96, shades)
    nodes = np.asarray(ct["node"])
    order = np.lexsort((ct["t_start"], nodes))  # by worker, then start; stable, as a sort per worker was
    starts, ends, asks = ct["t_start"][order], ct["t_end"][order], ct["t_ask"][order]
    rows = nodes[order]
    # a chunk's place among its worker's chunks, for the alternate shades
    first_of_row = np.searchsorted(rows, rows, side="left")
    k = np.arange(len(rows)) - first_of_row
    w = starts > asks
    _rects(ax, asks[w], starts[w] - asks[w], rows[w] - 0.3, 0.6, _WAIT)
    _rects(ax, starts, ends - starts, rows - 0.3, 0.6, _BUSY_RGBA[k % 2])  # RGBA: no name to parse per chunk
    step = -(-P // GANTT_ROWS)  # label every step-th row: at most GANTT_ROWS labels
    ax.set_yticks(range(0, P, step), _worker_labels(trace)[::step], fontsize=7 if P > 12 else 9)
    ax.set_ylim(P - 0.5, -0.5)
    ax.set_xlim(0, end * 1.01)
    ax.set_xlabel("time (s)")
    ax.set_title(title or f"Gantt chart: {trace.balancer} (seed {trace.seed}), {trace.n_intervals} chunks, "
                 f"makespan {end:.4g} s")
    handles = [Patch(color=_BUSY[0], label=labels["busy"]), Patch(color=_WAIT, label=labels["wait"]),
               Patch(color="white", ec="grey", label=labels["idle"])]
    if show_load and trace.availability:
        handles.append(Patch(color=_LOAD, alpha=0.4, label="background load (availability < 1)"))
    if own:
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    else:
        ax.legend(handles=handles, loc="best", fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    return fig


def chunk_figures(trace: Trace, run: str) -> dict:
    """The figures of a run made of chunks (stretches of work on a node): its Gantt chart and the work done per
    worker over time, kind → Figure (the families whose runs are chunks draw these and add their own)."""
    end = trace.makespan
    return {"gantt": gantt(trace, title=f"Gantt chart: {run} (seed {trace.seed}), {trace.n_intervals} chunks, "
                                      f"makespan {end:.4g} s"),
            "work": work_over_time(trace, title=f"Work done per worker: {run}")}


def work_over_time(trace: Trace, ax=None, *, title: str | None = None, interpolate: bool = True):
    """Cumulative items completed per worker over time, coloured by worker speed.

    The trace records chunks, not items: with *interpolate* (default) a chunk's items count as done
    at a constant rate between its ``t_start`` and ``t_end`` (so slopes show each worker's
    throughput, and background load shows as a flatter stretch); otherwise they count at ``t_end``
    (a step per finished chunk, what the master sees)."""
    P = trace.n_nodes
    fig, ax = axes(ax, (10, 5.5), margins=(0.8, 0.2, 0.4, 0.55))
    ct = trace.intervals()
    speeds = np.asarray(trace.speeds if trace.speeds else [1.0] * P, dtype=float)
    norm = plt.Normalize(speeds.min(), speeds.max() if speeds.max() > speeds.min() else speeds.min() + 1)
    cmap = plt.get_cmap("viridis")
    end = trace.makespan or 1.0
    nodes = np.asarray(ct["node"])
    by_end = np.lexsort((ct["t_end"], nodes))  # by worker, then end (stable): one sort, not a pass per worker
    bounds = np.searchsorted(nodes[by_end], np.arange(P + 1))
    # beyond GANTT_ROWS workers the lines go into one collection and every k-th worker is labelled: a
    # line and a label per worker took 55 s to draw at 8 192 workers (and could not be read)
    many = P > GANTT_ROWS
    step = -(-P // GANTT_ROWS)
    lines, colours = [], []
    for i in range(P):
        order = by_end[bounds[i]:bounds[i + 1]]
        done = np.cumsum(ct["count"][order])
        colour = cmap(norm(speeds[i]))
        if not len(done):  # a worker that never got work: a flat line at zero
            t, n = [0.0, end], [0, 0]
        elif interpolate:
            before = np.concatenate(([0], done[:-1]))
            t = np.concatenate(([0.0], np.column_stack((ct["t_start"][order], ct["t_end"][order])).ravel(), [end]))
            n = np.concatenate(([0], np.column_stack((before, done)).ravel(), [done[-1] if len(done) else 0]))
        else:
            t = np.concatenate(([0.0], ct["t_end"][order], [end]))
            n = np.concatenate(([0], done, [done[-1] if len(done) else 0]))
            if many:
                t, n = pts_to_poststep(t, n)
            else:
                ax.step(t, n, where="post", color=colour, lw=1.3)
        if many:
            lines.append(np.column_stack((t, n)))
            colours.append(colour)
        elif interpolate or not len(done):
            ax.plot(t, n, color=colour, lw=1.3)
        if len(done) and i % step == 0:
            ax.annotate(f"w{i}", (end, done[-1]), xytext=(3, 0), textcoords="offset points", fontsize=6,
                        va="center", color=colour)
    if lines:
        ax.add_collection(LineCollection(lines, colors=colours, linewidths=1.3))
    ax.set_xlim(0, end * 1.01)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("items completed" + (" (linear within a chunk)" if interpolate else ""))
    ax.set_title(title or f"Work done per worker: {trace.balancer} (seed {trace.seed})")
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, label="worker speed (work units/s)")
    ax.grid(alpha=0.3)
    return fig


def metric_bars(summary: Sequence, metric: str, ax=None, *, title: str | None = None,
                meaning: tuple[str, str] | None = None):
    """Mean *metric* per balancer label with 95% CI error bars; grouped by grid point if several.
    *meaning*: the metric's (description, better direction), e.g. a family's own metric's
    (``dlbkit.families.metrics_table()``); None: METRICS' entry, if any."""
    stats = [s for s in summary if s.metric == metric]
    labels = list(dict.fromkeys(s.label for s in stats))
    points = list(dict.fromkeys(s.point for s in stats))
    rotate = len(labels) > 5
    fig, ax = axes(ax, (max(6.0, 0.55 * len(labels) * max(1, len(points)) + 2), 4.8 + (0.6 if rotate else 0)),
                    margins=(0.9, 0.2, 0.4, 1.3 if rotate else 0.5))
    by = {(s.label, s.point): s for s in stats}
    width = 0.8 / max(1, len(points))
    x = np.arange(len(labels))
    for j, p in enumerate(points):
        means = [by[(lbl, p)].mean if (lbl, p) in by else np.nan for lbl in labels]
        cis = [by[(lbl, p)].ci95 if (lbl, p) in by else 0.0 for lbl in labels]
        cis = [0.0 if not math.isfinite(c) else c for c in cis]
        pos = x - 0.4 + width * (j + 0.5)
        ax.bar(pos, means, width * 0.9, yerr=cis, capsize=3, label=p or None,
               color=plt.get_cmap("tab10")(j % 10), ecolor="black", error_kw={"lw": 1})
    ax.set_xticks(x, labels, rotation=45 if rotate else 0, ha="right" if rotate else "center")
    desc, direction = meaning or METRICS.get(metric, (metric, "lower"))
    ax.set_ylabel(metric + (" (s)" if desc.endswith("(s)") else ""))
    n = max((s.n for s in stats), default=0)
    ax.set_title(title or f"{metric} ({direction} is better): mean and 95% CI, n = {n} repetitions")
    if metric == "efficiency":  # its ideal: the lower bound reached
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    if len(points) > 1:
        ax.legend(fontsize=8, title="grid point", title_fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def makespan_bars(summary: Sequence, ax=None, **kw):
    """Mean makespan per balancer with 95% confidence-interval error bars."""
    return metric_bars(summary, "makespan", ax, **kw)


def efficiency_bars(summary: Sequence, ax=None, **kw):
    """Mean efficiency (lower bound / makespan) per balancer with 95% CI error bars."""
    return metric_bars(summary, "efficiency", ax, **kw)
