"""``dlbkit.map(..., journal=PATH)``: every finished chunk appended as it arrives, a rerun computing only
what is missing, equal to an uninterrupted run; a torn last record dropped; another run's journal refused.

The kill tests kill the coordinator (SIGKILL, in a subprocess) or a worker part-way, then rerun: every
result exactly once in the journal, the whole equal to serial. The fuzz test tears the journal at random
byte offsets (what a kill at a random point leaves) and reruns.
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
import zlib
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.runtime.journal import MAGIC, Journal, _FRAME, entries

from support import HANG_S
from support.processes import killed_when

N = 120


def cube(x):
    return x * x * x


def _indices(path) -> list[int]:
    return sorted(i for indices, _ in entries(path) for i in indices)


def test_a_rerun_computes_nothing_and_returns_every_result_in_order(tmp_path):
    j = tmp_path / "run.journal"
    first = dlbkit.run_map(cube, range(N), workers=2, journal=j)
    assert first.results == [cube(x) for x in range(N)]
    assert first.trace.meta["journal"] == {"path": str(j), "reused": 0, "computed": N}
    assert _indices(j) == list(range(N))  # every result once
    again = dlbkit.run_map(cube, range(N), workers=2, journal=j)
    assert again.results == first.results and again.trace.meta["journal"]["computed"] == 0
    assert _indices(j) == list(range(N))  # nothing written twice


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0), balancer=st.sampled_from(["ss", "gss", "awf-c", "static"]))
def test_a_journal_torn_anywhere_is_completed_by_a_rerun_each_result_once(tmp_path_factory, cut, balancer):
    """A kill at any point leaves a journal cut at some byte: its whole records are kept, the torn one
    dropped, and the rerun computes exactly the items missing."""
    d = tmp_path_factory.mktemp("torn")
    whole = d / "whole.journal"
    dlbkit.map(cube, range(N), workers=2, balancer="gss", journal=whole)
    j = d / "cut.journal"
    shutil.copy(whole, j)
    size = j.stat().st_size
    with open(j, "r+b") as f:
        f.truncate(int(cut * size))
    kept = len(_indices(j)) if j.stat().st_size > len(MAGIC) else 0
    r = dlbkit.run_map(cube, range(N), workers=2, balancer=balancer, journal=j)
    assert r.results == [cube(x) for x in range(N)]
    assert r.trace.meta["journal"]["reused"] == kept and r.trace.meta["journal"]["computed"] == N - kept
    assert sum(r.trace.count) == N - kept  # the rerun computed only what was missing
    assert _indices(j) == list(range(N))  # and the journal holds every result exactly once


def test_a_torn_or_corrupt_last_record_is_dropped_and_the_journal_goes_on(tmp_path):
    p = tmp_path / "j"
    with Journal(p, function="f", units=10, fingerprint="x") as j:
        for k in range(3):
            j.append([k], [k * 10])
    whole = p.stat().st_size
    with open(p, "r+b") as f:
        f.truncate(whole - 3)  # the last record torn
    with Journal(p, function="f", units=10, fingerprint="x") as j:
        assert j.done == {0: 0, 1: 10} and j.dropped > 0 and p.stat().st_size < whole - 3
        j.append([2], [20])
    data = bytearray(p.read_bytes())
    data[-1] ^= 0xFF  # the last record's payload changed: its CRC no longer matches
    p.write_bytes(bytes(data))
    with Journal(p, function="f", units=10, fingerprint="x") as j:
        assert j.done == {0: 0, 1: 10}
    # a frame as the format says: length and CRC-32 big-endian, then the pickle
    payload = pickle.dumps(([5], [50]))
    with open(p, "ab") as f:
        f.write(_FRAME.pack(len(payload), zlib.crc32(payload)) + payload)
    assert Journal(p, function="f", units=10, fingerprint="x").done == {0: 0, 1: 10, 5: 50}


@pytest.mark.parametrize("cut", [1, len(MAGIC) - 1, len(MAGIC), len(MAGIC) + 3])
def test_a_journal_torn_in_its_magic_or_header_starts_again(tmp_path, cut):
    """Killed while the first bytes were written (the fuzz test found a cut in the magic refused as
    'not a journal'): nothing was journaled, and the journal is written anew."""
    p = tmp_path / "j"
    Journal(p, function="f", units=3, fingerprint="x").close()
    with open(p, "r+b") as f:
        f.truncate(cut)
    with Journal(p, function="f", units=3, fingerprint="x") as j:
        assert j.done == {}
        j.append([1], ["one"])
    assert Journal(p, function="f", units=3, fingerprint="x").done == {1: "one"}


def test_another_runs_journal_or_a_file_that_is_not_one_is_refused(tmp_path):
    j = tmp_path / "j"
    dlbkit.map(cube, range(10), workers=1, journal=j)
    with pytest.raises(ConfigError, match=r"journal must be the journal of this run \(.*\.abs over 10 units"):
        dlbkit.map(abs, range(10), workers=1, journal=j)
    with pytest.raises(ConfigError, match=r"over 11 units .* it is of .*cube over 10 units"):
        dlbkit.map(cube, range(11), workers=1, journal=j)
    with pytest.raises(ConfigError, match="it is of .*cube over 10 units of fingerprint"):
        dlbkit.map(cube, range(1, 11), workers=1, journal=j)  # same count, other items
    (tmp_path / "other").write_text("not a journal\n")
    with pytest.raises(ConfigError, match="journal must be a dlbkit journal"):
        dlbkit.map(cube, range(10), workers=1, journal=tmp_path / "other")
    with pytest.raises(ConfigError, match="journal must be a file in an existing directory"):
        dlbkit.map(cube, range(10), workers=1, journal=tmp_path / "no" / "j")
    with pytest.raises(ConfigError, match=r"journal must be a file path \(str or Path\) or None"):
        dlbkit.map(cube, range(10), workers=1, journal=3)


def test_a_failed_run_leaves_its_finished_chunks_in_the_journal_and_returning_exceptions_retries_the_failed(tmp_path):
    j = tmp_path / "j"
    with pytest.raises(dlbkit.TaskError) as got:
        dlbkit.map(_fails_at_70, range(N), workers=1, balancer="ss", journal=j)
    assert got.value.index == 70 and got.value.results == {i: cube(i) for i in range(70)}
    assert _indices(j) == list(range(70))
    r = dlbkit.run_map(_fails_at_70, range(N), workers=2, journal=j, return_exceptions=True)
    assert isinstance(r.results[70], ValueError) and r.trace.meta["failed"] == [70]
    assert [v for i, v in enumerate(r.results) if i != 70] == [cube(i) for i in range(N) if i != 70]
    assert _indices(j) == [i for i in range(N) if i != 70]  # the failed item is not journaled: tried again
    with pytest.raises(dlbkit.TaskError) as got:  # the rerun's error names the item in the whole loop
        dlbkit.map(_fails_at_70, range(N), workers=1, journal=j)
    assert got.value.index == 70 and len(got.value.results) == N - 1


def _fails_at_70(x):
    if x == 70:
        raise ValueError("seventy")
    return cube(x)


KILLED = """
    import sys, time, dlbkit

    def slow_cube(x):
        time.sleep(0.004)
        return x * x * x

    dlbkit.map(slow_cube, range(int(sys.argv[2])), workers=2, balancer="ss", journal=sys.argv[1])
