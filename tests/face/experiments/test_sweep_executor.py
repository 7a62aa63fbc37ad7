"""Sweeps on an engine the user already runs: any concurrent.futures.Executor (a Dask cluster's,
``mpi4py.futures``' under a real ``mpiexec -n 3``) gives the local sweep's rows run for run; a
failing run is recorded and the others kept; a sweep resumes; bad input is one line, exit 2."""

import math
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError
from dlbkit.face.cli import main
from dlbkit.face.experiments import load_experiment, run_seed, run_sweep, summarise, write_summary_csv
from dlbkit.face.experiments import runner as runner_mod

from support.profiles import examples
from support.sweeps import MPI_TIMEOUT, MPIEXEC, SRC, by_key, csv_rows, dlbkit_cmd, needs_mpi
from support.sweeps import dask_client, local, tiny  # noqa: F401 (fixtures)

# its module fixtures (a Dask LocalCluster) are made once: every test of the module on one xdist worker
pytestmark = pytest.mark.xdist_group("dask_sweeps")


def assert_same_sweep(sweep, local, path=None):
    """Every row of *sweep* (and of its results.csv) equals the local sweep's, but wall_s."""
    assert len(sweep.rows) == len(local.rows) == 6
    assert by_key(sweep.rows) == by_key(local.rows)
    if path is not None:
        assert by_key(csv_rows(path)) == by_key(csv_rows(local.results_path))
    assert list(sweep.traces) == list(local.traces) == [("ss", ""), ("STATIC", "")]
    for k, trace in sweep.traces.items():
        assert (trace.node, trace.first, trace.t_end, trace.end_time) == \
            (local.traces[k].node, local.traces[k].first, local.traces[k].t_end, local.traces[k].end_time)


# --- any Executor: a Dask cluster ----------------------------------------------------------------------
def test_dask_sweep_equals_the_local_sweep_run_for_run(tmp_path, dask_client, local):
    seen = []
    sweep = dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", executor=dask_client.get_executor(),
                                  progress=lambda done, total, row: seen.append((done, total)))
    assert (sweep.ran, sweep.skipped) == (6, 0) and not sweep.failures
    assert_same_sweep(sweep, local, sweep.results_path)
    assert seen == [(k, 6) for k in range(1, 7)]  # progress as a local sweep: once per finished run


def test_dask_failing_run_is_recorded_and_the_others_kept_then_retried(tmp_path, dask_client, local, monkeypatch):
    real = runner_mod.simulate

    def flaky(platform, workload, balancer, **kw):  # the cluster's workers are threads of this process
        if balancer == "static" and kw["seed"] == run_seed(7, 1):
            raise RuntimeError("boom in repetition 1")
        return real(platform, workload, balancer, **kw)

    monkeypatch.setattr(runner_mod, "simulate", flaky)
    out = tmp_path / "out"
    ex = dask_client.get_executor()
    sweep = dlbkit.run_experiment(tiny(tmp_path), out, executor=ex)
    assert [(f["label"], f["repetition"], f["status"]) for f in sweep.failures] == [("STATIC", 1, "error")]
    assert "RuntimeError: boom in repetition 1" in sweep.failures[0]["error"]
    assert math.isnan(sweep.failures[0]["makespan"])
    want = by_key(local.rows)
    kept = {k: v for k, v in by_key(sweep.rows).items() if v["status"] == "ok"}
    assert len(kept) == 5 and all(kept[k] == want[k] for k in kept)

    monkeypatch.setattr(runner_mod, "simulate", real)
    again = dlbkit.run_experiment(tiny(tmp_path), out, executor=ex)  # only the failed run runs again
    assert (again.ran, again.skipped) == (1, 5)
    assert_same_sweep(again, local, out / "results.csv")
    assert len(csv_rows(out / "results.csv")) == 6  # the newer row replaced the error


def test_a_retried_run_is_a_new_task_on_a_memoising_executor(tmp_path, dask_client, monkeypatch):
    """Dask keys a task by a hash of its function and arguments (pure by default): the same run
    submitted twice must still run twice, or a retry would get its earlier attempt's failure."""
    real, calls = runner_mod.simulate, []

    def counted(*a, **kw):
        calls.append(kw["seed"])
        return real(*a, **kw)

    monkeypatch.setattr(runner_mod, "simulate", counted)
    spec = tiny(tmp_path).expand()[0]
    ex = dask_client.get_executor()
    first, second = runner_mod._submit(ex, spec, False), runner_mod._submit(ex, spec, False)  # both held
    assert first.result()[0]["makespan"] == second.result()[0]["makespan"]
    assert calls == [spec.seed, spec.seed]


