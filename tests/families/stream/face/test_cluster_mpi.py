"""dlbkit.Cluster on the MPI backend: a real ``mpiexec -n 4`` job (rank 0 the client, ranks 1-3 the nodes).

The same script as on the local backend: results equal a serial run, an exception reaches its future
and the cluster goes on, every node runs jobs, the emulated speeds arrive on every rank, and the
worker ranks leave the script when rank 0 shuts the cluster down (status 0 for the whole job).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 120


def _mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"  # the mpich wheel installs it next to python
    found = str(here) if here.exists() else shutil.which("mpiexec")
    assert found, "mpi4py is importable but no mpiexec was found (pip install mpich)"
    return found


SCRIPT = """
import json
import dlbkit

def square(x):
    return x * x

def boom(x):
    raise ValueError(f"job {x} failed on purpose")

if __name__ == "__main__":
    with dlbkit.Cluster(backend="mpi", balancer="power-of-d", seed=1, emulate=[1, 1, 0.5]) as c:
        fs = [c.submit(square, i) for i in range(300)]
        got = [f.result(timeout=60) for f in fs]
        try:
            c.submit(boom, 3).result(timeout=60)
            err = None
        except ValueError as e:
            err = [str(e), "in boom" in str(e.__cause__)]
        after = c.submit(square, 9).result(timeout=60)
        batch = [f.result(timeout=60) for f in c.submit_batch(square, range(12))]
    jobs = c.ps()
    print(json.dumps({"ok": got == [i * i for i in range(300)], "err": err, "after": after, "batch": batch,
                      "nodes": sorted({j.node for j in jobs}), "workers": c.workers,
                      "states": sorted({j.state for j in jobs}), "family": c.result().trace.family,
                      "source": c.result().trace.source}))
"""


def test_cluster_on_four_ranks(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
    done = subprocess.run([_mpiexec(), "-n", "4", sys.executable, str(script)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 1, done.stdout  # rank 0 prints; the worker ranks left at shutdown
    out = json.loads(lines[0])
    assert out["ok"] is True
    assert out["err"] == ["job 3 failed on purpose", True]
    assert out["after"] == 81 and out["batch"] == [i * i for i in range(12)]
    assert out["workers"] == 3 and out["nodes"] == [0, 1, 2]
    assert out["states"] == ["done", "error"] and out["family"] == "stream"
    assert out["source"] == "mpi"  # the backend (every backend's trace said "local")
