"""dlbkit.Loop under MPI: the job's ranks are the pool; every step is one run on them, on one clock."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from support import REPO, TESTS
from support.mpi import run_job

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

SCRIPT = """
import json
from mpi4py import MPI
import dlbkit

def spin(x):
    s = 0
    for i in range(3000 * (x % 3 + 1)):
        s += i
    return x * 2

rank = MPI.COMM_WORLD.Get_rank()
with dlbkit.Loop(spin, backend="mpi", balancer="awf", emulate=[1.0, 0.5], record="rec.json") as loop:
    outs = [loop.map(range(60)) for _ in range(3)]
    assert loop.map([]) == []
    tr = loop.trace
with open(f"report-{rank}.json", "w") as f:
    json.dump({"rank": rank, "ok": all(o == [x * 2 for x in range(60)] for o in outs),
               "steps": [[s["start"], s["end"], s["items"]] for s in tr.meta["time_steps"]],
               "carried": tr.meta.get("carried")}, f)
"""


def _job(tmp_path, script: str) -> subprocess.CompletedProcess:
    """*script* run on 3 ranks, with this checkout's dlbkit first on the path."""
    (tmp_path / "job.py").write_text(textwrap.dedent(script))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), TESTS,
                                         env.get("PYTHONPATH", "")])
    return run_job([sys.executable, "job.py"], 3, cwd=tmp_path, timeout=90, env=env)


def test_loop_steps_on_the_ranks(tmp_path):
    p = _job(tmp_path, SCRIPT)
    assert p.returncode == 0, p.stderr
    reports = [json.loads((tmp_path / f"report-{r}.json").read_text()) for r in range(3)]
    assert all(r["ok"] for r in reports)  # every rank gets every step's results, in item order
    steps = reports[0]["steps"]
    assert [s[2] for s in steps] == [60, 60, 60, 0]
    assert all(a[1] <= b[0] for a, b in zip(steps, steps[1:]))  # one clock: steps one after another
    assert all(r["steps"] == steps for r in reports)
    carried = reports[0]["carried"]  # rank 0 decides: the balancer's state went from step to step
    assert [c["steps"] for c in carried[:3]] == [1, 2, 3]
    assert sum(carried[0]["weights"]) == pytest.approx(2.0)
    rec = json.loads((tmp_path / "rec.json").read_text())  # written once, by rank 0, at close
    assert rec["meta"]["time_steps"][2]["items"] == 60


CLOSE_SCRIPT = """
import json, signal, sys, time
from mpi4py import MPI
import dlbkit
from dlbkit.errors import DlbkitError
from support.signals import signal_when

def nap(x):
    time.sleep(0.05)
    return x

rank = MPI.COMM_WORLD.Get_rank()
loop = dlbkit.Loop(nap, backend="mpi", balancer="ss", record="rec.json")
fired = []
signal.signal(signal.SIGUSR1, lambda *_: (loop.close(), fired.append(time.monotonic())))
report = {"rank": rank}
try:
    for k in range(3):
        if k == 2 and rank == 0:  # during the third step, as the coordinator polls for a message the third time
            # (a 0.3 s timer could fire after this 1 s step under load); signalled-0 marks it
            sys.setprofile(signal_when("recv", "_take", signal.SIGUSR1, marker="signalled-0", nth=3))
        loop.map(range(40))
        report.setdefault("done", []).append(k)
except DlbkitError as e:
    report["error"] = str(e)
    report["after_signal_s"] = time.monotonic() - fired[0]
report.update(closed=loop.closed, steps=len(loop.steps))
with open(f"report-{rank}.json", "w") as f:
    json.dump(report, f)
"""


@pytest.mark.full  # the MPI matrix: signals during a Loop step (test_loop_steps_on_the_ranks is the fast tier's)
@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGUSR1"), reason="POSIX signals")
def test_close_from_a_signal_handler_during_an_mpi_step_ends_it_and_keeps_the_steps_before(tmp_path):
    """As on the local backend: close() from rank 0's signal handler during a step ends the step (rank 0
    stops the worker ranks and tells them why) and, with *record*, the steps that completed are saved.
    Before, the step went on to its end and nothing was recorded (close() had cleared the pool, so
    neither the step nor the later close() saved)."""
    p = _job(tmp_path, CLOSE_SCRIPT)
    assert (tmp_path / "signalled-0").exists(), ("rank 0 never polled for a message three times in the third step",
                                                 p.stderr)
    r0 = json.loads((tmp_path / "report-0.json").read_text())
    assert r0["done"] == [0, 1] and r0["steps"] == 2 and r0["closed"], r0
    assert r0["error"] == "this Loop was closed during the step (close() from a signal handler)"
    rec = json.loads((tmp_path / "rec.json").read_text())  # the two completed steps, by rank 0
    assert [s["items"] for s in rec["meta"]["time_steps"]] == [40, 40]
    # the worker ranks were stopped by rank 0 and say why, in one line each (the job then fails)
    for r in (1, 2):
        assert (f"dlbkit: rank {r} stopping: rank 0 stopped the run: DlbkitError: this Loop was closed during "
                "the step") in p.stderr, p.stderr
    assert p.returncode != 0


RAISING_BALANCER_SCRIPT = """
import json, sys
from mpi4py import MPI
import dlbkit
sys.path.insert(0, {tests!r})
from support.loop_jobs import RaisesOnTen, square

rank = MPI.COMM_WORLD.Get_rank()
loop = dlbkit.Loop(square, backend="mpi", balancer=RaisesOnTen())
report = {{"first": loop.map([1, 2, 3])}}
with open(f"report-{{rank}}.json", "w") as f:
    json.dump(report, f)
try:
    loop.map(range(10))
except ValueError as e:
    report.update(notes=e.__notes__, closed=loop.closed)
    with open(f"report-{{rank}}.json", "w") as f:
        json.dump(report, f)
"""


@pytest.mark.full  # the MPI matrix: failures during a Loop step
def test_a_balancer_raising_in_an_mpi_step_is_noted_on_rank_0_and_named_by_the_worker_ranks(tmp_path):
    """Under MPI a Loop step is one run of the backend (coordinate_rank → base.drive), so the balancer's
    exception carries the note ``dlbkit.map`` gives; the worker ranks leave with one line naming it."""
    p = _job(tmp_path, RAISING_BALANCER_SCRIPT.format(tests=TESTS))
    from support.loop_jobs import RaisesOnTen
    where = f"RaisesOnTen.chunk (loop_jobs.py:{RaisesOnTen.chunk.__code__.co_firstlineno + 2})"
    r0 = json.loads((tmp_path / "report-0.json").read_text())
    assert r0 == {"first": [1, 4, 9], "closed": True,
                  "notes": [f"dlbkit: raised by {where} in the coordinator (rank 0), not in a worker"]}, p.stderr
    for r in (1, 2):
        assert json.loads((tmp_path / f"report-{r}.json").read_text()) == {"first": [1, 4, 9]}
        assert (f"dlbkit: rank {r} stopping: rank 0 stopped the run: ValueError: no chunk for ten (raised by "
                f"{where} on rank 0)") in p.stderr, p.stderr
    assert p.returncode != 0