"""


def test_a_coordinator_killed_part_way_is_resumed_by_a_rerun(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(KILLED))
    j = tmp_path / "job.journal"
    n = 600
    killed_when([sys.executable, str(script), str(j), str(n)], lambda: j.exists() and len(_indices(j)) >= 40,
                "40 results journaled", tmp_path)  # the coordinator and its workers, at once
    kept = len(_indices(j))
    assert 40 <= kept < n
    # the rerun must be the same function by name: the script's is __main__.slow_cube, so rerun it as a script
    p = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import json, sys, runpy
        sys.argv = ["job.py", sys.argv[1], sys.argv[2]]
        import dlbkit
        real_map = dlbkit.run_map
        def run_map(*a, **k):
            r = real_map(*a, **k)
            print(json.dumps({"ok": r.results == [x ** 3 for x in range(int(sys.argv[2]))],
                              "journal": r.trace.meta["journal"], "count": sum(r.trace.count)}))
            return r
        dlbkit.map = lambda *a, **k: run_map(*a, **k).results
        runpy.run_path("job.py", run_name="__main__")
    """), str(j), str(n)], cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.splitlines()[-1])
    assert got["ok"] and got["journal"]["reused"] == kept and got["count"] == n - kept
    assert _indices(j) == list(range(n))  # every result exactly once


