"""Summaries of a sweep: per (balancer label, grid point) and metric, n, mean, std and the 95%
confidence half-width (Student's t), plus a plain-text table for the terminal."""

from __future__ import annotations

import csv
import math
import textwrap
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from scipy import stats

from dlbkit import families

__all__ = ["Stat", "mean_ci", "summarise", "format_table", "format_verdict", "write_summary_csv", "table_metrics",
           "TABLE_WIDTH"]

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Stat:
    """One metric of one balancer at one grid point, over its successful repetitions."""

    label: str
    balancer: str
    point: str
    metric: str
    n: int
    mean: float
    std: float
    ci95: float

    def as_dict(self) -> dict:
        return asdict(self)


def mean_ci(values: Iterable[float], confidence: float = CONFIDENCE) -> tuple[int, float, float, float]:
    """(n, mean, sample std, CI half-width) of the finite *values*.

    The half-width is t_{(1+c)/2, n-1} · s / √n (Student's t); it is 0 when s = 0, undefined (NaN)
    when n = 1 (one value says nothing of the spread; the std is NaN too), and all but n are NaN when
    there is no finite value.

    >>> n, m, s, h = mean_ci([1.0, 2.0, 3.0])
    >>> n, m, s, round(h, 4)
    (3, 2.0, 1.0, 2.4841)
    """
    x = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return 0, math.nan, math.nan, math.nan
    mean = float(x.mean())
    if n == 1:
        return 1, mean, math.nan, math.nan
    s = float(x.std(ddof=1))
    if s == 0.0:
        return n, mean, 0.0, 0.0
    h = float(stats.t.ppf(0.5 + confidence / 2.0, n - 1) * s / math.sqrt(n))
    return n, mean, s, h


def summarise(rows: Sequence[dict], metrics: Sequence[str] | None = None) -> list[Stat]:
    """Group successful *rows* (results.csv rows) by (label, point) in order of first appearance and
    summarise each metric."""
    metrics = list(metrics or families.metrics_table())
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        if r.get("status", "ok") != "ok":
            continue
        groups.setdefault((r["label"], r["point"]), []).append(r)
    out = []
    for (label, point), rs in groups.items():
        for m in metrics:
            if m not in rs[0]:  # another family's own metric: not a column of this experiment's results
                continue
            n, mean, std, h = mean_ci(float(r[m]) for r in rs)
            out.append(Stat(label, rs[0]["balancer"], point, m, n, mean, std, h))
    return out


def write_summary_csv(summary: Sequence[Stat], path: str | Path) -> Path:
    path = Path(path)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["label", "balancer", "point", "metric", "n", "mean", "std", "ci95"])
        for s in summary:
            w.writerow([s.label, s.balancer, s.point, s.metric, s.n, repr(s.mean), repr(s.std), repr(s.ci95)])
    return path


#: the width (characters) the terminal table keeps to when it chooses its columns: a family's metrics are
#: taken in its order of interest while the table fits; 160 is two 80-column panes, what a laptop's
#: terminal shows at a small font (a job stream's 18 metrics made 330)
TABLE_WIDTH = 160


def _worth_a_column(summary: Sequence[Stat], m: str) -> bool:
    means = [s.mean for s in summary if s.metric == m and math.isfinite(s.mean)]
    return bool(means) and any(v != 0 for v in means)


def table_metrics(summary: Sequence[Stat], family=None) -> list[str]:
    """The metrics worth a column, in *family*'s order of interest (a family or its name:
    :attr:`~dlbkit.families.Family.columns`, its main metric first; None: every metric of
    :func:`~dlbkit.families.metrics_table`, in its order): those with at least one finite mean that is not
    zero everywhere (e.g. ``bytes`` of a loop that moves no data, ``rounds_to_balance`` outside the round
    mechanism are left out)."""
    order = families.get(family).columns if family is not None else families.metrics_table()
    return [m for m in order if _worth_a_column(summary, m)]


def _decimals(x: float) -> int:
    if not math.isfinite(x) or x == 0:
        return 2
    a = abs(x)
    if a >= 1000:
        return 0
    if a >= 100:
        return 1
    if a >= 1:
        return 3 - int(math.floor(math.log10(a)))  # 4 significant digits
    return min(6, 3 - int(math.floor(math.log10(a))))


