"""Several runs per executor task (``run_sweep(batch=...)``, ``dlbkit simulate --batch``): batch sizes
by the rule, exactly; a run that fails inside a batch is its error row and the others are kept;
``batch=1`` is one submission per run as before; whatever the batch, every run once and the local
sweep's rows; bad values are ConfigErrors naming ``batch`` (CLI: one line, exit 2)."""

import math
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError
from dlbkit.face.cli import main
from dlbkit.face.experiments import load_experiment, run_seed, run_sweep
from dlbkit.face.experiments import runner as runner_mod
from dlbkit.face.experiments.batching import BATCH_TARGET_S, FACTOR, batch_size, check_batch, workers_of
from dlbkit.families import metrics_table

from support import REPO
from support.experiment_files import TINY
from support.profiles import examples

SRC = REPO / "src"
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent))
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec (the mpich wheel) not installed next to this Python")


def tiny(tmp_path, repetitions=3):
    p = tmp_path / "tiny.toml"
    p.write_text(TINY.replace("repetitions = 3", f"repetitions = {repetitions}"))
    return load_experiment(p)


def same(rows):
    """Rows by key, every field but wall_s (a NaN metric as the text "nan")."""
    def v(x):
        return "nan" if isinstance(x, float) and math.isnan(x) else x

    return {(r["label"], r["point"], int(r["repetition"])): {k: v(x) for k, x in r.items() if k != "wall_s"}
            for r in rows}


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    d = tmp_path_factory.mktemp("local")
    return run_sweep(tiny(d), d / "out")


class Recording(ThreadPoolExecutor):
    """A thread pool that records what is submitted to it: (function, arguments)."""

    def __init__(self, workers):
        super().__init__(max_workers=workers)
        self.sent = []

    def submit(self, fn, /, *args, **kwargs):
        self.sent.append((fn, args))
        return super().submit(fn, *args, **kwargs)


class Inline(Executor):
    """Runs each task when it is submitted (a completed Future), with a stated number of workers."""

    def __init__(self, workers):
        self._max_workers = workers
        self.sizes = []

    def submit(self, fn, /, *args, **kwargs):
        self.sizes.append(len(args[0]) if fn is runner_mod._run_batch else 1)
        f = Future()
        f.set_result(fn(*args, **kwargs))
        return f


# --- the rule --------------------------------------------------------------------------------------
def test_batch_sizes_by_the_rule_exactly():
    assert (BATCH_TARGET_S, FACTOR) == (0.1, 2)
    assert batch_size(1000, 2, None) == 1  # nothing measured yet: one run per task
    assert batch_size(1000, 2, 0.002) == 50  # by time: floor(0.1 / 0.002); factoring allows ceil(1000/4) = 250
    assert batch_size(150, 2, 0.002) == 38  # by factoring: ceil(150 / 4) = 38 < 50
    assert batch_size(3, 2, 0.002) == 1  # ceil(3/4)
    assert batch_size(1000, 2, 0.25) == 1  # a run longer than the target: one per task, as batch=1
    assert batch_size(1000, 8, 0.001) == 63  # ceil(1000/16) = 63 < floor(0.1/0.001) = 100
    assert batch_size(10, 1, 0.0) == 5  # runs measured as taking nothing: factoring alone, ceil(10/2)
    assert batch_size(0, 2, 0.002) == 0
    assert batch_size(7, 2, 0.05, target_s=1.0, factor=1) == 4  # min(floor(20), ceil(7/2))


def test_workers_are_counted_for_pools_and_not_guessed_for_other_executors():
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert workers_of(pool) == 3
    assert workers_of(Inline(5)) == 5

    class Opaque(Executor):
        pass

    assert workers_of(Opaque()) is None


