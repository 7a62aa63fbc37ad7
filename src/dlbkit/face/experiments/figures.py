"""A sweep's figures on disk: the per-balancer bars and each run's plots, by the workload's family.

The plots themselves are :mod:`dlbkit.plots` (the shared ones, depending only on the model) and each
family's ``face/plots.py``; which plots a run gets is its family's declaration
(:attr:`dlbkit.families.registry.Family.figures`, ``bar_metrics``). Each PNG carries a digest of what it was drawn from (:mod:`.digests`); a resumed sweep redraws only the
figures whose digest changed or whose file is missing, and removes the figures it drew that the
sweep no longer has (:func:`_remove_stale`).
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from dlbkit import families
from dlbkit.families import Family
from dlbkit.plots import metric_bars, slug
from dlbkit.face.experiments.digests import DIGEST_KEY, KINDS_KEY, NAME_KEY, code_digest, digest, png_text

__all__ = ["save_all", "FIGURE_KINDS"]


def _figure_kinds() -> tuple[str, ...]:
    """Every kind of figure a sweep can write: "bars" and each registered family's run plots."""
    kinds = ["bars"]
    for fam in families.FAMILIES.values():
        kinds += [k for k in fam.figure_kinds if k not in kinds]
    return tuple(kinds)


def __getattr__(name: str):
    # FIGURE_KINDS is read from the registry when asked, not fixed when this module is imported: a family
    # registered later (a user's, imported after the face) has its plots saved and its stale ones removed
    if name == "FIGURE_KINDS":
        return _figure_kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the modules whose code draws (or names) any figure: the plots, this module, and what the plots
#: read besides the data (a Trace's derived values, the availability curves, the metrics' names)
_DRAWING_MODULES = ("dlbkit.plots", __name__, "dlbkit.model.trace", "dlbkit.model.availability", "dlbkit.model.metrics",
                    "dlbkit.families.registry", "dlbkit.plugins")


def _figure_modules() -> list[str]:
    """The modules of every family's ``figures`` (its ``face/plots.py``) and of its declaration, imported so
    that their code is digested: a family's figures draw with the shared plots and may with another module's,
    so a run's digest covers them all."""
    from dlbkit.families.registry import declaring_module

    # the figures' module and the family's declaration, which the figures may read (a stream's response times)
    out = sorted({f.figures.__module__ for f in families.FAMILIES.values()}
                 | {m for m in map(declaring_module, families.FAMILIES) if m and m != "__main__"})
    for name in out:
        importlib.import_module(name)
    return out


def _save(fig, path: Path, dpi: int, text: dict[str, str]) -> Path:
    """Write *fig* to *path* with *text* and the file's own name (:data:`NAME_KEY`) in its PNG text."""
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=dpi, metadata={**text, NAME_KEY: path.name})
    plt.close(fig)
    return path


def _suffix(label: str, point: str) -> str:
    return slug(label) + (f"__{slug(point)}" if point else "")


def _run_figures(family: str, label: str, point: str, trace: Any, out_dir: Path, dpi: int, run_digest: str,
                 only: frozenset[str] | None = None) -> dict[str, Path]:
    """Write one run's figures (repetition 0 of a balancer at a grid point) as ``KIND_LABEL[__POINT].png``,
    each tagged with *run_digest* and the kinds drawn; with *only*, save just those kinds (the others'
    files are current). Return the paths of every kind the run has."""
    import matplotlib.pyplot as plt

    suffix = _suffix(label, point)
    run = f"{label}" + (f" [{point}]" if point else "") + ", repetition 0"
    figs = families.get(family).figures(trace, run)
    text = {DIGEST_KEY: run_digest, KINDS_KEY: ",".join(figs)}
    paths = {}
    for kind, fig in figs.items():
        path = out_dir / f"{kind}_{suffix}.png"
        if only is None or kind in only:
            _save(fig, path, dpi, text)
        else:
            plt.close(fig)
        paths[kind] = path
    return paths


def _current(fam: Family, suffix: str, run_digest: str, out_dir: Path) -> tuple[dict[str, Path], frozenset[str] | None]:
    """Which of a run's figures on disk were drawn from *run_digest*: (their paths if all are, else {};
    the kinds to save: None for all, or those missing or stale)."""
    paths = {k: out_dir / f"{k}_{suffix}.png" for k in fam.figure_kinds}
    texts = {k: png_text(p) for k, p in paths.items()}
    good = [k for k in fam.figure_kinds if texts[k].get(DIGEST_KEY) == run_digest]
    if not good:
        return {}, None
    kinds = [k for k in texts[good[0]].get(KINDS_KEY, "").split(",") if k in paths]
    missing = frozenset(kinds) - set(good)
    if not kinds or missing:
        return {}, missing or None
    return {k: paths[k] for k in kinds}, frozenset()