def format_cell(mean: float, ci: float) -> str:
    """``mean ± ci`` with the same number of decimals for both; the mean alone when the interval is
    undefined (NaN: a single repetition)."""
    if not math.isfinite(mean):
        return "n/a"
    d = _decimals(mean)
    if float(mean).is_integer() and (ci == 0 or not math.isfinite(ci)) and abs(mean) >= 1:
        d = 0
    if not math.isfinite(ci):
        return f"{mean:.{d}f}"
    return f"{mean:.{d}f} ± {ci:.{d}f}"


def format_table(summary: Sequence[Stat], metrics: Sequence[str] | None = None, *, mark_best: bool = True,
                 family=None, width: int = TABLE_WIDTH) -> str:
    """Aligned plain-text table: one row per (label, grid point), one column per metric showing
    ``mean ± 95% CI half-width``. With *mark_best*, ``*`` marks the best mean per metric within a grid
    point (by the metric's direction in :func:`~dlbkit.families.metrics_table`).

    Without *metrics* the table chooses its columns: :func:`table_metrics` of *family* (its main metric
    first), a metric equal for every balancer stated once below it, and further columns only while the
    table stays within *width* characters (the first always shows); a line below names the metrics with
    a value that it leaves to summary.csv and report.html."""
    by = {(s.label, s.point, s.metric): s for s in summary}
    keys = list(dict.fromkeys((s.label, s.point) for s in summary))
    same: list[str] = []
    identical = False
    choose = metrics is None
    if choose:  # leave out, and state once, what is the same for every balancer
        metrics = []
        shown = table_metrics(summary, family)
        for m in shown:
            cells = {format_cell(by[(lbl, p, m)].mean, by[(lbl, p, m)].ci95) for lbl, p in keys if (lbl, p, m) in by}
            (same if len(keys) > 1 and len(cells) == 1 else metrics).append(m)
        if shown and not metrics:  # the balancers gave identical results: those are the results
            metrics, same, identical = shown, [], True
    metrics = list(metrics)
    points = list(dict.fromkeys(p for _, p in keys))
    show_point = any(points)
    table = families.metrics_table()
    best: dict[tuple[str, str], float] = {}
    for p in points:
        for m in metrics:
            means = [by[(lbl, p, m)].mean for lbl, pp in keys if pp == p and (lbl, p, m) in by]
            means = [v for v in means if math.isfinite(v)]
            if means and min(means) != max(means):  # nothing to mark when all agree (e.g. lower_bound)
                best[(p, m)] = (min if table.get(m, ("", "lower"))[1] == "lower" else max)(means)
    n_of = {k: max((s.n for s in summary if (s.label, s.point) == k), default=0) for k in keys}
    header = ["balancer"] + (["grid point"] if show_point else []) + ["n"] + metrics
    body = []
    for lbl, p in keys:
        cells = [lbl] + ([p] if show_point else []) + [str(n_of[(lbl, p)])]
        for m in metrics:
            s = by.get((lbl, p, m))
            if s is None:
                cells.append("n/a")
                continue
            text = format_cell(s.mean, s.ci95)
            if mark_best and len(keys) > 1 and best.get((p, m)) == s.mean:
                text += " *"
            cells.append(text)
        body.append(cells)
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    n_left = 2 if show_point else 1
    if choose:  # the columns in order of interest while they fit; the first metric always shows
        fixed = len(header) - len(metrics)
        used, keep = sum(widths[:fixed]) + 2 * (fixed - 1), fixed
        while keep < len(header) and (keep == fixed or used + 2 + widths[keep] <= width):
            used += 2 + widths[keep]
            keep += 1
        header, body, widths = header[:keep], [r[:keep] for r in body], widths[:keep]
        cut = metrics[keep - fixed:]
        metrics = metrics[:keep - fixed]
        elsewhere = cut + [m for m in table if m not in metrics + same + cut and _worth_a_column(summary, m)]

    def line(cells):
        return "  ".join(c.ljust(w) if i < n_left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in body]
    if same:
        s0 = {m: next(by[(lbl, p, m)] for lbl, p in keys if (lbl, p, m) in by) for m in same}
        out += _listing("same for every balancer: ", [f"{m} {format_cell(s0[m].mean, s0[m].ci95)}" for m in same],
                        "; ", width)
    if identical:
        out.append("every balancer gave identical results")
    if choose and elsewhere:
        out += _listing("in summary.csv and report.html only: ", elsewhere, ", ", width)
    legend = "mean ± 95% CI half-width (Student's t) over repetitions"
    if any(n < 2 for n in n_of.values()):
        legend += " (n = 1: the mean alone, one repetition gives no interval)"
    # explain the mark only where a shown column has one (none when every balancer is alike)
    if any(c.endswith(" *") for r in body for c in r[len(r) - len(metrics):]):
        legend += "; * best mean per metric"
    out.append(legend)
    return "\n".join(line_.rstrip() for line_ in out)


