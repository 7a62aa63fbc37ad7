"""``dlbkit.Cluster(journal=PATH)``: each job's result appended as it arrives, a rerun that submits the same
jobs getting the journaled results at once and running only the others, whatever killed the first run
(the client by SIGKILL, a node, under MPI a rank, which ends the whole job).

Every check counts the user's calls (each job appends a line to a log: appends of a line are atomic)
and reads the journal back: every job's result exactly once in it, the whole equal to serial.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.runtime.journal import entries

from support import HANG_S, TESTS, wait_until
from support.cluster_jobs import boom, nap
from support.processes import killed_when


def _keys(path) -> list[tuple[str, int]]:
    """Every job key the journal holds, one per entry."""
    return [k for keys, _ in entries(path) for k in keys] if path.exists() else []


def test_a_rerun_gets_the_journaled_results_at_once_and_runs_only_the_rest(tmp_path):
    j = tmp_path / "jobs.journal"
    with dlbkit.Cluster(2, journal=j) as c:
        fs = [c.submit(nap, i, 0.0) for i in range(30)] + c.submit_batch(nap, [(i, 0.0) for i in range(30, 36)])
        bad = c.submit(boom, 7)
        assert [f.result(timeout=HANG_S) for f in fs] == list(range(36))
        with pytest.raises(ValueError, match="job 7 failed"):
            bad.result(timeout=HANG_S)
    assert c.journaled == 0 and c.result().trace.meta["journal"] == {"path": str(j), "reused": 0, "computed": 37}
    assert len(_keys(j)) == len(set(_keys(j))) == 36  # the job that raised is not journaled
    # the rerun submits them in another order, two of them twice, and more: each equal job gets the
    # result of its equal in the first run, the k-th repeat the k-th one's
    with dlbkit.Cluster(2, journal=j) as c:
        fs = [c.submit(nap, i, 0.0) for i in reversed(range(40))] + [c.submit(nap, 3, 0.0), c.submit(nap, 3, 0.0)]
        bad = c.submit(boom, 7)
        assert [f.result(timeout=HANG_S) for f in fs] == list(reversed(range(40))) + [3, 3]
        with pytest.raises(ValueError, match="job 7 failed"):  # run again, and raising again
            bad.result(timeout=HANG_S)
    # the batch's jobs are the same pickles as submit's: journaled too; run: 36..39, the two repeats, boom
    assert c.journaled == 36
    assert len(c.ps()) == 7 and c.result().trace.meta["journal"]["computed"] == 7
    assert len(_keys(j)) == len(set(_keys(j))) == 36 + 6


def test_a_journal_that_is_not_one_or_a_path_that_cannot_be_written_is_refused_before_any_job(tmp_path):
    (tmp_path / "text").write_text("not a journal\n")
    with pytest.raises(ConfigError, match="journal must be a dlbkit journal"):
        dlbkit.Cluster(2, journal=tmp_path / "text")
    with pytest.raises(ConfigError, match="journal must be a file in an existing directory"):
        dlbkit.Cluster(2, journal=tmp_path / "no" / "such")
    with pytest.raises(ConfigError, match="journal must be a file path"):
        dlbkit.Cluster(2, journal=3)
    m = tmp_path / "map.journal"
    dlbkit.map(abs, [1, 2], workers=1, journal=m)
    with pytest.raises(ConfigError, match=r"journal must be the journal of this run \(the jobs of dlbkit.Cluster\)"):
        dlbkit.Cluster(2, journal=m)  # a map's journal is not a cluster's


def _logged_cube(x, log):
    with open(log, "a") as f:
        f.write(f"{x}\n")
    return x ** 3


def _calls(log) -> list[int]:
    return sorted(int(x) for x in log.read_text().split()) if log.exists() else []


def test_a_node_killed_in_a_journaled_cluster_loses_nothing(tmp_path):
    j, log = tmp_path / "j", tmp_path / "calls"
    with dlbkit.Cluster(3, journal=j) as c:
        fs = [c.submit(nap, i, 0.01) for i in range(60)]
        fs[2].result(timeout=HANG_S)
        wait_until(lambda: sum(j.node == 1 and j.state in ("placed", "running") for j in c.ps()) >= 1,
                   "node 1 holding a job not done")
        os.kill(c.pids()[1], signal.SIGKILL)
        assert [f.result(timeout=HANG_S) for f in fs] == list(range(60))
    assert c.result().trace.meta["dead"] == [1]
    assert len(_keys(j)) == len(set(_keys(j))) == 60  # each once, the resubmitted ones too
    with dlbkit.Cluster(2, journal=j) as c:
        assert [c.submit(nap, i, 0.01).result(timeout=HANG_S) for i in range(60)] == list(range(60))
        assert c.submit(_logged_cube, 4, str(log)).result(timeout=HANG_S) == 64
    assert c.journaled == 60 and _calls(log) == [4]


KILLED = """
    import json, sys, time
    sys.path.insert(0, {tests!r})
    import dlbkit

    def slow_cube(x, log):
        with open(log, "a") as f:
            f.write(f"{{x}}\\n")
        time.sleep(0.003)
        return x ** 3

    if __name__ == "__main__":
        journal, n, log, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
        workers = None if backend == "mpi" else 2
        with dlbkit.Cluster(workers, backend=backend, journal=journal) as c:
            fs = [c.submit(slow_cube, x, log) for x in range(n)]
            got = [f.result(timeout=120) for f in fs]
        print(json.dumps({{"ok": got == [x ** 3 for x in range(n)], "journaled": c.journaled,
                          "computed": c.result().trace.meta["journal"]["computed"]}}))
