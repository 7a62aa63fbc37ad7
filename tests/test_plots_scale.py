"""Run plots at many workers or chunks: no collection and no pass over every chunk per worker, a
Gantt chart that stops growing taller at GANTT_ROWS rows, and the same picture as the per-worker
drawing below that."""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from dlbkit import (  # noqa: E402
    Divisible,
    Platform,
    plots,  # noqa: E402
    simulate,
)
from dlbkit.plots import GANTT_ROWS, gantt, work_over_time  # noqa: E402


def _platform(workers: int, load: bool = False) -> Platform:
    w = {"name": "w", "count": workers, "speed": 1.0}
    if load:
        w["availability"] = {"kind": "pulse", "start": 1.0, "duration": 2.0, "level": 0.3}
    return Platform.from_dict({"nodes": [{"name": "m", "speed": 1.0}, w]})


def _pixels(fig) -> np.ndarray:
    fig.canvas.draw()
    out = np.asarray(fig.canvas.buffer_rgba()).copy()
    plt.close(fig)
    return out


def _gantt_per_worker(trace):
    """The chart as it was drawn before: one ``broken_barh`` per worker and kind (the reference)."""
    P = trace.n_nodes
    fig, ax = plots.axes(None, (11, max(3.0, 0.32 * P + 1.5)), margins=(1.35, 0.2, 0.4, 0.85))
    ct = trace.intervals()
    end = trace.makespan or 1.0
    if trace.availability:
        for i, a in enumerate(trace.availability[:P]):
            times, levels = a.segments_until(end)
            bounds = list(times[1:]) + [end]
            spans = [(t0, t1 - t0) for t0, t1, lv in zip(times, bounds, levels) if lv < 1.0 and t1 > t0]
            alphas = [0.15 + 0.45 * (1.0 - lv) for lv in levels if lv < 1.0]
            for (t0, w), al in zip(spans, alphas):
                ax.broken_barh([(t0, w)], (i - 0.48, 0.96), facecolors=plots._LOAD, alpha=al, linewidth=0)
    for i in range(P):
        sel = np.flatnonzero(ct["node"] == i)
        if not len(sel):
            continue
        order = sel[np.argsort(ct["t_start"][sel], kind="stable")]
        starts, ends, asks = ct["t_start"][order], ct["t_end"][order], ct["t_ask"][order]
        waits = [(a, s - a) for a, s in zip(asks, starts) if s > a]
        if waits:
            ax.broken_barh(waits, (i - 0.3, 0.6), facecolors=plots._WAIT, linewidth=0)
        bars = list(zip(starts, ends - starts))
        ax.broken_barh(bars, (i - 0.3, 0.6), facecolors=[plots._BUSY[k % 2] for k in range(len(bars))], linewidth=0)
    return fig, ax


def _finish_like_gantt(fig, ax, trace):
    """Everything gantt() draws after the bars, so the two pictures can be compared pixel by pixel."""
    new = gantt(trace)
    new_ax = new.axes[0]
    ax.set_yticks(new_ax.get_yticks(), [t.get_text() for t in new_ax.get_yticklabels()], fontsize=7 if trace.n_nodes > 12 else 9)
    ax.set_ylim(new_ax.get_ylim())
    ax.set_xlim(new_ax.get_xlim())
    ax.set_xlabel("time (s)")
    ax.set_title(new_ax.get_title())
    handles = new.legends[0].legend_handles
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    return _pixels(new)


@pytest.mark.parametrize("workers,balancer,load", [(16, "ss", True), (40, "gss", False), (GANTT_ROWS, "fac2", True)])
def test_gantt_is_the_per_worker_picture_up_to_gantt_rows(workers, balancer, load):
    trace = simulate(_platform(workers, load), Divisible(20 * workers), balancer, seed=2).trace
    fig, ax = _gantt_per_worker(trace)
    new = _finish_like_gantt(fig, ax, trace)
    old = _pixels(fig)
    assert old.shape == new.shape
    assert np.array_equal(old, new)


def test_gantt_draws_one_collection_per_kind_not_per_worker(monkeypatch):
    """It drew two ``broken_barh`` collections per worker (and one per load span): 2 P artists."""
    trace = simulate(_platform(300, load=True), Divisible(3000), "gss", seed=1).trace

    def refuse(*a, **k):
        raise AssertionError("broken_barh: a collection per worker")

    monkeypatch.setattr(Axes, "broken_barh", refuse)
    fig = gantt(trace)
    cols = fig.axes[0].collections
    assert len(cols) == 3  # load, wait, busy
    # one unit square per collection and a map per rectangle, not a Path per rectangle (~800 B each)
    assert [len(c.get_paths()) for c in cols] == [1, 1, 1]
    assert sum(len(c.get_transforms()) for c in cols[1:]) == trace.n_intervals + sum(
        1 for a, s in zip(trace.t_ask, trace.t_start) if s > a)
    plt.close(fig)


@pytest.mark.parametrize("workers", [GANTT_ROWS + 1, 1000])
def test_gantt_stops_growing_at_gantt_rows(workers):
    """0.32 inch per row made 1 210 × 144 000 pixels (700 MB) at 4 096 workers."""
    trace = simulate(_platform(workers), Divisible(2 * workers), "gss", seed=1).trace
    fig = gantt(trace)
    assert fig.get_size_inches()[1] == pytest.approx(0.32 * GANTT_ROWS + 1.5)
    step = math.ceil(workers / GANTT_ROWS)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == len(range(0, workers, step)) <= GANTT_ROWS
    assert list(fig.axes[0].get_yticks()) == list(range(0, workers, step))
    assert labels[1] == plots._worker_labels(trace)[step]
    assert fig.axes[0].get_ylim() == (workers - 0.5, -0.5)
    plt.close(fig)