def _dies_once(x, marker):
    if x == 50 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(3)
    return cube(x)


def test_a_worker_killed_in_a_journaled_run_loses_nothing(tmp_path):
    j = tmp_path / "j"
    r = dlbkit.run_map(functools.partial(_dies_once, marker=str(tmp_path / "died")), range(N), workers=2,
                       balancer="ss", journal=j)
    assert (tmp_path / "died").exists() and r.trace.meta["faults"]  # a worker did die
    assert r.results == [cube(x) for x in range(N)]
    assert _indices(j) == list(range(N))


def test_the_journal_names_a_partials_function_and_arguments():
    from dlbkit.runtime.journal import function_name
    assert function_name(functools.partial(_dies_once, marker="m")) == \
        f"partial({__name__}._dies_once, marker='m')"
    assert function_name(cube) == f"{__name__}.cube"


# --- graph ------------------------------------------------------------------------------------------
def _logged(log, key, *inputs):
    """A task's function that notes each call (one line per call: appends of a line are atomic)."""
    with open(log, "a") as f:
        f.write(f"{key}\n")
    return key + sum(inputs)


def _layered(log, n=30):
    """n tasks t0..t{n-1}, each needing the two before it (a chain with skips)."""
    return {f"t{j}": (_logged, log, j, *(f"t{i}" for i in (j - 1, j - 2) if i >= 0)) for j in range(n)}


def _serial(n=30):
    out = {}
    for j in range(n):
        out[f"t{j}"] = j + sum(out[f"t{i}"] for i in (j - 1, j - 2) if i >= 0)
    return out


def _calls(log) -> list[int]:
    return sorted(int(x) for x in log.read_text().split()) if log.exists() else []


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 1.0), balancer=st.sampled_from(["pd", "heft", "round-robin"]))
def test_a_graph_journal_torn_anywhere_is_completed_calling_only_the_missing_tasks(tmp_path_factory, cut, balancer):
    d = tmp_path_factory.mktemp("graph")
    whole, log = d / "whole.journal", d / "calls"
    assert dlbkit.graph(_layered(str(log)), workers=2, balancer=balancer, journal=whole) == _serial()
    assert _calls(log) == list(range(30))
    j = d / "cut.journal"
    shutil.copy(whole, j)
    with open(j, "r+b") as f:
        f.truncate(int(cut * j.stat().st_size))
    kept = _indices(j)
    log.unlink()
    r = dlbkit.run_graph(_layered(str(log)), workers=2, balancer=balancer, journal=j)
    assert r.results == _serial()
    assert _calls(log) == [i for i in range(30) if i not in kept]  # the user's function only where missing
    assert r.trace.meta["journal"]["reused"] == len(kept)
    assert _indices(j) == list(range(30))  # each value once in the journal


def test_a_failed_graph_resumes_from_its_journal_and_another_graphs_journal_is_refused(tmp_path):
    log, j = tmp_path / "calls", tmp_path / "j"
    tasks = _layered(str(log), 10)
    tasks["t5"] = (_fails_at_70, 70)  # t5 raises; t6.. need it
    with pytest.raises(dlbkit.TaskError) as got:
        dlbkit.graph(tasks, workers=1, balancer="heft", journal=j)
    assert got.value.index == "t5" and set(got.value.results) <= {f"t{i}" for i in range(5)}
    kept = _indices(j)
    assert kept == sorted(int(k[1:]) for k in got.value.results)
    log.unlink()
    fixed = _layered(str(log), 10)
    with pytest.raises(ConfigError, match="journal must be the journal of this run"):
        dlbkit.graph(fixed, workers=1, journal=j)  # t5's function changed: another graph
    j2 = tmp_path / "j2"
    dlbkit.graph(_layered(str(log), 10), workers=1, journal=j2)
    log.unlink()
    assert dlbkit.graph(_layered(str(log), 10), workers=2, journal=j2) == _serial(10)
    assert _calls(log) == []  # every task journaled: no function called


