"""``dlbkit run ... --backend mpi --ranks N``: dlbkit starts ``mpiexec`` itself and names a rank that dies.

Real MPI jobs (skipped without mpi4py or mpiexec), each under a subprocess timeout.
"""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid

import pytest

from dlbkit.runtime import launch
from dlbkit.face.cli import main
from dlbkit.runtime import status

TIMEOUT = 90

WORK = textwrap.dedent("""
    import os, time

    def cost(i):
        x = 0
        for _ in range((1 + i % 4) * 300):
            x += 1
        return x + i

    def dies_at_57(i):
        time.sleep(0.002)
        if i == 57:
            with open("killed-by", "w") as f:
                f.write(os.environ.get("PMI_RANK", "?"))
            os.kill(os.getpid(), 9)
        return i
""")


@pytest.fixture
def work(tmp_path, monkeypatch):
    name = f"lwork_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(WORK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield name
    sys.modules.pop(name, None)


def _mpi_ready():
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    if launch.find_mpiexec() is None:
        pytest.skip("no mpiexec next to python or on PATH")


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env.pop(status.ENV, None)
    return env


def _dlbkit(cwd, *argv) -> subprocess.CompletedProcess:
    try:
        return subprocess.run([sys.executable, "-m", "dlbkit", *argv], cwd=cwd, capture_output=True, text=True,
                              timeout=TIMEOUT, env=_env())
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"dlbkit {' '.join(argv)} did not end within {TIMEOUT} s (hang); stderr:\n{e.stderr}")


@pytest.mark.full  # the MPI matrix: a dead rank named by the launcher (a clean run through it is the fast tier's)
def test_a_rank_that_kills_itself_is_named_with_its_item_in_the_last_line(tmp_path, work):
    _mpi_ready()
    for _ in range(3):  # which worker rank draws item 57 varies: the line must follow it every time
        (tmp_path / "killed-by").unlink(missing_ok=True)
        p = _dlbkit(tmp_path, "run", f"{work}:dies_at_57", "--items", "200", "-b", "ss", "--backend", "mpi",
                    "--ranks", "3")
        assert p.returncode != 0
        assert "Traceback" not in p.stderr
        last = p.stderr.strip().splitlines()[-1]
        killer = (tmp_path / "killed-by").read_text()
        if "which one is unknown" in last:  # two ranks seen ending in the same instant (rare, a loaded machine)
            assert f"rank {killer} (pid " in last and "was computing item 57" in last, last
        else:
            assert last.startswith(f"dlbkit: rank {killer} (pid "), p.stderr
            assert last.endswith(" died while computing item 57"), last
        assert list(tmp_path.glob("dlbkit-status-*")) == []