def _listing(head: str, items: Sequence[str], sep: str, width: int) -> list[str]:
    """*head* and *items* joined by *sep* in lines of at most *width* characters where the items allow,
    broken between items only (a cell such as ``8.466 ± 0.354`` stays whole), continued indented."""
    lines, cur = [], head
    for i, item in enumerate(items):
        piece = item + (sep.rstrip() if i < len(items) - 1 else "")
        if cur != head and len(cur) + len(piece) > width:
            lines.append(cur.rstrip())
            cur = "  "
        cur += piece + " "
    return lines + [cur.rstrip()]


#: joins the words of a label, a grid point or a value and its unit in a verdict while it is wrapped,
#: so that a line never parts them (textwrap breaks at ASCII whitespace only)
_JOIN = "\x00"


def _whole(text: str) -> str:
    return text.replace(" ", _JOIN)


def format_verdict(summary: Sequence[Stat], metric: str, *, width: int = TABLE_WIDTH) -> list[str]:
    """A verdict per grid point saying which balancer has the best mean *metric* (the family's main
    one, its first ``bar_metrics``), by how much it leads the runner-up, whether their 95% intervals
    overlap (then the lead is not a clear win), and how far the last one is: what a reader of the
    table asks first. A point with nothing to rank still gets its verdict: the balancers all alike
    (their cells print the same), one balancer alone with a value, or none with one. A verdict longer
    than *width* characters (the table's) goes on in lines indented by two, broken at spaces but not
    inside a balancer's label, a grid point or a value with its unit; the lines are returned one by
    one."""
    description, direction = families.metrics_table().get(metric, ("", "lower"))
    unit = " s" if description.endswith("(s)") else ""
    verdicts = []
    points = list(dict.fromkeys(s.point for s in summary))

    def value(s: Stat) -> str:
        return _whole(format_cell(s.mean, math.nan) + unit)

    for p in points:
        at = f"at {_whole(p)}: " if any(points) else ""
        labels = list(dict.fromkeys(s.label for s in summary if s.point == p))
        stats_ = [s for s in summary if s.point == p and s.metric == metric and math.isfinite(s.mean)]
        stats_.sort(key=lambda s: s.mean, reverse=direction == "higher")
        missing = len(labels) - len(stats_)
        without = f"; {missing} other{'s' if missing > 1 else ''} without a {metric}" if missing else ""
        if not stats_:
            verdicts.append(f"{at}no balancer has a {metric}")
            continue
        if len(stats_) == 1:
            s = stats_[0]
            name = _whole(s.label)
            alone = f"only {name} ran: {metric}" if len(labels) == 1 else f"only {name} has a {metric}:"
            verdicts.append(f"{at}{alone} {value(s)}{without}")
            continue
        if len({format_cell(s.mean, s.ci95) for s in stats_}) == 1:  # nothing to rank at the table's precision
            who = "all balancers" if not missing else f"the {len(stats_)} balancers with a {metric}"
            verdicts.append(f"{at}{who} alike on {metric}: {value(stats_[0])}{without}")
            continue
        best, second, last = stats_[0], stats_[1], stats_[-1]

        def behind(s: Stat) -> str:
            return f"{(s.mean - best.mean) / abs(best.mean):+.1%}" if best.mean else "n/a"

        if value(second) == value(best):
            sure = "tied"
        elif not (math.isfinite(best.ci95) and math.isfinite(second.ci95)):
            # say whose interval is missing: the other may have one, so "one repetition" alone misleads
            lone = [_whole(s.label) for s in (best, second) if not math.isfinite(s.ci95)]
            sure = f"no interval for {' or '.join(lone)}: one repetition"
        elif abs(second.mean - best.mean) <= best.ci95 + second.ci95:
            sure = "95% intervals overlap: not a clear win"
        else:
            sure = "95% intervals apart"
        text = (f"best {metric} ({direction} is better): {_whole(best.label)} {value(best)}; "
                f"runner-up {_whole(second.label)} {value(second)} ({behind(second)}, {sure})")
        if last is not second:
            text += f"; last {_whole(last.label)} {value(last)} ({behind(last)})"
        verdicts.append(at + text + without)
    return [line.replace(_JOIN, " ") for verdict in verdicts
            for line in textwrap.wrap(verdict, width, subsequent_indent="  ", break_long_words=False,
                                      break_on_hyphens=False, expand_tabs=False, replace_whitespace=False)]