# --- a coordinator killed (SIGKILL), or under MPI a rank (mpiexec ends the job): the rerun completes it
JOB = """
    import functools, json, os, sys, time
    import dlbkit

    def logged_cube(x, log):
        if x == 150 and os.environ.get("PMI_RANK") and not os.path.exists(log + ".died"):
            open(log + ".died", "w").close()
            os._exit(9)  # this rank dies: mpiexec ends the whole job
        with open(log, "a") as f:
            f.write(f"{x}\\n")
        time.sleep(0.002)
        return x * x * x

    def task(log, key, *inputs):
        return logged_cube(key, log) + sum(inputs) % 7

    if __name__ == "__main__":
        journal, n, log, what, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
        workers = None if backend == "mpi" else 2
        if what == "map":
            r = dlbkit.run_map(functools.partial(logged_cube, log=log), range(n), backend=backend, workers=workers,
                               balancer="ss", journal=journal)
            ok = r.results == [x ** 3 for x in range(n)]
        else:
            tasks = {f"t{j}": (task, log, j, *(f"t{i}" for i in (j - 1, j - 3) if i >= 0)) for j in range(n)}
            r = dlbkit.run_graph(tasks, backend=backend, workers=workers, balancer="heft", journal=journal)
            serial = {}
            for j in range(n):
                serial[f"t{j}"] = j ** 3 + sum(serial[f"t{i}"] for i in (j - 1, j - 3) if i >= 0) % 7
            ok = r.results == serial
        if os.environ.get("PMI_RANK", "0") == "0":  # every rank has the results: one says them (lines would interleave)
            print(json.dumps({"ok": ok, "journal": r.trace.meta["journal"]}))
"""


def _rerun_computes_only_what_is_missing(cmd, j, log, n, tmp_path) -> None:
    kept = _indices(j)
    assert len(kept) < n
    before = _calls(log)
    again = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=HANG_S)
    assert again.returncode == 0, again.stderr[-3000:]
    got = json.loads(again.stdout.splitlines()[-1])
    assert got == {"ok": True, "journal": {"path": str(j), "reused": len(kept), "computed": n - len(kept)}}
    rerun_calls = sorted((Counter(_calls(log)) - Counter(before)).elements())
    assert rerun_calls == [x for x in range(n) if x not in kept]  # the user's function only where missing
    assert _indices(j) == list(range(n))  # every result exactly once


def test_a_graph_coordinator_killed_part_way_is_resumed_by_a_rerun(tmp_path):
    script, j, log, n = tmp_path / "job.py", tmp_path / "job.journal", tmp_path / "calls", 300
    script.write_text(textwrap.dedent(JOB))
    cmd = [sys.executable, str(script), str(j), str(n), str(log), "graph", "local"]
    killed_when(cmd, lambda: j.exists() and len(_indices(j)) >= 30, "30 values journaled", tmp_path)
    assert len(_indices(j)) >= 30
    _rerun_computes_only_what_is_missing(cmd, j, log, n, tmp_path)


@pytest.mark.full
@pytest.mark.parametrize("what", ["map", "graph"])
def test_a_rank_killed_under_mpi_ends_the_job_and_the_rerun_computes_only_what_is_missing(tmp_path, what):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import a_rank_dies
    script, j, log, n = tmp_path / "job.py", tmp_path / "job.journal", tmp_path / "calls", 300
    script.write_text(textwrap.dedent(JOB))
    again = a_rank_dies([sys.executable, script, j, n, log, what, "mpi"], tmp_path / "calls.died", cwd=tmp_path)
    _rerun_computes_only_what_is_missing(again, j, log, n, tmp_path)


def _task_dies_once(marker, key, *inputs):
    """A graph task's function: the first call for key 12 kills its worker (once: a marker file)."""
    if key == 12 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(3)
    return key + sum(inputs)


def test_a_worker_killed_in_a_journaled_graph_loses_nothing(tmp_path):
    j, marker = tmp_path / "j", str(tmp_path / "died")
    tasks = {f"t{k}": (_task_dies_once, marker, k, *(f"t{i}" for i in (k - 1, k - 2) if i >= 0)) for k in range(30)}
    r = dlbkit.run_graph(tasks, workers=2, balancer="pd", journal=j)
    assert os.path.exists(marker) and r.trace.meta["faults"]  # a worker did die, its task placed again
    assert r.results == _serial()
    assert _indices(j) == list(range(30))  # each value once in the journal
