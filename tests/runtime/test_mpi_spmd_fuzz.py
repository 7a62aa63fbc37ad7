"""Careless inputs to :func:`dlbkit.run_spmd` on the MPI backend: the fuzzer of
:mod:`test_entry_points_fuzz` calls run_spmd on local processes only. Here a few real ``mpiexec -n 3`` jobs
(each under a timeout, so a hang fails the test) call it with one careless argument each: on every
rank the same (a bad balancer, window or parameter; a halo too wide, a domain too small or empty,
an emulation of the wrong length, a record path that is a folder) or different per rank (each rank its
own domain, iteration count, balancer, halo: what a script computing its inputs per rank passes).
The rule: the job ends, every rank reports, and either every rank reports the same ConfigError
naming the argument (rank 0's verdict, shared: the other ranks may instead exit with one line
"rank 0 rejected the run"), or every rank holds rank 0's result; never a hang or a traceback-only
exit. Each job takes a few seconds; the sweep of cases is in the full tier.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from support.mpi import run_job

# full tier: the MPI matrix: careless arguments on ranks
pytestmark = pytest.mark.full

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 60  # seconds for one mpiexec job: a 3-rank run of 2 iterations takes a few seconds

JOB = """
import json, sys
import numpy as np
from mpi4py import MPI
import dlbkit
from dlbkit.errors import ConfigError

rank = MPI.COMM_WORLD.Get_rank()

def smooth(u):
    return 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]

CASES = {
    "record is a folder": dict(record="."),
    "record name too long": dict(record="x" * 5000),
    "unknown balancer": dict(balancer="nope"),
    "halo too wide": dict(halo=20),
    "domain too small": dict(domain=np.arange(3.0)),
    "empty domain": dict(domain=np.zeros(0)),
    "emulation too short": dict(emulate=[1.0]),
    "window 0": dict(window=0),
    "unknown parameter": dict(params={"zz": 1}),
    "domain per rank": dict(domain=np.arange(12.0) + rank),
    "iterations per rank": dict(iterations=2 + rank),
    "balancer per rank": dict(balancer="dlah" if rank else None),
    "valid": {},
}
args = {"iterations": 2, "backend": "mpi", "progress": False, **CASES[sys.argv[1]]}
domain = args.pop("domain", np.arange(12.0))
try:
    r = dlbkit.run_spmd(smooth, domain, **args)
    out = {"domain": r.domain.tolist(), "rows": [int(x) for x in r.rows]}
except ConfigError as e:
    out = {"refused": e.field}
with open(f"report-{rank}.json", "w") as f:
    json.dump(out, f)
"""

RANK0 = [float(i) for i in range(12)]  # rank 0's domain after 2 steps: a linear domain is a fixed point


def _job(tmp_path, case: str) -> tuple[subprocess.CompletedProcess, dict[int, dict]]:
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB))
    done = run_job([sys.executable, script, case], 3, cwd=tmp_path, timeout=TIMEOUT, on_hang=lambda: f"case {case}")
    reports = {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in tmp_path.glob("report-*.json")}
    return done, reports


def _ends_with_one_verdict(tmp_path, case: str, refused: str | None):
    done, reports = _job(tmp_path, case)
    assert 0 in reports, (case, done.stderr[-2000:])
    if refused is not None:
        assert reports[0] == {"refused": refused}, (case, reports)
        for rank in (1, 2):  # the same error, or the one line saying rank 0 rejected the run
            assert reports.get(rank) in ({"refused": refused}, None), (case, reports)
            if reports.get(rank) is None:
                assert f"dlbkit: rank {rank} stopping: rank 0 rejected the run: {refused}" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr.replace("ConfigError", ""), done.stderr[-2000:]
    else:
        assert done.returncode == 0, done.stderr[-2000:]
        assert sorted(reports) == [0, 1, 2] and all(r["domain"] == RANK0 for r in reports.values()), reports


def test_a_record_path_that_is_a_folder_ends_every_rank(tmp_path):
    """``record="."``: rank 0 (which writes it) raised a ConfigError, and ranks 1 and 2 went on into
    the run and waited for rank 0 forever (mpiexec hung until killed). Now rank 0's verdict is
    shared first: rank 0 raises it, the others exit with one line."""
    _ends_with_one_verdict(tmp_path, "record is a folder", "record")


def test_a_record_path_the_system_refuses_ends_every_rank(tmp_path):
    """A record name too long for the file system: Path.is_dir raised OSError (ENAMETOOLONG) on
    rank 0 alone, inside the check whose verdict the other ranks wait for (they hung). Now it is
    rank 0's ConfigError naming record, shared as any other verdict."""
    _ends_with_one_verdict(tmp_path, "record name too long", "record")


@pytest.mark.full
@pytest.mark.parametrize("case, refused", [
    ("unknown balancer", "balancer"), ("halo too wide", "domain"), ("domain too small", "domain"),
    ("empty domain", "domain"), ("emulation too short", "emulate"), ("window 0", "window"),
    ("unknown parameter", "params.zz"),
    # per rank: rank 0's arguments are the run's (its domain and iteration count are broadcast)
    ("domain per rank", None), ("iterations per rank", None), ("balancer per rank", None), ("valid", None)])
def test_careless_spmd_arguments_on_mpi_end_with_one_verdict(tmp_path, case, refused):
    _ends_with_one_verdict(tmp_path, case, refused)