def test_a_clean_run_through_the_launcher_prints_what_mpiexec_would(tmp_path, work):
    _mpi_ready()
    args = ["run", f"{work}:cost", "--items", "300", "-b", "gss", "--backend", "mpi", "--json"]
    direct = subprocess.run([launch.find_mpiexec(), "-n", "3", sys.executable, "-m", "dlbkit", *args,
                             "--results", "direct.json"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=TIMEOUT, env=_env())
    launched = _dlbkit(tmp_path, *args, "--ranks", "3", "--results", "launched.json")
    assert direct.returncode == 0 and launched.returncode == 0, launched.stderr
    assert launched.stderr == direct.stderr == ""
    a, b = json.loads(direct.stdout), json.loads(launched.stdout)
    timing = {"makespan", "lower_bound", "efficiency", "imbalance", "results"}
    assert {k: v for k, v in a.items() if k not in timing} == {k: v for k, v in b.items() if k not in timing}
    assert (tmp_path / "direct.json").read_text() == (tmp_path / "launched.json").read_text()
    plain = _dlbkit(tmp_path, "run", f"{work}:cost", "--items", "30", "--backend", "mpi", "--ranks=3")
    assert plain.returncode == 0 and plain.stderr == ""
    assert plain.stdout.startswith(f"{work}:cost: 30 items on 2 workers (mpi, ")


@pytest.mark.full  # the MPI matrix: failures through the launcher
def test_an_exception_in_the_function_is_not_called_a_death(tmp_path, work):
    _mpi_ready()
    (tmp_path / f"{work}.py").write_text(WORK + "\ndef boom(i):\n    if i == 7:\n        raise ValueError('no 7')\n"
                                         "    return i\n")
    p = _dlbkit(tmp_path, "run", f"{work}:boom", "--items", "40", "-b", "ss", "--backend", "mpi", "--ranks", "3")
    assert p.returncode != 0
    assert "ValueError: no 7" in p.stderr
    assert "died while" not in p.stderr  # every rank finished its run: the ranks said what failed


@pytest.mark.parametrize("argv, field", [
    (["--backend", "mpi", "--ranks", "0"], "--ranks"),
    (["--backend", "mpi", "--ranks", "-1"], "--ranks"),
    (["--backend", "mpi", "--ranks", "1"], "--ranks"),
    (["--backend", "mpi", "--ranks", "x"], "--ranks"),
    (["--ranks", "3"], "--ranks"),
    (["--backend", "local", "--ranks", "3"], "--ranks"),
    (["--backend", "mpi", "--ranks", "3", "--emulate", "1,0.5,0.5"], "--emulate"),
    (["--backend", "mpi", "--ranks", "3", "--workers", "2"], "--workers"),
], ids=["zero", "negative", "one", "not-a-number", "default-backend", "local", "emulate", "workers"])
def test_bad_ranks_are_one_line_and_status_2(capsys, work, argv, field):
    code = main(["run", f"{work}:cost", "--items", "10", *argv])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith("dlbkit: error: ") and field in lines[0], err
    assert "Traceback" not in err


def test_without_ranks_drops_the_option_and_its_value():
    assert launch.without_ranks(["run", "m:f", "--ranks", "3", "-N", "5"]) == ["run", "m:f", "-N", "5"]
    assert launch.without_ranks(["run", "m:f", "--ranks=3", "--record", "r.json"]) == ["run", "m:f", "--record",
                                                                                     "r.json"]
    assert launch.without_ranks(["run", "--ran", "4", "--results", "x"]) == ["run", "--results", "x"]


def test_diagnose_names_one_rank_or_lists_the_candidates():
    rec = {r: {"rank": r, "pid": 2 ** 22 + r, "host": "h", "state": s}
           for r, s in [(0, "coordinating the run"), (1, "computing items 4–7"), (2, status.DONE)]}
    assert launch.diagnose(rec, [(1, rec[1])], 9) == "dlbkit: rank 1 (pid 4194305 on h) died while computing items 4–7"
    line = launch.diagnose(rec, None, 9)
    assert line.startswith("dlbkit: a rank died (mpiexec exit status 9), which one is unknown: rank 0 ")
    assert "rank 1 (pid 4194305 on h) was computing items 4–7" in line and "rank 2" not in line
    assert launch.diagnose({2: rec[2]}, None, 1) is None  # every rank finished: nothing to add


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="a zombie's state is read from /proc (Linux)")
def test_a_rank_that_ended_and_was_not_reaped_is_dead_not_alive():
    """A rank that died is a zombie until its parent (Hydra's proxy) reaps it: os.kill(pid, 0) succeeds
    on it, which once made the launcher take it for alive and say nothing."""
    from support import wait_until

    child = subprocess.Popen([sys.executable, "-c", "pass"])  # not waited for: a zombie once it ends
    try:
        wait_until(lambda: open(f"/proc/{child.pid}/stat", "rb").read().rsplit(b")", 1)[1].split()[0] == b"Z",
                   "the child a zombie")
        os.kill(child.pid, 0)  # what the launcher asked before: no error
        assert launch._alive(child.pid, None) is False
        rec = {1: {"rank": 1, "pid": child.pid, "host": None, "state": "computing items 4–7"}}
        assert "rank 1 (pid" in launch.diagnose(rec, None, 9)  # named, not taken for alive
    finally:
        child.wait()
    assert launch._alive(os.getpid(), None) is True


