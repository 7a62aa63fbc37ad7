"""Every examples/NAME.py that has an examples/NAME.out prints exactly that file (default local run)."""

import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

EXAMPLES = REPO / "examples"
CASES = sorted(p for p in EXAMPLES.glob("*.py") if p.with_suffix(".out").is_file())


def test_the_examples_with_expected_output_are_found():
    names = {p.stem for p in CASES}
    assert {"mandelbrot_rows", "montecarlo_batches"} <= names


@pytest.mark.parametrize("script", CASES, ids=[p.stem for p in CASES])
def test_example_prints_its_expected_output(script):
    expected = script.with_suffix(".out").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=EXAMPLES, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected, f"{script.name}: stdout differs from {script.with_suffix('.out').name}"


MPIEXEC = Path(sys.executable).with_name("mpiexec")


@pytest.mark.full  # the MPI matrix: every example under mpiexec (each example's local run is the fast tier's)
@pytest.mark.skipif(not MPIEXEC.exists(), reason="mpiexec (the mpich wheel) is not installed")
@pytest.mark.parametrize("script", CASES, ids=[p.stem for p in CASES])
def test_example_prints_the_same_on_mpi(script):
    """The same example under ``mpiexec -n 3 ... --backend mpi`` prints the same (rank 0 prints)."""
    expected = script.with_suffix(".out").read_text(encoding="utf-8")
    done = subprocess.run([str(MPIEXEC), "-n", "3", sys.executable, str(script), "--backend", "mpi"],
                          cwd=EXAMPLES, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