def test_auto_sizes_over_a_sweep_one_probe_per_slot_then_time_then_factoring(tmp_path, monkeypatch):
    """Runs measured at 1/32 s (exact in binary, so the mean is too) on 2 workers: 4 probes of one
    run (2 tasks in flight per worker, nothing measured), then floor(0.1 × 32) = 3 runs per task,
    then ceil(remaining / 4) once fewer than 9 are left (7, 5, 3, 2, 1)."""
    def measured(spec, keep_trace, progress=None):
        return {"status": "ok", "error": "", "wall_s": 1 / 32,
                **{m: float(spec.seed % 97) for m in metrics_table()}}, None

    monkeypatch.setattr(runner_mod, "_execute", measured)
    specs = tiny(tmp_path, repetitions=100).expand()
    ex, seen = Inline(2), []
    runner_mod._run_on(ex, specs, lambda s, values, trace, done: seen.append((s.key, done)), False, "auto")
    assert ex.sizes == [1] * 4 + [3] * 63 + [2, 2, 1, 1, 1]
    assert [d for _, d in seen] == list(range(1, 201)) and sorted(k for k, _ in seen) == sorted(s.key for s in specs)


@settings(max_examples=examples(60), deadline=None)
@given(n=st.integers(1, 300), workers=st.integers(1, 8), wall=st.floats(1e-5, 1.0))
def test_auto_every_run_once_and_no_task_beyond_factoring(n, workers, wall):
    specs = [runner_mod.RunSpec("x", "ss", {}, (), r, r, None, None, {}, "f") for r in range(n)]
    orig = runner_mod._execute
    runner_mod._execute = lambda spec, keep, progress=None: ({"status": "ok", "error": "", "wall_s": wall}, None)
    try:
        ex, seen = Inline(workers), []
        runner_mod._run_on(ex, specs, lambda s, values, trace, done: seen.append((s.repetition, done)), False, "auto")
    finally:
        runner_mod._execute = orig
    assert sum(ex.sizes) == n and min(ex.sizes) >= 1
    assert sorted(r for r, _ in seen) == list(range(n)) and [d for _, d in seen] == list(range(1, n + 1))
    left = n
    for size in ex.sizes:  # never more than half of what is left over the workers, nor than the time target allows
        assert size <= math.ceil(left / (2 * workers)) and size <= max(1, math.floor(0.1 / wall))
        left -= size


# --- a batch ----------------------------------------------------------------------------------------
def test_a_run_failing_in_the_middle_of_a_batch_is_its_error_row_and_the_others_are_kept(tmp_path, monkeypatch):
    specs = tiny(tmp_path).expand()[:3]
    want = [runner_mod._execute(s, s.repetition == 0) for s in specs]
    real_sim, real_exec = runner_mod.simulate, runner_mod._execute

    def flaky(platform, workload, balancer, **kw):  # the simulation raises
        if (balancer, kw["seed"]) == (specs[1].balancer, specs[1].seed):  # repetitions share seeds
            raise RuntimeError("boom in the middle")
        return real_sim(platform, workload, balancer, **kw)

    def broken(spec, keep, progress=None):  # something outside the simulation raises
        if spec is specs[1]:
            raise KeyError("no such family")
        return real_exec(spec, keep, progress)

    for name, patch, message in [("simulate", flaky, "RuntimeError: boom in the middle"),
                                  ("_execute", broken, "KeyError: 'no such family'")]:
        monkeypatch.setattr(runner_mod, name, patch)
        got = runner_mod._run_batch([(s, s.repetition == 0) for s in specs], "token")
        monkeypatch.undo()
        assert len(got) == 3
        assert got[1][0]["status"] == "error" and got[1][0]["error"] == message and got[1][1] is None
        assert all(math.isnan(got[1][0][m]) for m in metrics_table())
        for (values, trace), (ref, ref_trace) in zip([got[0], got[2]], [want[0], want[2]]):
            assert {k: v for k, v in values.items() if k != "wall_s"} == {k: v for k, v in ref.items() if k != "wall_s"}
            assert (trace is None) == (ref_trace is None)
        assert got[0][1].t_end == want[0][1].t_end  # repetition 0 brings its trace back from a batch


