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
