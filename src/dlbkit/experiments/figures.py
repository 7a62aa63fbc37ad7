"""A sweep's figures on disk: the per-balancer bars and each run's plots, by the workload's family.

The plots themselves are :mod:`dlbkit.plots` (they depend only on the model); which plots a run gets
is its family's declaration (:attr:`dlbkit.families.Family.figures`, ``bar_metrics``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from .. import families
from ..families import Family
from ..plots import metric_bars, slug

__all__ = ["save_all", "FIGURE_KINDS"]


def _figure_kinds() -> tuple[str, ...]:
    kinds = ["bars"]
    for fam in families.FAMILIES.values():
        kinds += [k for k in fam.figure_kinds if k not in kinds]
    return tuple(kinds)


#: every kind of figure a sweep can write ("bars" and each family's run plots)
FIGURE_KINDS = _figure_kinds()


def _save(fig, path: Path, dpi: int) -> Path:
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _run_figures(family: str, label: str, point: str, trace: Any, out_dir: Path, dpi: int) -> dict[str, Path]:
    """Write one run's figures (repetition 0 of a balancer at a grid point) as ``KIND_LABEL[__POINT].png``."""
    suffix = slug(label) + (f"__{slug(point)}" if point else "")
    run = f"{label}" + (f" [{point}]" if point else "") + ", repetition 0"
    figs = families.get(family).figures(trace, run)
    return {kind: _save(fig, out_dir / f"{kind}_{suffix}.png", dpi) for kind, fig in figs.items()}


def save_all(out_dir: str | Path, summary: Sequence, traces: dict, *, family: str | Family, dpi: int = 110,
             jobs: int = 1) -> dict[str, list[Path]]:
    """Write the bars of *family*'s ``bar_metrics`` (those with a finite, non-zero value: a cost nobody
    paid needs no chart) and, per (label, grid
    point) in *traces*, the family's run figures into *out_dir* (on *jobs* processes); return the paths
    by kind (:data:`FIGURE_KINDS`)."""
    fam = families.get(family)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[Path]] = {k: [] for k in FIGURE_KINDS}
    if summary:
        for m in fam.bar_metrics:
            if any(s.metric == m and math.isfinite(s.mean) and s.mean != 0 for s in summary):
                written["bars"].append(_save(metric_bars(summary, m), out_dir / f"{m}.png", dpi))
    items = list(traces.items())
    if jobs > 1 and len(items) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(jobs, len(items))) as pool:
            futures = [pool.submit(_run_figures, fam.name, lbl, pt, tr, out_dir, dpi) for (lbl, pt), tr in items]
            results = [f.result() for f in futures]
    else:
        results = [_run_figures(fam.name, lbl, pt, tr, out_dir, dpi) for (lbl, pt), tr in items]
    for paths in results:
        for kind, path in paths.items():
            written[kind].append(path)
    return written
