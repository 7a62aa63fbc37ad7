"""A self-contained HTML report of a sweep: what ran, on what, the comparison, plots and failures."""

from __future__ import annotations

import datetime as _dt
import math
import platform as _pyplatform
from dataclasses import fields, is_dataclass
from html import escape
from pathlib import Path
from typing import Sequence

from dlbkit.model.metrics import METRICS
from dlbkit import families
from dlbkit.face.experiments.summary import Stat, format_cell

__all__ = ["write_report", "describe_availability", "describe_workload"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1200px;color:#222;
padding:0 1em;line-height:1.4}
h1{margin-bottom:.2em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}
td.best{font-weight:bold;background:#e8f5e9}
code,pre{background:#f6f6f6;padding:.1em .3em;border-radius:3px}
pre{padding:.6em;overflow-x:auto}
img{max-width:100%;border:1px solid #eee;margin:.4em 0}
.fail{color:#b00020}.muted{color:#666;font-size:.9em}
details{margin:.4em 0}
"""

#: image kinds the report lays out in a section of their own; any other kind a family declares (job
#: streams' "queues" and "response_cdf") is shown per run after them, with the family's caption for it
#: (``Family.figure_captions``) if it has one
_LAID_OUT = {"bars", "gantt", "work", "tasks", "looptime", "points", "auto"}


def describe_availability(spec) -> str:
    """Short text for an availability spec, e.g. ``pulse: 0.25 from 60 s for 120 s, every 300 s``."""
    kind = type(spec).__name__.lower()
    if kind == "constant":
        return "dedicated" if spec.level == 1.0 else f"constant {spec.level:g}"
    if kind == "step":
        return f"step: {spec.before:g} until {spec.at:g} s, then {spec.level:g}"
    if kind == "pulse":
        text = f"pulse: {spec.level:g} from {spec.start:g} s for {spec.duration:g} s"
        if spec.period is not None:
            text += f", every {spec.period:g} s"
        return text + (f" (else {spec.base:g})" if spec.base != 1.0 else "")
    if kind == "markov":
        return (f"markov on/off: {spec.low:g} when busy (mean {spec.mean_busy:g} s), {spec.high:g} when free "
                f"(mean {spec.mean_free:g} s)")
    if kind == "recorded":
        return f"recorded trace: {len(spec.times)} segments" + (f" from {spec.source}" if spec.source else "")
    if is_dataclass(spec):
        return kind + ": " + ", ".join(f"{f.name}={getattr(spec, f.name)!r}" for f in fields(spec))
    return repr(spec)


def describe_workload(w) -> str:
    """One sentence on workload *w*, by its family (:mod:`dlbkit.families`)."""
    return families.of(w).describe(w)


def _platform_html(exp) -> str:
    p = exp.platform
    master_worker = exp.family.master_worker
    master = exp.engine.get("master", 0)
    master_idx = -1 if not master_worker else p.index(master) if isinstance(master, str) else int(master)
    computes = exp.engine.get("master_computes", False)
    rows = []
    for i, n in enumerate(p.nodes):
        role = "node" if not master_worker else "master" + (" + worker" if computes else "") if i == master_idx \
            else "worker"
        rows.append(f"<tr><td class=l>{escape(n.name)}</td><td class=l>{role}</td><td>{n.speed:g}</td>"
                    f"<td>{n.cores}</td><td class=l>{escape(describe_availability(n.availability))}</td></tr>")
    workers = [n for i, n in enumerate(p.nodes) if computes or i != master_idx]
    speeds = [n.speed for n in workers]
    kinds: dict[str, int] = {}
    for n in workers:
        k = type(n.availability).__name__.lower()
        k = "dedicated" if k == "constant" and n.availability.level == 1.0 else k
        kinds[k] = kinds.get(k, 0) + n.cores
    net = p.network
    summary = (f"<p>{escape(p.name)} ({escape(exp.platform_source)}): {p.n_nodes} nodes, "
               f"{sum(n.cores for n in workers)} workers, speeds {min(speeds):g}–{max(speeds):g} "
               f"(ratio {max(speeds) / min(speeds):.3g}, total {sum(n.speed * n.cores for n in workers):g} work "
               f"units/s); availability: {escape(', '.join(f'{v} {k}' for k, v in kinds.items()))}. "
               f"Network: latency {net.latency:g} s per hop, bandwidth {net.bandwidth:g} B/s, "
               f"{p.n_links} links.</p>")
    return (summary + "<details><summary>nodes</summary><table><tr><th class=l>node</th><th class=l>role</th>"
            "<th>speed</th><th>cores</th><th class=l>availability</th></tr>" + "".join(rows) +
            "</table></details>")


def _comparison_html(summary: Sequence[Stat], family) -> str:
    """Every metric with a value, per grid point; each one's meaning as *family* words it (a tree's
    makespan is its last task's end, a loop's its last chunk's)."""
    meaning = {m: family.describe_metric(m) for m in METRICS}
    by = {(s.label, s.point, s.metric): s for s in summary}
    keys = list(dict.fromkeys((s.label, s.point) for s in summary))
    points = list(dict.fromkeys(p for _, p in keys))
    metrics = [m for m in METRICS if any(s.metric == m and math.isfinite(s.mean) for s in summary)]
    parts = []
    for p in points:
        rows = [k for k in keys if k[1] == p]
        best = {}
        for m in metrics:
            vals = [by[(lbl, p, m)].mean for lbl, _ in rows if (lbl, p, m) in by and math.isfinite(by[(lbl, p, m)].mean)]
            if vals and min(vals) != max(vals):
                best[m] = (min if METRICS[m][1] == "lower" else max)(vals)
        head = "".join(f"<th title='{escape(meaning[m])} ({METRICS[m][1]} is better)'>{escape(m)}</th>"
                       for m in metrics)
        body = []
        for lbl, _ in rows:
            n = max((by[(lbl, p, m)].n for m in metrics if (lbl, p, m) in by), default=0)
            cells = []
            for m in metrics:
                s = by.get((lbl, p, m))
                text = format_cell(s.mean, s.ci95) if s else "n/a"
                cls = " class=best" if s and len(rows) > 1 and best.get(m) == s.mean else ""
                cells.append(f"<td{cls}>{escape(text)}</td>")
            body.append(f"<tr><td class=l>{escape(lbl)}</td><td>{n}</td>{''.join(cells)}</tr>")
        title = f"<h3>grid point {escape(p)}</h3>" if p else ""
        parts.append(f"{title}<table><tr><th class=l>balancer</th><th>n</th>{head}</tr>{''.join(body)}</table>")
    legend = "<ul class=muted>" + "".join(
        f"<li><b>{escape(m)}</b>: {escape(meaning[m])} ({METRICS[m][1]} is better)</li>" for m in metrics) + "</ul>"
    return "".join(parts) + "<p class=muted>mean ± 95% confidence half-width (Student's t) over repetitions; " \
                            "highlighted: best mean per metric.</p>" + legend


def _by_run(images: dict[str, list[Path]], kind: str) -> dict[str, Path]:
    """The figures of one *kind* by run name (a figure is saved as ``<kind>_<run>.png``)."""
    return {p.stem.removeprefix(kind + "_"): p for p in images.get(kind, [])}


def write_report(path: str | Path, sweep, summary: Sequence[Stat], images: dict[str, list[Path]], *,
                 command: str = "") -> Path:
    """Write the HTML report for *sweep* to *path*; images are linked relative to the report."""
    path = Path(path)
    exp = sweep.experiment
    from dlbkit import __version__

    def img(p: Path, alt: str) -> str:
        rel = Path(p).resolve().relative_to(path.parent.resolve()) if Path(p).resolve().is_relative_to(
            path.parent.resolve()) else Path(p)
        return f"<img src='{escape(rel.as_posix())}' alt='{escape(alt)}' loading=lazy>"

    labels = [(b.label, b.name, b.params, b.engine) for b in exp.balancers]
    bal_rows = "".join(
        f"<tr><td class=l>{escape(lbl)}</td><td class=l><code>{escape(nm)}</code></td>"
        f"<td class=l>{escape(', '.join(f'{k}={v!r}' for k, v in prm.items()) or '(defaults)')}</td>"
        f"<td class=l>{escape(', '.join(f'{k}={v!r}' for k, v in eng.items()))}</td></tr>"
        for lbl, nm, prm, eng in labels)
    engine = ", ".join(f"{k} = {v!r}" for k, v in exp.engine.items()) or "defaults"
    grid = "".join(f"<li><code>{escape(k)}</code> = {escape(repr(v))}</li>" for k, v in exp.grid.items())
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>dlbkit: {escape(exp.name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(exp.name)}</h1>",
        f"<p>{escape(exp.description)}</p>" if exp.description else "",
        f"<p class=muted>{len(sweep.rows)} of {exp.n_runs} runs recorded ({sweep.ran} run now, "
        f"{sweep.skipped} reused from results.csv); {exp.repetitions} repetitions × {len(exp.balancers)} "
        f"balancers × {len(exp.points)} grid point(s).</p>",
        "<h2>Platform</h2>", _platform_html(exp),
        "<h2>Workload and engine</h2>",
        f"<p>{escape(describe_workload(exp.workload))}.</p><p>Engine: {escape(engine)}.</p>",
        f"<p>Grid:</p><ul>{grid}</ul>" if grid else "",
        "<details><summary>balancers</summary><table><tr><th class=l>label</th><th class=l>balancer</th>"
        f"<th class=l>parameters</th><th class=l>engine overrides</th></tr>{bal_rows}</table></details>",
        "<h2>Comparison</h2>", _comparison_html(summary, exp.family) if summary else "<p class=fail>no successful runs</p>",
    ]
    bars = images.get("bars", [])
    if bars:
        title = "Makespan and balancing cost" if images.get("looptime") else "Makespan and efficiency"
        parts.append(f"<h2>{title}</h2>" + "".join(img(p, p.stem) for p in bars))
    gantts = images.get("gantt", [])
    if gantts:
        parts.append("<h2>Runs (repetition 0 of each balancer)</h2><p class=muted>Gantt chart: a bar per chunk; "
                     "orange = waiting for work, blank = idle, red shade = background load. Below it, items "
                     "(tasks, for a tree) completed per worker over time.</p>")
        tasks = _by_run(images, "tasks")
        if tasks:
            parts.append("<p class=muted>Task trees: waiting tasks per node over time, and the total n(t) with "
                         "the three workload phases of Haron 1998 §2.7 (filling until n(t) first reaches p, "
                         "emptying after it last falls below p); dashed: phase changes a phase-adaptive "
                         "balancer detected while running.</p>")
        autos = _by_run(images, "auto")
        if autos:
            parts.append("<p class=muted>Time steps under <code>balancer = \"auto\"</code> (repetition 0, "
                         "its seed in the title): per step the measured makespan, coloured by the rule auto "
                         "ran, the prediction for that rule made at the last evaluation (×), and the "
                         "evaluations (dotted, labelled with the rule chosen for the next step).</p>")
        work = _by_run(images, "work")
        for g in gantts:  # a family without a work plot (task graphs) still shows its Gantt charts
            name = g.stem.removeprefix("gantt_")
            extra = img(tasks[name], "waiting tasks " + name) if name in tasks else ""
            extra += img(autos[name], "auto choices " + name) if name in autos else ""
            below = img(work[name], "work over time " + name) if name in work else ""
            parts.append(f"<details open><summary>{escape(name)}</summary>{img(g, 'Gantt ' + name)}"
                         f"{below}{extra}</details>")
    loops, points = images.get("looptime", []), images.get("points", [])
    if loops:
        parts.append("<h2>Runs (repetition 0 of each balancer)</h2><p class=muted>Pipelined SPMD: loop time "
                     "(busy seconds: compute, swap, boundary exchange and transfers) per workstation over the "
                     "loops, and the data points each holds; dotted lines mark loops that ended in a "
                     "balancing transfer.</p>")
        for lt, pt in zip(loops, points):
            name = lt.stem.removeprefix("looptime_")
            parts.append(f"<details open><summary>{escape(name)}</summary>{img(lt, 'loop time ' + name)}"
                         f"{img(pt, 'data points ' + name)}</details>")
    other = [k for k, paths in images.items() if paths and k not in _LAID_OUT]
    if other:  # run plots without a layout of their own above (job streams): grouped by run
        runs: dict[str, list[tuple[str, Path]]] = {}
        for kind in other:
            for p in images[kind]:
                runs.setdefault(p.stem.removeprefix(kind + "_"), []).append((kind, p))
        captions = exp.family.figure_captions
        said = "; ".join(f"{captions.get(k, k)}" for k in other)
        parts.append(f"<h2>Runs (repetition 0 of each balancer)</h2><p class=muted>Per run: {escape(said)}.</p>")
        for name, shown in runs.items():
            parts.append(f"<details open><summary>{escape(name)}</summary>"
                         + "".join(img(p, f"{captions.get(k, k)} {name}") for k, p in shown) + "</details>")
    fails = sweep.failures
    if fails:
        items = "".join(f"<tr><td class=l>{escape(r['label'])}</td><td class=l>{escape(r['point'])}</td>"
                        f"<td>{r['repetition']}</td><td class=l>{escape(r['error'])}</td></tr>" for r in fails)
        parts.append(f"<h2 class=fail>Failures ({len(fails)})</h2><table><tr><th class=l>balancer</th>"
                     f"<th class=l>grid point</th><th>repetition</th><th class=l>error</th></tr>{items}</table>")
    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    parts.append(
        "<h2>Reproduce</h2>"
        f"<pre>{escape(command or 'dlbkit simulate ' + str(exp.path or exp.name))}</pre>"
        f"<p>Experiment file: <code>{escape(str(exp.path) if exp.path else '(in memory)')}</code>; base seed "
        f"<code>{exp.seed}</code>; repetition r of every balancer runs with seed "
        "<code>SeedSequence([seed, r]).generate_state(1)[0]</code> (common random numbers). "
        f"Raw rows: <a href='results.csv'>results.csv</a>, summary: <a href='summary.csv'>summary.csv</a>.</p>"
        f"<p class=muted>dlbkit {escape(__version__)}, Python {escape(_pyplatform.python_version())}, "
        f"generated {escape(now)}; sweep wall time {sweep.wall_s:.1f} s.</p>")
    parts.append("</body></html>")
    path.write_text("\n".join(p for p in parts if p), encoding="utf-8")
    return path