def test_a_sweep_in_batches_keeps_the_others_of_a_failing_run_and_a_rerun_retries_it(tmp_path, local, monkeypatch):
    real = runner_mod.simulate

    def flaky(platform, workload, balancer, **kw):
        if balancer == "static" and kw["seed"] == run_seed(7, 1):
            raise RuntimeError("boom in repetition 1")
        return real(platform, workload, balancer, **kw)

    monkeypatch.setattr(runner_mod, "simulate", flaky)
    out = tmp_path / "out"
    with Recording(2) as pool:
        sweep = dlbkit.run_experiment(tiny(tmp_path), out, executor=pool, batch=3)
    assert [fn for fn, _ in pool.sent] == [runner_mod._run_batch] * 2  # the failing run is the middle of the second
    assert [(f["label"], f["repetition"]) for f in sweep.failures] == [("STATIC", 1)]
    assert "RuntimeError: boom in repetition 1" in sweep.failures[0]["error"]
    kept = {k: v for k, v in same(sweep.rows).items() if v["status"] == "ok"}
    assert len(kept) == 5 and all(v == same(local.rows)[k] for k, v in kept.items())
    monkeypatch.setattr(runner_mod, "simulate", real)
    with Recording(2) as pool:
        again = dlbkit.run_experiment(tiny(tmp_path), out, executor=pool, batch=3)
    assert (again.ran, again.skipped) == (1, 5) and same(again.rows) == same(local.rows)


def test_batch_1_is_one_submission_per_run_as_before(tmp_path, local):
    specs = tiny(tmp_path).expand()
    with Recording(2) as pool:
        sweep = run_sweep(tiny(tmp_path), tmp_path / "one", executor=pool, batch=1)
    assert [fn for fn, _ in pool.sent] == [runner_mod._run_task] * 6
    assert [(a[0].key, a[0].seed, a[1]) for _, a in pool.sent] == [(s.key, s.seed, s.repetition == 0) for s in specs]
    tokens = [a[2] for _, a in pool.sent]
    assert len(set(tokens)) == 6 and all(re.fullmatch("[0-9a-f]{32}", t) for t in tokens)
    assert same(sweep.rows) == same(local.rows)


def test_batches_of_n_in_the_experiment_order_each_with_its_own_token(tmp_path, local):
    specs = tiny(tmp_path).expand()
    with Recording(2) as pool:
        sweep = run_sweep(tiny(tmp_path), tmp_path / "four", executor=pool, batch=4)
    assert [fn for fn, _ in pool.sent] == [runner_mod._run_batch] * 2
    assert [[(s.key, keep) for s, keep in a[0]] for _, a in pool.sent] == \
        [[(s.key, s.repetition == 0) for s in specs[:4]], [(s.key, s.repetition == 0) for s in specs[4:]]]
    assert pool.sent[0][1][1] != pool.sent[1][1][1]  # a token per batch: a memoising executor runs each
    assert same(sweep.rows) == same(local.rows)
    assert list(sweep.traces) == list(local.traces)
    assert all(sweep.traces[k].t_end == local.traces[k].t_end for k in local.traces)


def test_auto_on_an_executor_that_cannot_count_its_workers_sends_one_run_per_task(tmp_path, local):
    class Opaque(Executor):
        def __init__(self):
            self.pool, self.sent = ThreadPoolExecutor(2), []

        def submit(self, fn, /, *args, **kwargs):
            self.sent.append(fn)
            return self.pool.submit(fn, *args, **kwargs)

    ex = Opaque()
    sweep = run_sweep(tiny(tmp_path), tmp_path / "o", executor=ex, batch="auto")
    ex.pool.shutdown()
    assert ex.sent == [runner_mod._run_task] * 6 and same(sweep.rows) == same(local.rows)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.one_of(st.integers(1, 8), st.just("auto")), workers=st.integers(1, 3),
       kept=st.lists(st.booleans(), min_size=6, max_size=6))