def test_work_over_time_sorts_once(monkeypatch):
    """It selected each worker's chunks with a pass over all chunks (P × chunks comparisons); now one
    sort: the lines are the same as the per-worker selection's."""
    trace = simulate(_platform(12, load=True), Divisible(600), "fac2", seed=4).trace
    ct = trace.intervals()
    want = []
    for i in range(trace.n_nodes):
        sel = np.flatnonzero(ct["node"] == i)
        order = sel[np.argsort(ct["t_end"][sel], kind="stable")]
        want.append(np.cumsum(ct["count"][order]))

    def refuse(*a, **k):
        raise AssertionError("a pass over all chunks per worker")

    monkeypatch.setattr(plots.np, "flatnonzero", refuse)
    fig = work_over_time(trace, interpolate=False)
    lines = fig.axes[0].get_lines()
    assert len(lines) == trace.n_nodes
    for line, done in zip(lines, want):
        assert list(line.get_ydata()[1:-1]) == list(done)
    plt.close(fig)


@pytest.mark.parametrize("interpolate", [True, False])
def test_work_over_time_beyond_gantt_rows_is_one_collection(interpolate):
    """A line and a label per worker took 55 s to draw at 8 192 workers; beyond GANTT_ROWS workers
    the lines are one collection (the same points) and every k-th worker is labelled."""
    workers = 2 * GANTT_ROWS + 3
    trace = simulate(_platform(workers), Divisible(3 * workers), "gss", seed=1).trace
    fig = work_over_time(trace, interpolate=interpolate)
    ax = fig.axes[0]
    assert not ax.get_lines()
    (lines,) = ax.collections
    paths = lines.get_paths()
    assert len(paths) == workers
    ct = trace.intervals()
    for i in (0, workers // 2, workers - 1):
        mine = np.flatnonzero(ct["node"] == i)
        done = np.cumsum(ct["count"][mine[np.argsort(ct["t_end"][mine], kind="stable")]])
        y = paths[i].vertices[:, 1]
        assert y[-1] == (done[-1] if len(done) else 0)
        assert sorted(set(y)) == sorted({0, *done.tolist()})
    step = math.ceil(workers / GANTT_ROWS)
    assert [t.get_text() for t in ax.texts] == [f"w{i}" for i in range(0, workers, step)
                                                 if np.any(ct["node"] == i)]
    plt.close(fig)


def test_waiting_tasks_heat_map_bands_nodes_beyond_heatmap_rows():
    """A cell per node and sample was 1.2 GB to draw at 16 384 nodes: beyond HEATMAP_ROWS nodes a
    row is a band of k nodes holding their most waiting tasks, on the same node axis."""
    from dlbkit.families.tree.model.workload import tree_from_dict
    from dlbkit.families.tree.face.plots import HEATMAP_ROWS, tasks_over_time

    P = HEATMAP_ROWS + 5
    p = Platform.from_dict({"nodes": [{"name": "pe", "count": P, "speed": 5.8e6}],
                            "network": {"latency": 8.6e-6, "bandwidth": 1e8}})
    tree = tree_from_dict({"shape": "imbalance", "imbalance": 0.2, "depth": 12, "fanout": 2, "grain": 1000, "seed": 1})
    trace = simulate(p, tree, "steal", seed=1).trace
    fig = tasks_over_time(trace)
    (mesh,) = fig.axes[0].collections
    q = np.asarray(trace.meta["queues"], dtype=float).T
    k = 2
    want = np.concatenate((q, np.zeros((1, q.shape[1])))).reshape(-1, k, q.shape[1]).max(axis=1)
    got = np.asarray(mesh.get_array()).reshape(want.shape)
    assert np.array_equal(got, want) and want.shape[0] == -(-P // k) <= HEATMAP_ROWS
    rows = mesh.get_coordinates()[:, 0, 1]
    assert list(rows) == [min(i * k, P) - 0.5 for i in range(want.shape[0] + 1)]
    assert mesh.norm.vmax == max(1.0, float(np.percentile(q, 99)))
    assert fig.axes[0].get_ylabel() == "node (bands of 2: their most waiting tasks)"
    plt.close(fig)


def test_gantt_rectangles_give_the_data_limits_matplotlib_finds_through_their_paths():
    """_Rectangles computes its data limits from the corners; Collection.get_datalim, which maps the
    unit square once per rectangle, is the reference (bounds and the least positive x and y)."""
    from matplotlib.collections import Collection
    trace = simulate(_platform(7, load=True), Divisible(300), "gss", seed=3).trace
    fig = gantt(trace)
    ax = fig.axes[0]
    for c in ax.collections:
        mine, ref = c.get_datalim(ax.transData), Collection.get_datalim(c, ax.transData)
        assert mine.bounds == ref.bounds and list(mine.minpos) == list(ref.minpos)
    assert ax.dataLim.bounds[1] == -0.48  # the load's shading reaches 0.48 above the first row
    plt.close(fig)