def test_a_rank_gone_before_its_file_was_watched_is_a_candidate_beside_the_killed(tmp_path, monkeypatch):
    """The launcher woke late: rank 2 wrote its file and died, and Hydra's kill of rank 0 reached it,
    all between two listings of the folder. Rank 0's pidfd fires first; rank 2, found gone at the next
    listing, must still be among the candidates (it used to be dropped, and rank 0 named alone)."""
    if not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd on this platform")

    def rank_file(r, pid, state):
        (tmp_path / f"rank-{r}").write_text(json.dumps({"rank": r, "pid": pid, "host": host, "state": state}))

    import socket
    host = socket.gethostname()
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(3)]  # ranks 0 and 1, and the job
    dead = subprocess.Popen(["true"])
    dead.wait()  # rank 2: a PID that has ended
    try:
        rank_file(0, sleepers[0].pid, "coordinating the run")
        rank_file(1, sleepers[1].pid, "computing items 0–0")
        watch = launch._Watch(str(tmp_path), 3, sleepers[2].pid)
        discover = watch._discover
        calls = []

        def late(*a):
            out = discover(*a)
            if not calls:  # after the first listing: rank 2 appears and dies, Hydra kills rank 0
                rank_file(2, dead.pid, "computing item 57")
                sleepers[0].kill()
                sleepers[0].wait()
            elif len(calls) == 1:
                sleepers[2].kill()  # the job ends
            calls.append(out)
            return out

        monkeypatch.setattr(watch, "_discover", late)
        monkeypatch.setattr(launch._Watch, "POLL_S", 5.0)  # rank 0's end, not the timeout, wakes the poll
        watch.run()
        assert [r for r, _ in watch.first] == [0, 2]
        line = launch.diagnose(status.read(str(tmp_path)), watch.first, 9)
        assert "which one is unknown" in line and f"rank 2 (pid {dead.pid} on {host}) was computing item 57" in line
    finally:
        for p in sleepers:
            p.kill()
            p.wait()


def test_a_status_write_keeps_one_whole_record(tmp_path, monkeypatch):
    """One :func:`status.doing` (a padded record, one pwrite) leaves the last state readable; its cost
    is printed (the figure in :mod:`dlbkit.runtime.status`), not asserted."""
    monkeypatch.setenv(status.ENV, str(tmp_path))
    monkeypatch.setattr(status, "_fd", None)
    monkeypatch.setattr(status, "ON", False)
    status.open_for(5)
    try:
        n = 20000
        t = time.perf_counter()
        for i in range(n):
            status.doing("computing items %d–%d", i, i + 9)
        per = (time.perf_counter() - t) / n
        rec = status.read(str(tmp_path))[5]
        assert rec["state"] == f"computing items {n - 1}–{n + 8}" and rec["pid"] == os.getpid()
        print(f"status.doing: {per * 1e6:.2f} us per write")
    finally:
        os.close(status._fd)


RANK_OF_ANOTHER_MACHINE = textwrap.dedent("""
    import os, signal, sys
    from dlbkit.runtime import status
    status.open_for(int(sys.argv[1]))  # no such directory here: the records go over the connection
    assert status._sock is not None and status._fd is None, "not connected"
    status.doing("computing item %d", 7)
    if sys.argv[2] == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    status.done()
""")


@pytest.mark.parametrize("ending", ["die", "done"])
def test_a_rank_without_the_status_directory_tells_the_launcher_over_its_connection(tmp_path, ending):
    """A rank that cannot open the launcher's files (another machine, a private /tmp) connects to
    :data:`status.ADDR_ENV` instead: its last record arrives, and its connection's close is its end.
    A connection without the job's token is dropped and counts for nothing."""
    import socket as sk

    listener = sk.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    token = "t0k3n"
    env = _env()
    env[status.ENV] = str(tmp_path / "not-here")
    env[status.ADDR_ENV] = f"{token}@127.0.0.1:{listener.getsockname()[1]}"
    job = subprocess.Popen(["sleep", "60"])  # stands for mpiexec: the watch runs until it ends
    try:
        watch = launch._Watch(str(tmp_path), 3, job.pid, listener=listener, token=token)
        stranger = sk.create_connection(listener.getsockname())
        stranger.sendall(b'{"token": "wrong", "rank": 1, "pid": 1, "host": "x"}\n')
        rank = subprocess.Popen([sys.executable, "-c", RANK_OF_ANOTHER_MACHINE, "2", ending], env=env,
                                stderr=subprocess.PIPE, text=True)

        def end_job_after_rank():
            rank.wait(TIMEOUT)
            job.kill()
        t = threading.Thread(target=end_job_after_rank)
        t.start()
        watch.run()
        t.join()
        assert rank.returncode == (-9 if ending == "die" else 0), rank.stderr.read()
        assert 2 in watch.seen and 1 not in watch.seen  # the stranger did not count as rank 1
        rec = watch.remote[2]
        assert rec["pid"] == rank.pid
        if ending == "die":
            assert watch.first == [(2, rec)] and rec["state"] == "computing item 7"
            assert launch.diagnose(watch.remote, watch.first, 255) == (
                f"dlbkit: rank 2 (pid {rank.pid} on {rec['host']}) died while computing item 7")
        else:
            assert watch.first is None and rec["state"] == status.DONE
        stranger.close()
    finally:
        job.kill()
        job.wait()
        listener.close()