def test_dask_sweep_resumes_a_cut_off_results_file(tmp_path, dask_client, local):
    out = tmp_path / "out"
    out.mkdir()
    lines = local.results_path.read_text().splitlines(keepends=True)
    (out / "results.csv").write_text("".join(lines[:3]) + lines[3][:25])  # header, 2 rows, a cut-off row
    sweep = dlbkit.run_experiment(tiny(tmp_path), out, executor=dask_client.get_executor())
    assert (sweep.ran, sweep.skipped) == (4, 2)
    assert_same_sweep(sweep, local, out / "results.csv")  # repetition-0 traces replayed on the cluster too


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kept=st.lists(st.booleans(), min_size=6, max_size=6), failed=st.lists(st.booleans(), min_size=6, max_size=6))
def test_resume_on_an_executor_loses_nothing_and_runs_nothing_twice(tmp_path_factory, local, kept, failed):
    """Whatever subset of rows an earlier sweep left (some of them failed), a sweep on an executor
    runs exactly the missing and failed runs, once each, and ends with the local sweep's rows."""
    d = tmp_path_factory.mktemp("resume")
    lines = local.results_path.read_text().splitlines(keepends=True)
    body = []
    for line, keep, fail in zip(lines[1:], kept, failed):
        if keep:
            assert line.count(",ok,,") == 1
            body.append(line.replace(",ok,,", ",error,RuntimeError: lost,") if fail else line)
    (d / "out").mkdir()
    (d / "out" / "results.csv").write_text(lines[0] + "".join(body))
    to_run = sum(1 for k, f in zip(kept, failed) if not k or f)
    seen = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        sweep = dlbkit.run_experiment(tiny(d), d / "out", executor=pool,
                                      progress=lambda done, total, row: seen.append((done, total, row["label"],
                                                                                     row["repetition"])))
    assert (sweep.ran, sweep.skipped) == (to_run, 6 - to_run)
    assert [(d_, t) for d_, t, *_ in seen] == [(k, to_run) for k in range(1, to_run + 1)]
    assert len({tuple(x[2:]) for x in seen}) == to_run  # no run done twice
    assert by_key(csv_rows(d / "out" / "results.csv")) == by_key(csv_rows(local.results_path))
    assert len(csv_rows(d / "out" / "results.csv")) == 6


def test_a_process_pool_the_caller_keeps_is_not_shut_down(tmp_path, local):
    with ProcessPoolExecutor(max_workers=2) as pool:
        sweep = dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", executor=pool)
        assert_same_sweep(sweep, local, sweep.results_path)
        assert pool.submit(abs, -3).result() == 3


