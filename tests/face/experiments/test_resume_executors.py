"""A sweep interrupted part-way (runs that fail, the sweep stopped, its process killed) and resumed
on another executor or batch size ends with a clean local run's results.csv and summary.csv: every
row but ``wall_s``, once each, and the summary byte for byte (same seeds, same rows).

Executors: threads with ``batch`` 1, N or auto; ``dlbkit simulate --jobs 2 --batch``; a Dask
LocalCluster's ``get_executor()``; ``--executor mpi`` under ``mpiexec -n 3``."""

import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.face.experiments import run_seed, summarise, write_summary_csv
from dlbkit.face.experiments import runner as runner_mod

from support.mpi import run_job
from support.profiles import examples
from support.sweeps import MPI_TIMEOUT, SRC, by_key, csv_rows, dlbkit_cmd, needs_mpi
from support.sweeps import dask_client, local, tiny  # noqa: F401 (fixtures)

# its module fixtures (a Dask LocalCluster) are made once: every test of the module on one xdist worker
pytestmark = pytest.mark.xdist_group("dask_resume")

BATCHES = [1, 2, 4, "auto"]


def assert_clean(out, local, sweep=None):
    """results.csv in *out* holds the clean local run's rows, one per run; summary.csv (the CLI's, or
    that of *sweep*'s rows as `dlbkit simulate` writes it) is the clean run's byte for byte."""
    got = csv_rows(out / "results.csv")
    assert len(got) == 6 and by_key(got) == by_key(csv_rows(local.results_path))
    want = out.parent / "clean-summary.csv"
    write_summary_csv(summarise(local.rows), want)
    if sweep is not None:
        write_summary_csv(summarise(sweep.rows), out / "summary.csv")
    assert (out / "summary.csv").read_bytes() == want.read_bytes()


def interrupted(monkeypatch, fail: set[tuple[str, int]], stop_after: int | None):
    """Make the runs (balancer, repetition) in *fail* raise, and the sweep stop (KeyboardInterrupt, in
    the process that writes results.csv) after *stop_after* rows; return the progress callback."""
    real = runner_mod.simulate

    def flaky(platform, workload, balancer, **kw):  # thread workers: this process's patch applies
        if any(balancer == b and kw["seed"] == run_seed(7, r) for b, r in fail):
            raise RuntimeError(f"boom {balancer} {kw['seed']}")
        return real(platform, workload, balancer, **kw)

    monkeypatch.setattr(runner_mod, "simulate", flaky)

    def progress(done, total, row):
        if done == stop_after:
            raise KeyboardInterrupt
    return progress


def first_sweep(exp, out, executor, batch, progress, stop_after) -> int:
    """Run the interrupted sweep; check it wrote a row per run it finished (all 6 if not stopped);
    return how many runs a resume has left (the missing and the failed)."""
    try:
        dlbkit.run_experiment(exp, out, executor=executor, batch=batch, progress=progress)
    except KeyboardInterrupt:
        pass
    return left(out, 6 if stop_after is None else stop_after)


def left(out, written: int) -> int:
    rows = csv_rows(out / "results.csv")
    assert len(rows) == written
    return 6 - sum(r["status"] == "ok" for r in rows)


RUNS = [(b, r) for b in ("ss", "static") for r in range(3)]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.sampled_from(BATCHES), then=st.sampled_from(BATCHES), fail=st.sets(st.sampled_from(RUNS)),
       stop_after=st.none() | st.integers(1, 5))
def test_batches_interrupted_then_resumed_give_the_clean_rows(tmp_path_factory, local, monkeypatch, first, then,
                                                              fail, stop_after):
    d = tmp_path_factory.mktemp("batch")
    exp = tiny(d)
    with monkeypatch.context() as m, ThreadPoolExecutor(max_workers=2) as pool:
        todo = first_sweep(exp, d / "out", pool, first, interrupted(m, fail, stop_after), stop_after)
    with ThreadPoolExecutor(max_workers=2) as pool:
        sweep = dlbkit.run_experiment(exp, d / "out", executor=pool, batch=then)
    assert (sweep.ran, sweep.skipped) == (todo, 6 - todo) and not sweep.failures
    assert_clean(d / "out", local, sweep)


KILL_AFTER = """
import os, signal, sys
from dlbkit.face.cli import main
from dlbkit.face.experiments import runner

real, written = runner._Appender.write, []

def write(self, row):  # the process that writes results.csv dies after {n} rows, as under kill -9
    real(self, row)
    written.append(row)
    if len(written) == {n}:
        os.kill(os.getpid(), signal.SIGKILL)

runner._Appender.write = write
sys.exit(main(sys.argv[1:]))
"""


