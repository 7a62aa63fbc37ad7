"""Sweeps on executors: the command, the local reference rows, a Dask client, CSV rows by run key.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import csv
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dlbkit.face.experiments import load_experiment, run_sweep

from support import REPO
from support.experiment_files import TINY

SRC = REPO / "src"


MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent))


needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec (the mpich wheel) not installed next to this Python")

MPI_TIMEOUT = 120  # seconds for one mpiexec job (three ranks importing dlbkit on a shared machine)


def tiny(tmp_path):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY)
    return load_experiment(p)


def by_key(rows):
    """Rows by (label, point, repetition), every field but the wall-clock time (a NaN metric as the
    text "nan": NaN equals nothing, and one that came back pickled is not the local one's object)."""
    def same(v):
        return "nan" if isinstance(v, float) and math.isnan(v) else v

    return {(r["label"], r["point"], int(r["repetition"])): {k: same(v) for k, v in r.items() if k != "wall_s"}
            for r in rows}


def csv_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The reference: the tiny sweep run in this process (jobs=1)."""
    d = tmp_path_factory.mktemp("local")
    return run_sweep(tiny(d), d / "out")


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    # workers as threads of this process (cheap to start; two runs go on at once), over TCP so that
    # the CLI test's `dlbkit simulate --scheduler ADDRESS` can connect from another process
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, protocol="tcp",
                                  dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as client:
        yield client


# --- the command line -------------------------------------------------------------------------------
def dlbkit_cmd(*args, cwd, mpi=0, timeout=MPI_TIMEOUT):
    cmd = [sys.executable, "-m", "dlbkit", *args]
    if mpi:
        cmd = [MPIEXEC, "-n", str(mpi), *cmd]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{' '.join(cmd)} did not end within {timeout} s (hang); stderr:\n{e.stderr}")
