"""``dlbkit.tree(..., journal=PATH)``: a snapshot of the run (the value so far and the frontier) every
JOURNAL_S seconds, and the value at the end; a rerun resumes from the last whole snapshot.

Every snapshot is checked against exact arithmetic: on a binary tree whose leaves are worth their index, the
journaled value plus the leaves under the frontier's tasks is the whole tree's, so no task is counted twice
or lost at a snapshot; a rerun from a journal cut anywhere (what a kill at any point leaves) expands exactly
the frontier's subtrees. The kill tests kill the process (SIGKILL), or under MPI a rank, then rerun.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.families.tree.runtime import coordinator
from dlbkit.runtime.journal import entries

from support import HANG_S, TESTS
from support.processes import killed_when
from support.profiles import examples

DEPTH = 9
TOTAL = sum(range(2 ** DEPTH))


def expand(task, kills=(), marks=""):
    """The binary tree (depth, index) of depth DEPTH, a leaf worth its index; the process expanding a task
    of *kills* dies, once per task."""
    depth, k = task
    if task in kills and not os.path.exists(os.path.join(marks, f"{depth}-{k}")):
        open(os.path.join(marks, f"{depth}-{k}"), "w").close()
        os._exit(9)
    time.sleep(0.0002)
    if depth == DEPTH:
        return [], k
    return [(depth + 1, 2 * k), (depth + 1, 2 * k + 1)], None


def below(task) -> tuple[int, int]:
    """The tasks and the leaves' worth of *task*'s subtree."""
    depth, k = task
    span = 2 ** (DEPTH - depth)
    first = k * span
    return 2 * span - 1, span * first + span * (span - 1) // 2


def _snapshots(path) -> list[dict]:
    return [v for keys, values in entries(path) for key, v in zip(keys, values) if key[0] == "snap"]


def _check(snap) -> int:
    """A snapshot is whole: its value and the leaves under its frontier make the tree's (a dead worker's
    share being redone counts without the tasks it skips: they are expanded elsewhere); the tasks under it."""
    frontier = [t for _, t in snap["tasks"] + snap["redo"]]
    skipped = [pickle.loads(k) for k in snap["skip"]]
    assert snap["value"] + sum(below(t)[1] for t in frontier) - sum(below(t)[1] for t in skipped) == TOTAL
    return sum(below(t)[0] for t in frontier) - sum(below(t)[0] for t in skipped)


@pytest.fixture
def often(monkeypatch):
    monkeypatch.setattr(coordinator, "JOURNAL_S", 0.02)  # (2 s by default: a test's tree takes less)


@settings(max_examples=examples(30),  # `often` only sets a constant: the same for every example
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0, 1), balancer=st.sampled_from(["steal", "rid", "sid", "gdem", "random"]),
       kills=st.lists(st.tuples(st.integers(1, DEPTH), st.integers(0, 1)), max_size=1))
def test_every_snapshot_is_whole_and_a_rerun_from_a_cut_journal_expands_just_the_frontier(
        tmp_path_factory, often, cut, balancer, kills):
    d = tmp_path_factory.mktemp("tree")
    whole = d / "whole.journal"
    r = dlbkit.run_tree(functools.partial(expand, kills=frozenset(kills), marks=str(d)), (0, 0), workers=3,
                        balancer=balancer, journal=whole)
    assert r.value == TOTAL and len(r.trace.meta["dead"]) == len(kills)
    snaps = _snapshots(whole)
    assert snaps and r.trace.meta["journal"]["snapshots"] == len(snaps)
    for s in snaps:
        _check(s)
    j = d / "cut.journal"
    shutil.copy(whole, j)
    with open(j, "r+b") as f:  # a kill at any point: the journal as it was then
        f.truncate(int(cut * j.stat().st_size))
    done = [v for keys, values in entries(j) if keys[0][0] == "done" for v in values] if j.stat().st_size else []
    left = _snapshots(j) if j.stat().st_size else []
    again = dlbkit.run_tree(functools.partial(expand, kills=frozenset(kills), marks=str(d)), (0, 0), workers=2,
                            balancer=balancer, journal=j)  # the same function (its kills were used up)
    assert again.value == TOTAL
    expected = 0 if done else (_check(left[-1]) if left else 2 ** (DEPTH + 1) - 1)
    assert again.tasks == expected  # just the frontier's subtrees (the whole tree without a snapshot)


def test_a_finished_runs_journal_returns_its_value_and_another_trees_is_refused(tmp_path):
    j = tmp_path / "j"
    assert dlbkit.tree(expand, (0, 0), workers=2, journal=j) == TOTAL
    r = dlbkit.run_tree(expand, (0, 0), workers=2, journal=j)
    assert (r.value, r.tasks, r.trace.meta["journal"]["resumed"]) == (TOTAL, 0, True)
    with pytest.raises(ConfigError, match=r"journal must be the journal of this run \(the snapshots of .*expand \(fingerprint"):
        dlbkit.tree(expand, (1, 0), workers=2, journal=j)  # another root
    with pytest.raises(ConfigError, match="it is of the snapshots of"):
        dlbkit.tree(expand, (0, 0), workers=2, journal=j, initial=5)  # another initial value


def test_a_resumed_runs_recording_is_refused_by_replay(tmp_path, often):
    j = tmp_path / "j"
    dlbkit.tree(expand, (0, 0), workers=2, journal=j)
    rec = tmp_path / "run.json"
    dlbkit.run_tree(expand, (0, 0), workers=2, journal=j).save(rec)
    with pytest.raises(ConfigError, match=r"trace meta.journal.resumed must be false"):
        dlbkit.replay(rec, "steal")


JOB = """
    import json, os, sys, time
    sys.path.insert(0, {tests!r})
    import dlbkit
    from dlbkit.families.tree.runtime import coordinator
    coordinator.JOURNAL_S = 0.05

    D = {depth}

    def logged(task, log):
        d, k = task
        if (d, k) == (6, 20) and os.environ.get("PMI_RANK") and not os.path.exists(log + ".died"):
            open(log + ".died", "w").close()
            os._exit(9)  # this rank dies: mpiexec ends the whole job
        with open(log, "a") as f:
            f.write(f"{{d}} {{k}}\\n")
        time.sleep(0.001)
        return ([], k) if d == D else ([(d + 1, 2 * k), (d + 1, 2 * k + 1)], None)

    if __name__ == "__main__":
        import functools
        journal, log, backend = sys.argv[1], sys.argv[2], sys.argv[3]
        r = dlbkit.run_tree(functools.partial(logged, log=log), (0, 0), backend=backend,
                            workers=None if backend == "mpi" else 2, journal=journal)
        if os.environ.get("PMI_RANK", "0") == "0":
            print(json.dumps({{"value": r.value, "tasks": r.tasks, "resumed": r.trace.meta["journal"]["resumed"]}}))