def test_any_batch_every_run_once_and_the_local_rows(tmp_path_factory, local, batch, workers, kept):
    """Whatever the batch size, the workers and the rows an earlier sweep left: exactly the missing
    runs run, once each, the bar advances once per run, and results.csv ends with the local rows."""
    d = tmp_path_factory.mktemp("any")
    lines = local.results_path.read_text().splitlines(keepends=True)
    (d / "out").mkdir()
    (d / "out" / "results.csv").write_text(lines[0] + "".join(line for line, k in zip(lines[1:], kept) if k))
    to_run = kept.count(False)
    seen = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        sweep = dlbkit.run_experiment(tiny(d), d / "out", executor=pool, batch=batch,
                                      progress=lambda done, total, row: seen.append((done, total, row["label"],
                                                                                     row["repetition"])))
    assert (sweep.ran, sweep.skipped) == (to_run, 6 - to_run)
    assert [(x[0], x[1]) for x in seen] == [(k, to_run) for k in range(1, to_run + 1)]
    assert len({x[2:] for x in seen}) == to_run
    assert same(sweep.rows) == same(local.rows)
    assert list(sweep.traces) == list(local.traces)
    assert same(runner_mod.read_results(d / "out" / "results.csv").values()) == \
        same(runner_mod.read_results(local.results_path).values())


def test_a_dask_executor_counts_its_workers_and_batches_give_the_local_rows(tmp_path, local):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as client:
        ex = client.get_executor()
        assert workers_of(ex) == 2
        sweep = dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", executor=ex, batch=2)
    assert not sweep.failures and same(sweep.rows) == same(local.rows)


# --- bad input ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [0, -1, "fast", "", True, 2.5, None])
def test_bad_batch_is_a_config_error_naming_batch(tmp_path, bad):
    with pytest.raises(ConfigError) as e:
        dlbkit.run_experiment(tiny(tmp_path), tmp_path / "out", batch=bad)
    assert e.value.field == "batch" and "'auto'" in e.value.allowed and "integer >= 1" in e.value.allowed
    assert not (tmp_path / "out").exists()
    assert check_batch("12") == 12 and check_batch("auto") == "auto"


@pytest.mark.parametrize("bad", ["0", "fast", "-3", "1.5"])
def test_cli_bad_batch_is_one_line_exit_2(tmp_path, monkeypatch, capsys, bad):
    monkeypatch.chdir(tmp_path)
    tiny(tmp_path)
    assert main(["simulate", "tiny.toml", "--out", "o", "--no-progress", "--batch", bad]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dlbkit: error: --batch must be an integer >= 1"), err
    assert f"got {bad!r}" in err and not (tmp_path / "o").exists()


def test_cli_batch_runs_the_same_rows(tmp_path, monkeypatch, capsys, local):
    monkeypatch.chdir(tmp_path)
    tiny(tmp_path)
    assert main(["simulate", "tiny.toml", "--out", "o", "--no-progress", "--jobs", "2", "--batch", "4"]) == 0
    assert same(runner_mod.read_results(tmp_path / "o" / "results.csv").values()) == same(local.rows)


@pytest.mark.full  # the MPI matrix: batches on MPI
@needs_mpi
def test_mpi_sweep_in_batches_equals_the_local_sweep(tmp_path, local):
    tiny(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([MPIEXEC, "-n", "3", sys.executable, "-m", "dlbkit", "simulate", "tiny.toml", "--out", "mpi",
                        "--no-progress", "--executor", "mpi", "--batch", "2"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "6 runs done, 0 reused" in r.stdout
    assert same(runner_mod.read_results(tmp_path / "mpi" / "results.csv").values()) == same(local.rows)


COUNT_UNDER_MPI = """
from mpi4py import MPI
from mpi4py.futures import MPICommExecutor
from dlbkit.face.experiments.batching import workers_of

with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
    if ex is not None:
        print("workers", workers_of(ex))
"""


@pytest.mark.full  # the MPI matrix: batches on MPI
@needs_mpi
def test_mpi_comm_executor_counts_the_ranks_but_the_root(tmp_path):
    (tmp_path / "count.py").write_text(COUNT_UNDER_MPI)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([MPIEXEC, "-n", "3", sys.executable, "count.py"], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "workers 2\n"