def test_run_experiment_reads_a_path_and_defaults_out_to_the_experiment_name(tmp_path, local, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tiny(tmp_path)
    sweep = dlbkit.run_experiment("tiny.toml")
    assert sweep.out_dir == Path("out") / "tiny" and (tmp_path / "out" / "tiny" / "results.csv").is_file()
    assert by_key(sweep.rows) == by_key(local.rows)


def test_run_experiment_bad_executor_names_the_field(tmp_path):
    for kw, field in [({"executor": "mpi"}, "executor"), ({"executor": ProcessPoolExecutor}, "executor")]:
        with pytest.raises(ConfigError) as e:
            dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", **kw)
        assert e.value.field == field and "concurrent.futures.Executor" in e.value.allowed
    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(ConfigError) as e:
            dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", executor=pool, jobs=2)
        assert e.value.field == "jobs"
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written
    with pytest.raises(ConfigError) as e:
        dlbkit.run_experiment(42)
    assert e.value.field == "experiment"


@pytest.mark.parametrize("args, words", [
    (["--executor", "ray"], ["--executor", "local, mpi, dask", "'ray'"]),
    (["--executor", "mpii"], ["--executor must be one of local, mpi, dask; got 'mpii' (did you mean 'mpi'?)"]),
    (["--executor", "mpi", "--jobs", "2"], ["--jobs", "omitted with --executor mpi"]),
    (["--executor", "dask"], ["--scheduler", "a running Dask scheduler"]),
    (["--scheduler", "tcp://127.0.0.1:8786"], ["--scheduler", "used with --executor dask"]),
])
def test_cli_bad_executor_is_one_line_exit_2(tmp_path, monkeypatch, capsys, args, words):
    monkeypatch.chdir(tmp_path)
    tiny(tmp_path)
    assert main(["simulate", "tiny.toml", "--out", "o", "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dlbkit: error: "), err
    assert all(w in err for w in words), err
    assert not (tmp_path / "o").exists()


def test_cli_mpi_executor_outside_mpiexec_is_one_line_exit_2(tmp_path):
    tiny(tmp_path)  # in a process of its own: importing mpi4py.MPI starts MPI
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "o", "--executor", "mpi", cwd=tmp_path, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("dlbkit: error: --executor must be used under mpiexec -n N with N >= 2 (rank 0 runs the "
                        "sweep, the other ranks run the runs); this process is the only rank; got 'mpi'\n")
    assert not (tmp_path / "o").exists()


# full tier: the MPI matrix: the CLI sweep under mpiexec (test_mpi_sweep_equals_the_local_sweep_and_resumes is the
# fast tier's)
@pytest.mark.full
@needs_mpi
def test_cli_bad_input_under_mpiexec_is_said_once(tmp_path):
    tiny(tmp_path)
    r = dlbkit_cmd("simulate", "tiny.toml", "--executor", "ray", cwd=tmp_path, mpi=3)
    assert r.returncode == 2
    assert r.stderr.count("dlbkit: error: --executor must be one of local, mpi, dask; got 'ray'") == 1, r.stderr
    # the default (local) executor under mpiexec: every rank would run the whole sweep into the same files
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "o", cwd=tmp_path, mpi=3)
    assert r.returncode == 2 and not (tmp_path / "o").exists()
    assert r.stderr.count("dlbkit: error: --executor must be mpi when mpiexec starts 3 ranks") == 1, r.stderr
    # found by rank 0 after the other ranks began to serve: they are released, no hang
    r = dlbkit_cmd("simulate", "nosuch.toml", "--executor", "mpi", cwd=tmp_path, mpi=3)
    assert r.returncode == 2
    assert r.stderr.count("dlbkit: error: EXPERIMENT must be an existing experiment TOML file") == 1, r.stderr
    assert r.stderr.count("\n") == 1 and r.stdout == "", r.stderr


@needs_mpi
def test_mpi_sweep_equals_the_local_sweep_and_resumes(tmp_path, local):
    tiny(tmp_path)
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "mpi", "--no-progress", "--executor", "mpi", cwd=tmp_path, mpi=3)
    assert r.returncode == 0, r.stderr
    assert "2 MPI rank(s) running the runs" in r.stdout and "6 runs done, 0 reused" in r.stdout
    assert r.stdout.count("wrote ") == 1  # rank 0 alone speaks and writes
    mpi, ref = csv_rows(tmp_path / "mpi" / "results.csv"), csv_rows(local.results_path)
    assert by_key(mpi) == by_key(ref)
    write_summary_csv(summarise(local.rows), tmp_path / "local-summary.csv")  # what `simulate` writes
    assert (tmp_path / "mpi" / "summary.csv").read_bytes() == (tmp_path / "local-summary.csv").read_bytes()

    # resume: a cut-off results.csv gets its missing runs, the finished ones are kept as written
    lines = (tmp_path / "mpi" / "results.csv").read_text().splitlines(keepends=True)
    (tmp_path / "mpi" / "results.csv").write_text("".join(lines[:4]) + lines[4][:30])
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "mpi", "--no-progress", "--executor", "mpi", cwd=tmp_path, mpi=3)
    assert r.returncode == 0, r.stderr
    assert "3 runs done, 3 reused from an earlier sweep, 0 failed" in r.stdout
    again = csv_rows(tmp_path / "mpi" / "results.csv")
    assert len(again) == 6 and by_key(again) == by_key(ref)
    assert [r["wall_s"] for r in again[:3]] == [r["wall_s"] for r in mpi[:3]]  # not run again


FAILING_UNDER_MPI = """
import sys
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor
import dlbkit
from dlbkit.face.experiments import run_seed
from dlbkit.face.experiments import runner

real = runner.simulate

def flaky(platform, workload, balancer, **kw):  # set on every rank: the runs run on ranks 1 and 2
    if balancer == "static" and kw["seed"] == run_seed(7, 1):
        raise RuntimeError(f"boom in repetition 1 on rank {MPI.COMM_WORLD.Get_rank()}")
    return real(platform, workload, balancer, **kw)

runner.simulate = flaky
with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
    if ex is not None:
        sweep = dlbkit.run_experiment("tiny.toml", "mpi", executor=ex)
        print(sweep.ran, len(sweep.failures), sweep.failures[0]["error"])
"""