"""


def _rerun_expands_the_frontier(cmd, j, log, tmp_path) -> None:
    snaps = _snapshots(j)
    assert snaps, "no snapshot was written before the kill"
    under = _check(snaps[-1])
    before = len(log.read_text().splitlines())
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert p.returncode == 0, p.stderr[-3000:]
    assert json.loads(p.stdout.splitlines()[-1]) == {"value": TOTAL, "tasks": under, "resumed": True}
    assert len(log.read_text().splitlines()) - before == under  # the user's expand only on the frontier's subtrees


def _script(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB.format(tests=TESTS, depth=DEPTH)))
    return script


def test_a_process_killed_part_way_is_resumed_from_its_last_snapshot(tmp_path):
    j, log = tmp_path / "j", tmp_path / "calls"
    cmd = [sys.executable, str(_script(tmp_path)), str(j), str(log), "local"]
    killed_when(cmd, lambda: j.exists() and len(_snapshots(j)) >= 3, "3 snapshots journaled", tmp_path)
    assert not [k for keys, _ in entries(j) for k in keys if k[0] == "done"]  # killed before the end
    _rerun_expands_the_frontier(cmd, j, log, tmp_path)


@pytest.mark.full
def test_a_rank_killed_under_mpi_ends_the_job_and_the_rerun_resumes_it(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import a_rank_dies
    j, log = tmp_path / "j", tmp_path / "calls"
    again = a_rank_dies([sys.executable, _script(tmp_path), j, log, "mpi"], tmp_path / "calls.died", cwd=tmp_path)
    _rerun_expands_the_frontier(again, j, log, tmp_path)