def env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.full  # the backend matrix: a killed CLI sweep resumed (the in-process interruptions stay in the fast tier)
def test_cli_jobs_and_batch_killed_then_resumed_give_the_clean_rows(tmp_path, local):
    tiny(tmp_path)
    (tmp_path / "kill.py").write_text(KILL_AFTER.format(n=3))
    args = ["simulate", "tiny.toml", "--out", "out", "--no-progress", "--jobs", "2"]
    with open(tmp_path / "err", "w") as err:  # a file: the pool's orphaned workers keep a pipe open
        p = subprocess.Popen([sys.executable, "kill.py", *args, "--batch", "2"], cwd=tmp_path, env=env(),
                             stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        p.wait(timeout=MPI_TIMEOUT)
    finally:
        try:  # the pool's workers the killed sweep left behind (they are in its session, its group)
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert p.returncode == -signal.SIGKILL, (tmp_path / "err").read_text()
    assert len(csv_rows(tmp_path / "out" / "results.csv")) == 3
    r = dlbkit_cmd(*args, "--batch", "auto", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "3 runs done, 3 reused from an earlier sweep, 0 failed" in r.stdout
    assert_clean(tmp_path / "out", local)


@pytest.mark.full  # the backend matrix: Dask sweeps interrupted and resumed
@pytest.mark.parametrize("batch, fail, stop_after", [
    (1, {("static", 1)}, None),  # a run that fails
    ("auto", set(), 3),  # the sweep stopped after 3 rows
    (2, {("ss", 2)}, 4),  # both
])
def test_dask_interrupted_then_resumed_gives_the_clean_rows(tmp_path, dask_client, local, monkeypatch, batch, fail,
                                                           stop_after):
    exp = tiny(tmp_path)
    with monkeypatch.context() as m:
        todo = first_sweep(exp, tmp_path / "out", dask_client.get_executor(), batch, interrupted(m, fail, stop_after),
                           stop_after)
    assert todo >= len(fail) and todo > 0
    sweep = dlbkit.run_experiment(exp, tmp_path / "out", executor=dask_client.get_executor(), batch=batch)
    assert (sweep.ran, sweep.skipped) == (todo, 6 - todo) and not sweep.failures
    assert_clean(tmp_path / "out", local, sweep)


@needs_mpi
@pytest.mark.full
def test_mpi_killed_then_resumed_gives_the_clean_rows(tmp_path, local):
    """Rank 0 (the sweep) killed after 3 rows ends the job (mpiexec kills every rank); the same
    command with another batch resumes it."""
    tiny(tmp_path)
    (tmp_path / "kill.py").write_text(KILL_AFTER.format(n=3))
    args = ["simulate", "tiny.toml", "--out", "mpi", "--no-progress", "--executor", "mpi"]
    r = run_job([sys.executable, "kill.py", *args, "--batch", "2"], 3, cwd=tmp_path, timeout=MPI_TIMEOUT, env=env())
    assert r.returncode != 0
    assert len(csv_rows(tmp_path / "mpi" / "results.csv")) == 3
    r = dlbkit_cmd(*args, "--batch", "auto", cwd=tmp_path, mpi=3)
    assert r.returncode == 0, r.stderr
    assert "3 runs done, 3 reused from an earlier sweep, 0 failed" in r.stdout
    assert_clean(tmp_path / "mpi", local)


FAILING_THEN_STOPPED = """
import sys
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor
import dlbkit
from dlbkit.face.experiments import run_seed
from dlbkit.face.experiments import runner

real = runner.simulate

def flaky(platform, workload, balancer, **kw):  # on every rank: the runs run on ranks 1 and 2
    if balancer == "ss" and kw["seed"] == run_seed(7, 2):
        raise RuntimeError("boom")
    return real(platform, workload, balancer, **kw)

def stop(done, total, row):
    if done == 4:
        raise KeyboardInterrupt

runner.simulate = flaky
with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
    if ex is not None:
        try:
            dlbkit.run_experiment("tiny.toml", "mpi", executor=ex, batch=2, progress=stop)
        except KeyboardInterrupt:
            print("stopped")
"""


@needs_mpi
@pytest.mark.full
def test_mpi_failing_and_stopped_then_resumed_gives_the_clean_rows(tmp_path, local):
    tiny(tmp_path)
    (tmp_path / "flaky.py").write_text(textwrap.dedent(FAILING_THEN_STOPPED))
    r = run_job([sys.executable, "flaky.py"], 3, cwd=tmp_path, timeout=MPI_TIMEOUT, env=env())
    assert r.returncode == 0 and r.stdout == "stopped\n", r.stderr
    todo = left(tmp_path / "mpi", 4)
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "mpi", "--no-progress", "--executor", "mpi", "--batch", "1",
                   cwd=tmp_path, mpi=3)
    assert r.returncode == 0, r.stderr
    assert f"{todo} runs done, {6 - todo} reused from an earlier sweep, 0 failed" in r.stdout
    assert_clean(tmp_path / "mpi", local)
