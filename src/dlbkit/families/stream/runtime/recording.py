"""How a job stream's recordings are read (the family's ``Family.recording``): a real stream's recording is its
jobs, whose series :func:`check` checks field by field."""

from __future__ import annotations

from dlbkit.runtime.record import Checker

__all__ = ["JOB_SERIES", "check"]

#: a job stream's per-job series (dlbkit.Cluster's recording), one value per job, all of one length
JOB_SERIES = ("job_time", "job_origin", "job_done", "job_ideal", "demand")


def check(d: dict, ck: Checker, n_nodes: int, source: str) -> None:
    """Check the per-job series of a real stream's file *d* (or of any that holds one), before the trace is
    built: the replay reads them (a hand-edited file is then one error naming the field, not a TypeError deep
    in the replay)."""
    series = d.get("series", {})
    if not isinstance(series, dict):
        return  # the reader refuses it, naming "series"
    if source != "sim" or any(k in series for k in JOB_SERIES):
        _check_jobs(series, ck, n_nodes)


def _check_jobs(series: dict, ck: Checker, P: int) -> None:
    n = None
    for key in JOB_SERIES:
        f = f"series.{key}"
        col = ck.array(ck.get(series, key, f), f, n)
        n = len(col)
        for j, x in enumerate(col):
            if key == "job_origin":
                ck.integer(x, f"{f}[{j}]", lo=0, hi=P - 1)
            elif x in ("nan", "inf", "-inf"):
                continue  # non-finite, as written (e.g. a job that never finished)
            else:
                ck.number(x, f"{f}[{j}]")