def save_all(out_dir: str | Path, summary: Sequence, traces: dict, *, family: str | Family, dpi: int = 110,
             jobs: int = 1, remove_stale: bool = False, runs: Iterable[tuple[str, str]] = ()) -> dict[str, list[Path]]:
    """Write the bars of *family*'s ``bar_metrics`` (those with a finite, non-zero value: a cost nobody
    paid needs no chart) and, per (label, grid
    point) in *traces*, the family's run figures into *out_dir* (on *jobs* processes); return the paths
    by kind (``FIGURE_KINDS``: every registered family's, read when asked).

    A figure whose PNG already carries the digest of what it would be drawn from (:mod:`.digests`:
    the same data, names, dpi and drawing code) is kept as it is, so resuming a sweep whose runs are
    all reused redraws nothing; a changed, added or re-done run's figures, or a deleted PNG, are drawn.
    With *remove_stale* (``dlbkit simulate``: *traces* are every run of the sweep), the PNGs dlbkit
    drew in *out_dir* that are not among those returned are deleted (a removed run's, a bar chart no
    longer drawn); no other file is touched (:func:`_remove_stale`), and the figures of *runs*,
    (label, grid point) pairs of the sweep that *traces* lacks (a replay lost on an executor), stay as
    they are. Without it, as when redrawing some runs' figures into a sweep's directory, nothing is
    deleted."""
    fam = families.get(family)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[Path]] = {k: [] for k in _figure_kinds()}
    figure_code = _DRAWING_MODULES
    if summary:
        bars_code = code_digest(figure_code)
        table = families.metrics_table()
        for m in fam.bar_metrics:
            if any(s.metric == m and math.isfinite(s.mean) and s.mean != 0 for s in summary):
                path = out_dir / f"{m}.png"
                # the metric's wording and direction title the bars: digested, as they are a family's own
                meaning = table.get(m)
                d = digest("bars", m, dpi, bars_code, meaning, [s for s in summary if s.metric == m])
                if png_text(path).get(DIGEST_KEY) != d:
                    _save(metric_bars(summary, m, meaning=meaning), path, dpi, {DIGEST_KEY: d})
                written["bars"].append(path)
    run_code = code_digest((*figure_code, *_figure_modules()))
    results: list[Any] = []
    todo = []  # (index in results, arguments of _run_figures)
    for (lbl, pt), tr in traces.items():
        d = digest("run", fam.name, lbl, pt, dpi, run_code, tr)
        kept, only = _current(fam, _suffix(lbl, pt), d, out_dir)
        results.append(kept)
        if only is None or only:
            todo.append((len(results) - 1, (fam.name, lbl, pt, tr, out_dir, dpi, d, only)))
    if jobs > 1 and len(todo) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
            futures = [(i, pool.submit(_run_figures, *a)) for i, a in todo]
            for i, f in futures:
                results[i] = f.result()
    else:
        for i, a in todo:
            results[i] = _run_figures(*a)
    for paths in results:
        for kind, path in paths.items():
            written[kind].append(path)
    if remove_stale:
        kept = {f"{k}_{_suffix(lbl, pt)}.png" for lbl, pt in runs for k in fam.figure_kinds}
        _remove_stale(out_dir, kept | {p.name for paths in written.values() for p in paths})
    return written


def _remove_stale(out_dir: Path, current: set[str]) -> None:
    """Delete the figures in *out_dir* that dlbkit drew and that are not in *current* (those of runs,
    balancers or grid points the experiment no longer has; a bar chart it no longer draws). A PNG is
    dlbkit's if it is named as a figure is (``<metric>.png``, ``<kind>_<run>.png``) and carries the
    digest dlbkit writes into each figure (a run figure also the kinds its run drew, this one among
    them), and carries this file's name (:data:`NAME_KEY`: a copy the user made of a figure, even
    one named ``gantt_ss-before.png``, names the file it was copied from); anything else, a picture
    of the user's own under any name or a figure drawn before names were written included, stays."""
    known = _figure_kinds()
    for path in sorted(out_dir.glob("*.png")):
        if path.name in current:
            continue
        text = png_text(path)
        if DIGEST_KEY not in text or text.get(NAME_KEY) != path.name:
            continue
        kinds = text.get(KINDS_KEY)
        if kinds is None:
            ours = path.stem in families.metrics_table()
        else:
            ours = any(path.stem.startswith(k + "_") for k in kinds.split(",") if k in known)
        if ours:
            path.unlink()