@pytest.mark.full  # the MPI matrix: failures in an MPI sweep
@needs_mpi
def test_mpi_failing_run_is_recorded_the_others_kept_and_a_rerun_retries_it(tmp_path, local):
    tiny(tmp_path)
    (tmp_path / "flaky.py").write_text(textwrap.dedent(FAILING_UNDER_MPI))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([MPIEXEC, "-n", "3", sys.executable, "flaky.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=MPI_TIMEOUT)
    assert r.returncode == 0, r.stderr
    ran, failed, message = r.stdout.split(maxsplit=2)
    assert (ran, failed) == ("6", "1")
    assert message.startswith("RuntimeError: boom in repetition 1 on rank ") and message.split()[-1] in ("1", "2")
    rows = by_key(csv_rows(tmp_path / "mpi" / "results.csv"))
    want = by_key(csv_rows(local.results_path))
    assert rows[("STATIC", "", 1)]["status"] == "error"
    assert {k: v for k, v in rows.items() if k != ("STATIC", "", 1)} == \
        {k: v for k, v in want.items() if k != ("STATIC", "", 1)}

    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "mpi", "--no-progress", "--executor", "mpi", cwd=tmp_path, mpi=3)
    assert r.returncode == 0, r.stderr
    assert "1 runs done, 5 reused from an earlier sweep, 0 failed" in r.stdout
    assert by_key(csv_rows(tmp_path / "mpi" / "results.csv")) == want


@pytest.mark.full  # the backend matrix: the CLI on Dask (the API on Dask is the fast tier's)
def test_dask_cli_sweep_equals_the_local_sweep(tmp_path, dask_client, local):
    tiny(tmp_path)
    r = dlbkit_cmd("simulate", "tiny.toml", "--out", "dask", "--no-progress", "--executor", "dask",
                   "--scheduler", dask_client.cluster.scheduler_address, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Dask scheduler" in r.stdout and "(2 worker(s))" in r.stdout
    assert by_key(csv_rows(tmp_path / "dask" / "results.csv")) == by_key(csv_rows(local.results_path))


STEPS_AUTO = """
name = "steps_auto"
repetitions = 2
seed = 3

[platform]
nodes = [{ name = "m", speed = 1.0 }, { name = "a", speed = 1.0 }, { name = "b", speed = 1.0 },
         { name = "c", speed = 0.5, availability = { kind = "step", at = 100.0, before = 1.0, level = 0.25 } }]
network = { latency = 0.001, bandwidth = 1e9 }

[workload]
kind = "divisible"
items = 300
cost = { dist = "exponential", mean = 1.0 }

[engine]
steps = 4

[[balancers]]
name = "auto"
params = { every = 1, candidates = ["static", "gss", "fac2", "awf", "awf-c"] }
"""


def test_a_time_stepping_auto_sweep_on_an_executor_equals_the_local_one(tmp_path):
    """balancer="auto" in an experiment (with [engine] steps): every step's choice and predictions are
    in the kept trace, and a process pool gives the local sweep's rows and auto records run for run."""
    (tmp_path / "s.toml").write_text(STEPS_AUTO)
    exp = load_experiment(tmp_path / "s.toml")
    here = run_sweep(exp, tmp_path / "here")
    with ProcessPoolExecutor(max_workers=1) as pool:
        there = dlbkit.run_experiment(exp, tmp_path / "there", executor=pool)
    assert len(here.rows) == 2 and not here.failures
    assert by_key(there.rows) == by_key(here.rows)
    (key, trace), = here.traces.items()
    autos = [s["auto"] for s in trace.meta["time_steps"]]
    assert len(autos) == 4 and autos[0]["used"] == "awf-c" and autos[0]["evaluated"] == "first step measured"
    assert all(a["evaluated"] for a in autos[:-1]) and autos[-1]["evaluated"] is None  # every=1; none after the last
    assert all(b["used"] == a["next"] for a, b in zip(autos, autos[1:]))
    assert [s["auto"] for s in there.traces[key].meta["time_steps"]] == autos
