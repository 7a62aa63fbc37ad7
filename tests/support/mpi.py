"""A real MPI job run from a test: the ``mpiexec`` of the mpich wheel, and a job that does not end
in time failing the test as a hang (with what it wrote) instead of waiting for ever."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence


def mpiexec() -> str:
    """The mpich wheel installs ``mpiexec`` next to python; else the one on the PATH."""
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    assert found, "mpi4py is importable but no mpiexec was found (pip install mpich)"
    return found


def run_job(argv: Sequence[str], n: int, *, cwd, timeout: float, env: dict | None = None,
            on_hang: Callable[[], str] | None = None) -> subprocess.CompletedProcess:
    """``mpiexec -n N argv...`` in *cwd*, its output captured as text. Past *timeout* seconds the test
    fails as a hang, saying what *on_hang* adds (e.g. which cases the ranks reported) and stderr."""
    cmd = [mpiexec(), "-n", str(n), *map(str, argv)]
    try:
        return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as e:
        import pytest
        seen = f"; {on_hang()}" if on_hang is not None else ""
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        pytest.fail(f"mpiexec -n {n} did not end within {timeout} s (a hang){seen}; stderr:\n{stderr[-2000:]}")


def case_job(tmp_path, job: str, cases: Sequence[str], timeout: float) -> tuple[subprocess.CompletedProcess, dict]:
    """Run the fuzz script *job* on 3 ranks over *cases* (all of its cases when empty). Each rank
    rewrites ``report-R.json`` after every case, so a hang shows which cases ended; returns the
    completed job and the reports by rank."""
    import json
    import textwrap

    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(job))
    done = run_job([sys.executable, script, *cases], 3, cwd=tmp_path, timeout=timeout, on_hang=lambda: (
        f"cases reported so far: { {f.name: f.read_text()[-300:] for f in tmp_path.glob('report-*.json')} }"))
    reports = {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in tmp_path.glob("report-*.json")}
    return done, reports


def every_rank_agrees(done: subprocess.CompletedProcess, reports: dict, case: str, how: str, expected) -> None:
    """One verdict for *case* on the 3 ranks, by *how*: ``"value"`` (every rank returns rank 0's
    *expected*), ``"served"`` (rank 0, a Cluster's client, gets *expected*; the node ranks served),
    ``"raised"`` (rank 1's checks raised *expected*, not a ConfigError: rank 0 names it, rank 2 stops
    with one line) or ``"refused"`` (rank 0 raises a one-line ConfigError naming the field
    *expected*; the others their own, or one line naming the refusing rank)."""
    assert sorted(reports) == [0, 1, 2] and all(case in r for r in reports.values()), (case, reports,
                                                                                       done.stderr[-2000:])
    got = {k: r[case] for k, r in reports.items()}
    if how == "value":
        assert all(g == {"value": expected} for g in got.values()), (case, got)
        return
    if how == "served":
        assert got[0] == {"value": expected} and got[1] == got[2] == {"served": True}, (case, got)
        return
    if how == "raised":  # before mpi.agree took any exception, the other ranks waited for ever
        assert got[1] == {"raised": expected}, (case, got)
        assert got[0] == {"raised": f"DlbkitError: rank 1 failed checking its arguments: {expected} (every rank "
                                    "must pass the same)"}, (case, got)
        assert got[2] == {"stopped": f"dlbkit: rank 2 stopping: rank 1 rejected the run: {expected}"}, (case, got)
        return
    assert got[0].get("refused") == expected, (case, got)
    assert "\n" not in got[0]["message"], got[0]
    for k in (1, 2):  # its own ConfigError, or one line naming the refusing rank and the field
        g = got[k]
        assert g.get("refused") == expected or (
            "stopped" in g and g["stopped"].startswith(f"dlbkit: rank {k} stopping: rank ")
            and f"rejected the run: {expected}" in g["stopped"]), (case, got)


def a_rank_dies(argv: Sequence, died: Path, *, cwd, n: int = 3) -> list[str]:
    """Run *argv* on *n* ranks, one of which dies on its way (leaving the file *died*): the job must end
    non-zero; the command that runs it again."""
    from support import HANG_S

    first = run_job(argv, n, cwd=cwd, timeout=HANG_S)
    assert first.returncode != 0 and died.exists(), first.stderr[-2000:]
    return [mpiexec(), "-n", str(n), *map(str, argv)]
