"""``dlbkit.Loop(fn, journal=PATH)``: each step's results appended as they arrive; a rerun of the same
script gets every step the journal holds without computing it, computes only the missing items of the step
that was cut short, and returns at every step what an uninterrupted run would.

The kill tests kill the process (SIGKILL) or, under MPI, a rank (which ends the job) during a step, then
rerun: the user's function called only for the items missing (each call appends a line to a log), every
result in the journal exactly once, every step equal to serial.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.runtime.journal import entries

from support import HANG_S
from support.processes import killed_when

STEPS, N = 4, 150


def step_of(item):
    """A time step's function: item (step, index, x) → the next x."""
    k, i, x = item
    return (x * 7 + k + i) % 1009


def _serial() -> list[list[int]]:
    """Every step's results, run serially: step k + 1's items are step k's results."""
    x, out = list(range(N)), []
    for k in range(STEPS):
        x = [step_of((k, i, v)) for i, v in enumerate(x)]
        out.append(x)
    return out


def _results(j) -> list[tuple[int, int]]:
    """Every (step, index) the journal holds a result of, one per entry, in the order written."""
    return [key for keys, _ in entries(j) for key in keys if key[0] != "step"] if j.exists() else []


def _run_steps(loop, steps=STEPS) -> list[list[int]]:
    x, out = list(range(N)), []
    for k in range(steps):
        x = loop.map([(k, i, v) for i, v in enumerate(x)])
        out.append(x)
    return out


def test_a_rerun_gets_every_journaled_step_without_computing_it(tmp_path):
    j = tmp_path / "loop.journal"
    with dlbkit.Loop(step_of, workers=2, balancer="awf-b", journal=j) as loop:
        assert _run_steps(loop, 2) == _serial()[:2]
    assert sorted(_results(j)) == [(k, i) for k in range(2) for i in range(N)]
    with dlbkit.Loop(step_of, workers=2, balancer="awf-b", journal=j) as loop:
        assert _run_steps(loop) == _serial()  # two steps from the journal, two computed
        metas = [s.trace.meta["journal"] for s in loop.steps]
        assert [(m["reused"], m["computed"]) for m in metas] == [(N, 0), (N, 0), (0, N), (0, N)]
        assert [s.trace.n_intervals == 0 for s in loop.steps] == [True, True, False, False]
        assert loop.trace.meta["time_steps"][3]["items"] == N  # the steps on one clock still
    assert Counter(_results(j)).most_common(1)[0][1] == 1 and len(_results(j)) == STEPS * N


def test_a_step_of_other_items_or_another_function_is_refused_and_the_loop_goes_on(tmp_path):
    j = tmp_path / "loop.journal"
    with dlbkit.Loop(step_of, workers=1, journal=j) as loop:
        loop.map([(0, 0, 1), (0, 1, 2)])
    with dlbkit.Loop(step_of, workers=1, journal=j) as loop:
        with pytest.raises(ConfigError, match=r"journal must be the journal of this loop's steps: step 0 has 2 items "
                                              r"of fingerprint \w+…, the journal's step 0 had 2 of"):
            loop.map([(0, 0, 1), (0, 1, 3)])
        assert not loop.closed  # refused before the step, as bad items are
    with pytest.raises(ConfigError, match=r"it is of the steps of .*step_of"):
        dlbkit.Loop(abs, workers=1, journal=j)
    with pytest.raises(ConfigError, match="journal must be a file path"):
        dlbkit.Loop(abs, workers=1, journal=7)


KILLED = """
    import json, os, sys, time
    import dlbkit

    STEPS, N = {steps}, {n}

    LOG = sys.argv[2]

    def logged_step(item):
        k, i, x = item
        if (k, i) == (2, 100) and sys.argv[3] == "mpi" and not os.path.exists(LOG + ".died"):
            open(LOG + ".died", "w").close()
            os._exit(9)  # this rank dies: mpiexec ends the whole job
        with open(LOG, "a") as f:
            f.write(f"{{k}} {{i}}\\n")
        if k == 2:
            time.sleep(0.01)  # the step the first run is killed in
        return (x * 7 + k + i) % 1009

    if __name__ == "__main__":
        backend = sys.argv[3]
        with dlbkit.Loop(logged_step, workers=None if backend == "mpi" else 2, backend=backend, balancer="ss",
                         journal=sys.argv[1]) as loop:
            x, out = list(range(N)), []
            for k in range(STEPS):
                x = loop.map([(k, i, v) for i, v in enumerate(x)])
                out.append(x)
        if os.environ.get("PMI_RANK", "0") == "0":  # under MPI every rank has the results: one says them
            print(json.dumps({{"out": out, "reused": [s.trace.meta["journal"]["reused"] for s in loop.steps]}}))
"""


def _calls(log) -> list[tuple[int, int]]:
    return [tuple(map(int, line.split())) for line in log.read_text().splitlines()] if log.exists() else []


def _rerun_completes(cmd, j, log, tmp_path) -> None:
    kept = set(_results(j))
    before = Counter(_calls(log))
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.splitlines()[-1])
    assert got["out"] == _serial()
    assert got["reused"] == [sum(1 for key in kept if key[0] == k) for k in range(STEPS)]
    rerun = sorted((Counter(_calls(log)) - before).elements())
    assert rerun == sorted((k, i) for k in range(STEPS) for i in range(N) if (k, i) not in kept)
    assert sorted(_results(j)) == [(k, i) for k in range(STEPS) for i in range(N)]  # each once


def _script(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(KILLED.format(steps=STEPS, n=N)))
    return script


def test_a_process_killed_mid_step_is_resumed_by_a_rerun(tmp_path):
    j, log = tmp_path / "job.journal", tmp_path / "calls"
    cmd = [sys.executable, str(_script(tmp_path)), str(j), str(log), "local"]
    killed_when(cmd, lambda: sum(key[0] == 2 for key in _results(j)) >= 20, "20 of step 2 journaled", tmp_path)
    kept = Counter(key[0] for key in _results(j))
    assert kept[0] == kept[1] == N and 20 <= kept[2] < N and kept[3] == 0
    _rerun_completes(cmd, j, log, tmp_path)


@pytest.mark.full
def test_a_rank_killed_in_an_mpi_step_ends_the_job_and_the_rerun_completes_it(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import a_rank_dies
    j, log = tmp_path / "job.journal", tmp_path / "calls"
    again = a_rank_dies([sys.executable, _script(tmp_path), j, log, "mpi"], tmp_path / "calls.died", cwd=tmp_path)
    kept = Counter(key[0] for key in _results(j))
    assert kept[0] == kept[1] == N and kept[2] < N and kept[3] == 0
    _rerun_completes(again, j, log, tmp_path)


def _dies_at(item, marker):
    if item[:2] == (1, 70) and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(3)
    return step_of(item)


def test_a_worker_killed_in_a_journaled_step_loses_nothing(tmp_path):
    j, marker = tmp_path / "j", str(tmp_path / "died")
    with dlbkit.Loop(functools.partial(_dies_at, marker=marker), workers=2, balancer="ss", journal=j) as loop:
        assert _run_steps(loop) == _serial()
        assert loop.steps[1].trace.meta["faults"]  # a worker did die in step 1, its chunk computed again
    assert sorted(_results(j)) == [(k, i) for k in range(STEPS) for i in range(N)]  # each once