"""


def _script(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(KILLED.format(tests=TESTS)))
    return script


def _rerun_completes(cmd, j, log, n, kept: int, tmp_path) -> None:
    """Rerun *cmd*: every result equal to serial, the *kept* journaled ones not run again, the journal
    then holding each job exactly once."""
    before = _calls(log)
    p = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.splitlines()[-1])
    assert got == {"ok": True, "journaled": kept, "computed": n - kept}
    again = Counter(_calls(log)) - Counter(before)
    assert sorted(again.elements()) == [x for x in range(n) if x not in _journaled_jobs(j, kept, n)]
    assert len(_keys(j)) == len(set(_keys(j))) == n  # every job exactly once


def _journaled_jobs(j, kept: int, n: int) -> set[int]:
    """The jobs (their x) whose results the first *kept* entries of the journal hold."""
    root = {x ** 3: x for x in range(n)}
    return {root[pickle.loads(v)] for _, values in entries(j)[:kept] for v in values}


def test_a_client_killed_part_way_is_resumed_by_a_rerun(tmp_path):
    script, j, log, n = _script(tmp_path), tmp_path / "job.journal", tmp_path / "calls", 400
    cmd = [sys.executable, str(script), str(j), str(n), str(log), "local"]
    killed_when(cmd, lambda: len(_keys(j)) >= 40, "40 results journaled", tmp_path)  # the client and its nodes
    kept = len(_keys(j))
    assert 40 <= kept < n
    _rerun_completes(cmd, j, log, n, kept, tmp_path)


MPI_KILLED = KILLED.replace("""        with open(log, "a") as f:""", """        if x == 150 and not __import__("os").path.exists(log + ".died"):
            open(log + ".died", "w").close()
            __import__("os")._exit(9)  # this rank dies: mpiexec ends the whole job
        with open(log, "a") as f:""")


@pytest.mark.full
def test_a_rank_killed_under_mpi_ends_the_job_and_the_rerun_completes_it(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import a_rank_dies
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(MPI_KILLED.format(tests=TESTS)))
    j, log, n = tmp_path / "job.journal", tmp_path / "calls", 300
    again = a_rank_dies([sys.executable, script, j, n, log, "mpi"], tmp_path / "calls.died", cwd=tmp_path)
    kept = len(_keys(j))
    assert kept < n
    _rerun_completes(again, j, log, n, kept, tmp_path)
