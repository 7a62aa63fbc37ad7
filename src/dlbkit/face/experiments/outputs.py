"""The files a finished sweep leaves beside its results.csv: summary.csv, the figures and
report.html — written once here for ``dlbkit simulate`` and for Python
(``write_outputs(dlbkit.run_experiment(FILE))``)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from dlbkit.face.experiments.figures import save_all
from dlbkit.face.experiments.report import write_report
from dlbkit.face.experiments.summary import Stat, summarise, write_summary_csv

__all__ = ["write_outputs"]


def write_outputs(sweep, *, summary: Sequence[Stat] | None = None, jobs: int = 1,
                  command: str = "") -> dict[str, list[Path]]:
    """Write summary.csv, the PNG figures and report.html of *sweep* into its output directory (stale
    figures of runs it no longer has removed, as ``dlbkit simulate`` does); *summary*: the rows'
    summary if already made; *jobs*: processes drawing the figures; *command*: the command line the
    report cites. Returns the images, per kind."""
    out = sweep.out_dir
    summary = summarise(sweep.rows) if summary is None else summary
    write_summary_csv(summary, out / "summary.csv")
    images = save_all(out, summary, sweep.traces, family=sweep.experiment.family, jobs=jobs, remove_stale=True,
                      runs=[(r["label"], r["point"]) for r in sweep.rows if r["repetition"] == 0])
    write_report(out / "report.html", sweep, summary, images, command=command)
    return images