def test_ranks_that_do_not_start_within_the_bound_are_named(tmp_path):
    job = subprocess.Popen(["sleep", "60"])
    ended = []
    try:
        watch = launch._Watch(str(tmp_path), 3, job.pid, start_timeout=0.2,
                              on_late=lambda: (ended.append(True), job.kill()))
        rank_record = {"rank": 0, "pid": os.getpid(), "host": "h", "time": 0.0, "state": "starting"}
        (tmp_path / "rank-0").write_text(json.dumps(rank_record))
        watch.run()
        assert ended == [True] and watch.not_started == [1, 2]
        assert launch._late([1, 2], 0.2, "a:1,b:2", None).startswith(
            "dlbkit: ranks 1, 2 did not start within 0.2 s, so the job was ended: check that every host of "
            "--hosts a:1,b:2 is reachable")
    finally:
        job.kill()
        job.wait()


@pytest.mark.parametrize("argv, field", [
    (["--hosts", "a:1"], "--hosts"),  # without --ranks
    (["--hostfile", "h.txt"], "--hostfile"),
    (["--start-timeout", "5"], "--start-timeout"),
    (["--ranks", "3", "--hosts", "a:1", "--hostfile", "h.txt"], "--hostfile"),
    (["--ranks", "3", "--hosts", "a:0"], "--hosts"),
    (["--ranks", "3", "--hosts", "a:x"], "--hosts"),
    (["--ranks", "3", "--hosts", ",a"], "--hosts"),
    (["--ranks", "3", "--hostfile", "missing.txt"], "--hostfile"),
    (["--ranks", "3", "--hostfile", "empty.txt"], "--hostfile"),
    (["--ranks", "3", "--start-timeout", "0"], "--start-timeout"),
    (["--ranks", "3", "--start-timeout", "nan"], "--start-timeout"),
])
def test_bad_launch_flags_are_one_line_and_status_2(capsys, work, tmp_path, argv, field):
    (tmp_path / "empty.txt").write_text("# no hosts\n\n")
    (tmp_path / "h.txt").write_text("a:1\n")
    from dlbkit.face.cli import main
    for command in (["run", f"{work}:cost", "--items", "10", "--backend", "mpi"],
                    ["simulate", "demo", "--executor", "mpi"],
                    ["cluster", f"{work}:cost", "--jobs", "5", "--backend", "mpi"]):
        assert main([*command, *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"dlbkit: error: {field} ") and "\n" not in err, err


def test_a_hostfile_reads_hosts_slots_and_comments(tmp_path):
    f = tmp_path / "hosts"
    f.write_text("# the lab\nnode1:2  # fast\n\nnode2\n10.0.0.3:4\n")
    assert launch.read_hostfile(str(f)) == [("node1", 2), ("node2", None), ("10.0.0.3", 4)]
    assert launch.without_ranks(["run", "--ranks", "3", "--hosts=a:1", "--hostf", "f", "--start-t", "5", "-b",
                                 "ss"]) == ["run", "-b", "ss"]


def test_a_job_cluster_through_the_launcher_runs_every_job_once(tmp_path, work):
    """``dlbkit cluster --backend mpi --ranks 3``: rank 0 submits, ranks 1 and 2 are the nodes."""
    _mpi_ready()
    p = _dlbkit(tmp_path, "cluster", f"{work}:cost", "--jobs", "40", "--backend", "mpi", "--ranks", "3", "--json",
                "--no-progress")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert (out["jobs"], out["workers"], out["failed"], sum(out["jobs_per_node"])) == (40, 2, 0, 40)
