"""A per-task timeout of the user's (a SIGALRM handler installed once that raises TimeoutError, and
``signal.alarm`` set in each task) in every family, on a real ``mpiexec -n 3`` job and locally.

Under MPI a user's handler is held back while dlbkit's own code runs (:mod:`dlbkit.runtime.backends.deferred`)
and runs at once only while the user's code runs (:class:`~dlbkit.runtime.backends.base.UserCode`).
Before, only a map's function was marked: in a tree's ``expand``, an SPMD step or a graph task the
alarm waited for the function to return, so a task meant to be cut after 1 s ran its whole 40 s and
the run ended with the rank's handler, not a TaskError naming the task; a graph task's nested call (Dask's
task in a task, run while its arguments are resolved) and a tree's children given as a generator
(run while dlbkit lists them) were still unmarked after that."""

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from support import REPO
from support.mpi import run_job

pytestmark = pytest.mark.skipif(not hasattr(__import__("signal"), "SIGALRM"), reason="POSIX signals")

LONG_S = 40.0  # what the slow task would take without its alarm
ALARM_S = 1  # the task's own timeout
PROMPT_S = 15.0  # the run must end well before LONG_S: the alarm plus start-up and stopping

JOB = f"""
import json, signal, sys, time
import numpy as np
import dlbkit

LONG_S, ALARM_S = {LONG_S}, {ALARM_S}
backend, case = sys.argv[1], sys.argv[2]
if backend == "mpi":
    from mpi4py import MPI
    r = MPI.COMM_WORLD.Get_rank()
else:
    r = 0


def on_alarm(signum, frame):
    raise TimeoutError(f"over {{ALARM_S}} s")


signal.signal(signal.SIGALRM, on_alarm)  # once, before the run: each task sets its own alarm


def slow():
    if backend == "local":  # a worker process of a spawn start has not run this script's top level
        signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(ALARM_S)
    try:
        end = time.perf_counter() + LONG_S
        while time.perf_counter() < end:
            time.sleep(0.01)
    finally:
        signal.alarm(0)


def expand(t):
    if t == 0:
        return [1, 2], 0
    if t == 2:
        slow()
    return [], 1


def expand_lazily(t):  # the children as a generator: the slow part runs as dlbkit lists them
    def children():
        slow()
        yield 1
    return (children() if t == 2 else [1, 2] if t == 0 else []), 1


def step(u):
    if (u == -1.0).any():
        slow()
    return u[1:-1]


def graph_task(x):
    slow()
    return x


t0 = time.perf_counter()
try:
    if case == "tree":
        dlbkit.tree(expand, 0, backend=backend, workers=2, progress=False)
    elif case == "generator":
        dlbkit.tree(expand_lazily, 0, backend=backend, workers=2, progress=False)
    elif case == "spmd":
        u = np.zeros(12)
        u[9] = -1.0  # in the last worker's block
        dlbkit.spmd(step, u, iterations=3, backend=backend, workers=2, balancer=None, progress=False)
    elif case == "nested":  # the slow function called inside a task's argument (Dask's task in a task)
        dlbkit.graph({{"a": (abs, -1), "b": (abs, (graph_task, "a"))}}, backend=backend, workers=2, progress=False)
    else:
        dlbkit.graph({{"a": (abs, -1), "b": (graph_task, "a")}}, backend=backend, workers=2, progress=False)
    out = {{"value": "returned"}}
except SystemExit as e:
    out = {{"exit": str(e.code)}}
except BaseException as e:
    out = {{"error": f"{{type(e).__name__}}: {{e}}"}}
out["seconds"] = time.perf_counter() - t0
with open(f"report-{{r}}.json", "w") as f:
    json.dump(out, f)
"""

#: what rank 0 (or the local call) raises, per family: the task named, the handler's exception
FAILED = {"tree": "TaskError: task 2 failed: TimeoutError: over 1 s",
          "spmd": "TaskError: step failed on worker 1 at iteration 0: TimeoutError: over 1 s",
          "graph": "TaskError: task 'b' failed: TimeoutError: over 1 s",
          "nested": "TaskError: task 'b' failed: TimeoutError: over 1 s",
          "generator": "TaskError: task 2 failed: TimeoutError: over 1 s"}
#: the worker ranks' one line after "dlbkit: rank k stopping: ", per family (a regular expression:
#: which rank runs a tree's or a graph's task is a race)
STOPPING = {"tree": r"task 2 failed on rank [12] \(traceback on rank 0\)",
            "spmd": r"step failed on worker 1 \(rank 2\) at iteration 0 \(traceback on rank 0\)",
            "graph": r"task 'b' failed on rank [12] \(traceback on rank 0\)",
            "nested": r"task 'b' failed on rank [12] \(traceback on rank 0\)",
            "generator": r"task 2 failed on rank [12] \(traceback on rank 0\)"}


def _job(tmp_path, backend: str, case: str) -> dict:
    (tmp_path / "job.py").write_text(textwrap.dedent(JOB))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    if backend == "mpi":
        done = run_job([sys.executable, "job.py", backend, case], 3, cwd=tmp_path, timeout=LONG_S + 60, env=env)
    else:
        done = subprocess.run([sys.executable, "job.py", backend, case], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=LONG_S + 60)
    reports = {int(f.stem.split("-")[1]): json.loads(f.read_text()) for f in tmp_path.glob("report-*.json")}
    assert reports, done.stderr[-3000:]
    return reports


@pytest.mark.full  # the MPI matrix: a user's alarm on every family (the local cases stay in the fast tier)
@pytest.mark.parametrize("case", ["tree", "spmd", "graph", "nested", "generator"])
def test_a_users_alarm_in_a_task_ends_the_mpi_run_promptly_as_that_tasks_failure(tmp_path, case):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    reports = _job(tmp_path, "mpi", case)
    assert sorted(reports) == [0, 1, 2], reports
    assert reports[0]["error"] == FAILED[case], reports
    assert reports[0]["seconds"] < PROMPT_S, reports  # not LONG_S: the alarm cut the task
    for r in (1, 2):
        assert re.fullmatch(f"dlbkit: rank {r} stopping: {STOPPING[case]}", reports[r]["exit"]), reports


@pytest.mark.parametrize("case", ["tree", "spmd", "graph"])
def test_a_users_alarm_in_a_task_fails_that_task_on_local_worker_processes(tmp_path, case):
    reports = _job(tmp_path, "local", case)
    assert reports[0]["error"] == FAILED[case], reports
    assert reports[0]["seconds"] < PROMPT_S, reports
