"""The MPI backend: real ``mpiexec`` jobs running small scripts that call ``dlbkit.map(..., backend="mpi")``.

Every job runs under a subprocess timeout, so a hang fails the test instead of stalling the suite.
"""

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support import HANG_S, TESTS, wait_until
from support.mpi import mpiexec, run_job

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 60  # seconds for any one mpiexec job


def _script(tmp_path, body: str) -> Path:
    path = tmp_path / "job.py"
    path.write_text(REPORT + textwrap.dedent(body))
    return path


def _env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env.update(extra)
    return env


def _run(script: Path, n: int, timeout: float = TIMEOUT, **env) -> subprocess.CompletedProcess:
    return run_job([sys.executable, script], n, cwd=script.parent, timeout=timeout, env=_env(**env))


def _lines(tmp_path) -> list[dict]:
    """What the ranks reported with ``report(...)`` (one file per rank: mpiexec may merge stdout lines)."""
    return [json.loads(line) for f in sorted(tmp_path.glob("report-*.jsonl")) for line in f.read_text().splitlines()]


REPORT = """
import json as _json
from mpi4py import MPI as _MPI


def report(**fields):
    rank = _MPI.COMM_WORLD.Get_rank()
    with open(f"report-{rank}.jsonl", "a") as out:
        out.write(_json.dumps(dict(rank=rank, **fields)) + "\\n")
"""


BALANCERS = ["ss", "gss", "awf-c", "fac2", "static"]

SERIAL_RESULTS = """
    import dlbkit

    def f(x):
        s = 0
        for i in range(200 * (1 + x % 7)):
            s += i ^ x
        return (x, s)

    items = list(range(157))
    expected = [f(x) for x in items]
    for b in BALANCERS:  # several runs in one job
        r = dlbkit.run_map(f, items, balancer=b, backend="mpi")
        t = r.trace
        report(balancer=b, ok=r.results == expected, source=t.source, n_workers=len(t.speeds),
               tiles=sorted(zip(t.first, t.count)), t_start_min=min(t.t_start),
               ask_before_start=all(a <= s + 1e-9 for a, s in zip(t.t_ask, t.t_start)))
    report(balancer="empty", ok=dlbkit.map(f, [], backend="mpi") == [])
"""


@pytest.mark.parametrize("n", [3, 4])
def test_every_rank_gets_the_serial_results(tmp_path, n):
    script = _script(tmp_path, SERIAL_RESULTS.replace("BALANCERS", repr(BALANCERS)))
    p = _run(script, n)
    assert p.returncode == 0, p.stderr
    lines = _lines(tmp_path)
    assert len(lines) == n * (len(BALANCERS) + 1), lines
    assert all(d["ok"] for d in lines), [d for d in lines if not d["ok"]]
    for b in BALANCERS:
        per_rank = [d for d in lines if d["balancer"] == b]
        assert sorted(d["rank"] for d in per_rank) == list(range(n))
        for d in per_rank:
            assert d["source"] == "mpi" and d["n_workers"] == n - 1
            assert d["tiles"] == per_rank[0]["tiles"]  # the same trace on every rank
            assert d["ask_before_start"] and d["t_start_min"] > -1e-3  # one clock for all ranks
        pos = 0
        for first, count in per_rank[0]["tiles"]:  # every item exactly once
            assert first == pos
            pos += count
        assert pos == 157


RANDOM_LISTS = """
    import numpy as np
    import dlbkit
    from dlbkit.balancers.registry import REGISTRY

    def g(x):
        return 3 * x - 1

    rng = np.random.default_rng(20261124)  # the same draws on every rank: rank 0's arguments are broadcast anyway
    for b in sorted(n for n, c in REGISTRY.items() if c.kind == "chunking"):
        items = rng.integers(-1000, 1000, size=int(rng.integers(0, 60))).tolist()
        r = dlbkit.run_map(g, items, balancer=b, backend="mpi", seed=int(rng.integers(0, 1000)))
        t = r.trace
        report(balancer=b, ok=r.results == [g(x) for x in items], n=len(items),
               covered=sorted(i for f, c in zip(t.first, t.count) for i in range(f, f + c)))
"""


@pytest.mark.full  # the MPI matrix: every rule (test_every_rank_gets_the_serial_results is the fast tier's MPI map)
def test_every_chunking_rule_on_random_lists_gives_the_serial_results_each_item_once(tmp_path):
    """One mpiexec job, every registered chunking rule on a list of random length and values: the
    results equal the comprehension on every rank, and the chunks cover each index exactly once."""
    from dlbkit.balancers.registry import REGISTRY
    rules = sorted(n for n, c in REGISTRY.items() if c.kind == "chunking")
    p = _run(_script(tmp_path, RANDOM_LISTS), 3)
    assert p.returncode == 0, p.stderr
    lines = _lines(tmp_path)
    assert sorted(d["balancer"] for d in lines) == sorted(rules * 3)
    assert all(d["ok"] for d in lines), [d for d in lines if not d["ok"]]
    assert all(d["covered"] == list(range(d["n"])) for d in lines)


AUTO_ON_RANKS = """
    import dlbkit

    r = dlbkit.run_map(abs, list(range(-20, 20)), balancer="auto", backend="mpi")
    report(ok=r.results == [abs(x) for x in range(-20, 20)], auto="auto" in r.trace.meta)
"""


@pytest.mark.full  # the MPI matrix: auto under MPI
def test_auto_under_mpi_returns_on_every_rank(tmp_path):
    """Regression (found by the random-lists test above): run_map under auto predicted the next run on
    every rank from meta["item_cost"], which only rank 0's trace holds; the worker ranks raised KeyError
    and the job hung. Now rank 0 predicts (as Loop.run does) and every rank returns the results."""
    p = _run(_script(tmp_path, AUTO_ON_RANKS), 3)
    assert p.returncode == 0, p.stderr
    lines = sorted(_lines(tmp_path), key=lambda d: d["rank"])
    assert [d["ok"] for d in lines] == [True] * 3
    assert [d["auto"] for d in lines] == [True, False, False]


FAILING = """
    import time, dlbkit

    def f(x):
        time.sleep(0.002)
        if x == 37:
            raise ValueError(f"bad item {x}")
        return x

    dlbkit.map(f, range(200), balancer="ss", backend="mpi")
    print("map returned")
"""


PARTIAL = """
    import operator, dlbkit

    def f(x):
        if x in (37, 80):
            raise ValueError(f"bad item {x}")
        return x * x

    r = dlbkit.map(f, range(120), balancer="gss", backend="mpi", return_exceptions=True)
    report(what="map", ok=all((isinstance(v, ValueError) and str(v) == f"bad item {i}") if i in (37, 80)
                              else v == i * i for i, v in enumerate(r)))
    g = {"a": (abs, -37), "b": (f, "a"), "c": (operator.neg, "b"), "d": (operator.neg, "a")}
    got = dlbkit.graph(g, backend="mpi", return_exceptions=True)
    report(what="graph", ok=got["a"] == 37 and got["d"] == -37 and isinstance(got["b"], ValueError)
           and isinstance(got["c"], ValueError))
    try:
        dlbkit.map(f, range(120), balancer="ss", backend="mpi", record="part.json")
    except dlbkit.TaskError as e:  # rank 0's; a worker rank ends when the run stops
        report(what="raised", index=e.index, kept=sorted(e.results), ok=all(v == i * i for i, v in e.results.items()),
               done=e.trace.meta["partial"]["done"], recorded=dlbkit.load_trace("part.json").meta["partial"]["done"])
"""


@pytest.mark.full  # the MPI matrix: failures on ranks
def test_return_exceptions_on_every_rank_and_a_failed_runs_results_kept_on_rank_0(tmp_path):
    _run(_script(tmp_path, PARTIAL), 3)  # the worker ranks stop at the last map's failure: its status is theirs
    lines = _lines(tmp_path)
    for what in ("map", "graph"):
        assert sorted(d["rank"] for d in lines if d["what"] == what) == [0, 1, 2]
        assert all(d["ok"] for d in lines if d["what"] == what), lines
    (raised,) = [d for d in lines if d["what"] == "raised"]
    assert raised["rank"] == 0 and raised["index"] == 37 and raised["ok"]
    assert 37 not in raised["kept"] and len(raised["kept"]) == raised["done"] == raised["recorded"]


@pytest.mark.full  # the MPI matrix: failures on ranks
def test_an_exception_ends_the_job_with_the_item_and_its_traceback(tmp_path):
    p = _run(_script(tmp_path, FAILING), 4)
    assert p.returncode != 0
    assert "map returned" not in p.stdout
    err = p.stderr
    assert "item 37 failed" in err and "ValueError: bad item 37" in err
    assert err.count("Traceback in the worker") == 1  # printed once, by rank 0
    assert 'raise ValueError(f"bad item {x}")' in err  # the original traceback
    for k in (1, 2, 3):
        assert f"dlbkit: rank {k} stopping: item 37 failed on rank" in err
    assert "MPI_Abort" not in err and "BAD TERMINATION" not in err  # a clean stop


@pytest.mark.full  # the MPI matrix: failures on ranks
def test_workers_that_cannot_stop_in_time_abort_the_job(tmp_path):
    script = _script(tmp_path, """
        import time, dlbkit

        def f(x):
            time.sleep(0.1)  # the other worker's first fac2 chunk (100 items) takes 10 s
            if x == 10:  # by then both workers hold their first chunk
                raise RuntimeError("item ten broken")
            return x

        dlbkit.map(f, range(400), balancer="fac2", backend="mpi")
    """)
    t = time.monotonic()
    p = _run(script, 3, DLBKIT_MPI_GRACE_S="1")
    # 1 s of work and 1 s of grace, not the 10 s chunk: the 8 s leave room for the ranks' start on a
    # loaded machine while a run that waited for the chunk would still take longer
    assert time.monotonic() - t < 8
    assert p.returncode != 0
    assert "item 10 failed" in p.stderr and "RuntimeError: item ten broken" in p.stderr
    assert "did not stop within 1 s" in p.stderr


EMULATED = """
    import time, dlbkit

    def f(x):
        time.sleep(0.003)  # a few ms of measured work per item, whatever the machine's load
        return -x

    items = list(range(300))
    r = dlbkit.run_map(f, items, balancer=BALANCER, backend="mpi", emulate=[1, 1, 0.5])
    done = [sum(c for w, c in zip(r.trace.node, r.trace.count) if w == i) for i in range(3)]
    report(ok=r.results == [-x for x in items], done=done, speeds=r.trace.speeds)
"""


@pytest.mark.full  # the MPI matrix: emulation on ranks
@pytest.mark.parametrize("balancer", ["awf-c", "ss"])
def test_emulated_speeds_make_the_slow_rank_do_less(tmp_path, balancer):
    p = _run(_script(tmp_path, EMULATED.replace("BALANCER", repr(balancer))), 4)
    assert p.returncode == 0, p.stderr
    lines = _lines(tmp_path)
    assert len(lines) == 4 and all(d["ok"] for d in lines)
    done = lines[0]["done"]
    assert all(d["done"] == done for d in lines)
    assert sum(done) == 300 and lines[0]["speeds"] == [1.0, 1.0, 0.5]
    assert done[2] < min(done[0], done[1]), done  # the half-speed rank does fewer items


@pytest.mark.full  # the MPI matrix: emulation on ranks
def test_emulation_must_give_one_speed_per_worker_rank(tmp_path):
    script = _script(tmp_path, """
        import dlbkit
        dlbkit.map(abs, range(10), backend="mpi", emulate=[1, 0.5])
    """)
    p = _run(script, 4)
    assert p.returncode != 0
    assert "emulate must be one speed per worker rank: 3 for this 4-rank MPI job" in p.stderr
    assert p.stderr.count("Traceback") == 1  # rank 0's ConfigError; the others say one line each
    assert p.stderr.count("rank 0 rejected the run") == 3


def test_one_rank_is_a_clear_error(tmp_path):
    script = _script(tmp_path, """
        import dlbkit
        dlbkit.map(abs, range(10), backend="mpi")
    """)
    message = "MPI ranks must be at least 2 for backend 'mpi'"
    for cmd in ([mpiexec(), "-n", "1", sys.executable, str(script)], [sys.executable, str(script)]):
        p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=TIMEOUT, env=_env())
        assert p.returncode != 0
        assert p.stderr.count(message) == 1 and "got 1" in p.stderr
        last = p.stderr.strip().splitlines()[-1]
        assert last.startswith("dlbkit.errors.ConfigError: " + message)  # one line says it all
        assert "MPI_Abort" not in p.stderr and "BAD TERMINATION" not in p.stderr


LONG = """
    import os, sys, time, dlbkit
    from mpi4py import MPI

    HERE = os.path.dirname(os.path.abspath(__file__))

    def f(x):
        # the first item on each worker rank opens its gate: the test signals once both are inside
        gate = os.path.join(HERE, f"computing-{MPI.COMM_WORLD.Get_rank()}")
        if not os.path.exists(gate):
            open(gate, "w").close()
        time.sleep(0.05)
        return x

    print(f"pid {MPI.COMM_WORLD.Get_rank()} {os.getpid()}", flush=True)
    MPI.COMM_WORLD.Barrier()
    # 1 000 s of work on 2 workers, fac2's first chunks 250 s each: a run that ends within
    # PROMPT_S of a signal was stopped in the middle of them, however loaded the machine
    dlbkit.map(f, range(20000), balancer="fac2", backend="mpi")
    print("map returned", flush=True)
"""

#: the time a signalled job may take to end, against chunks (and a tree task) of hundreds of
#: seconds: generous for a loaded machine, far below what finishing the work would take
PROMPT_S = 60


def _inside(tmp_path, ranks=(1, 2)) -> None:
    """Wait until each worker rank of *ranks* has opened its gate (it computes an item or a task)."""
    wait_until(lambda: all((tmp_path / f"computing-{r}").exists() for r in ranks),
               f"worker ranks {list(ranks)} computing")


def _start(script: Path, n: int) -> tuple[subprocess.Popen, dict[int, int]]:
    p = subprocess.Popen([mpiexec(), "-n", str(n), sys.executable, str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(), start_new_session=True)
    pids = {}
    while len(pids) < n:
        line = p.stdout.readline()
        if not line:
            break
        # mpiexec merges the ranks' output: two "pid R P" reports can share one line
        for rank, pid in re.findall(r"pid (\d+) (\d+)", line):
            pids[int(rank)] = int(pid)
    return p, pids


def _finish(p: subprocess.Popen, timeout: float) -> tuple[int, str, str]:
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"mpiexec did not end within {timeout} s (hang)")
    return p.returncode, out, err


@pytest.mark.full  # the MPI matrix: signals to a job
def test_ctrl_c_stops_every_rank_promptly(tmp_path):
    p, pids = _start(_script(tmp_path, LONG), 3)
    assert len(pids) == 3
    _inside(tmp_path)  # inside the map, each worker in the middle of a 250 s chunk
    t = time.monotonic()
    p.send_signal(signal.SIGINT)  # as Ctrl-C in a terminal: mpiexec forwards it to every rank
    code, out, err = _finish(p, HANG_S)
    assert time.monotonic() - t < PROMPT_S  # the workers did not finish their chunks first
    assert code != 0 and "map returned" not in out
    assert "KeyboardInterrupt" in err
    assert "dlbkit: rank 1 stopping: rank 0 was interrupted" in err


TREE_LONG = """
    import os, sys, time, dlbkit
    from mpi4py import MPI
    sys.path.insert(0, {tests!r})
    from support.signals import signal_when

    if MPI.COMM_WORLD.Get_rank() == 2:  # the idle worker's gate: its run loop reads its first message
        sys.setprofile(signal_when("run", "read", None, marker=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                            "computing-2")))

    def expand(t):
        if t == 0:
            open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "computing-1"), "w").close()
            time.sleep(600)  # one long task: the root, on worker 0 (rank 1)
        return [], 1

    print(f"pid {MPI.COMM_WORLD.Get_rank()} {os.getpid()}", flush=True)
    MPI.COMM_WORLD.Barrier()
    dlbkit.tree(expand, 0, backend="mpi", progress=False)
    print("tree returned", flush=True)
"""


@pytest.mark.full  # the MPI matrix: signals to a job
def test_ctrl_c_interrupts_a_trees_long_expand_on_its_rank(tmp_path):
    """As a map's function, a tree's ``expand`` is the user's code that Ctrl-C interrupts on a worker
    rank: before, rank 1 went on sleeping and rank 0 waited GRACE_S (10 s) for it, then aborted."""
    p, pids = _start(_script(tmp_path, TREE_LONG.replace("{tests!r}", repr(TESTS))), 3)
    assert len(pids) == 3
    _inside(tmp_path)  # rank 1 in the middle of its 600 s expand, rank 2 in its run
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    code, out, err = _finish(p, HANG_S)
    assert time.monotonic() - t < PROMPT_S, err[-2000:]
    assert code != 0 and "tree returned" not in out
    assert "KeyboardInterrupt" in err and "MPI_Abort" not in err and "aborting" not in err, err[-2000:]
    assert "dlbkit: rank 1 stopping: rank 0 was interrupted" in err


@pytest.mark.full  # the MPI matrix: killed ranks
def test_a_killed_worker_rank_ends_the_job_instead_of_hanging(tmp_path):
    p, pids = _start(_script(tmp_path, LONG), 3)
    assert len(pids) == 3
    _inside(tmp_path)
    os.kill(pids[2], signal.SIGKILL)  # MPI cannot survive this: mpiexec must end the job
    code, out, _ = _finish(p, HANG_S)
    assert code != 0 and "map returned" not in out


def _gone(pids, timeout: float = HANG_S) -> list[int]:
    """The pids still running after *timeout* seconds (a zombie counts as gone)."""
    deadline = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if _running(p)]
    return left


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.full  # the MPI matrix: killed ranks
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_killed_rank_0_ends_every_rank(tmp_path, sig):
    """Rank 0 (the coordinator) killed: mpiexec ends the job, no worker rank is left computing."""
    p, pids = _start(_script(tmp_path, LONG), 3)
    assert len(pids) == 3
    _inside(tmp_path)
    os.kill(pids[0], sig)
    code, out, _ = _finish(p, HANG_S)
    assert code != 0 and "map returned" not in out
    assert _gone(pids.values()) == []


UNPICKLABLE = """
    import threading, dlbkit

    def f(x):
        return threading.Lock() if x == 5 else x

    dlbkit.map(f, range(20), balancer="ss", backend="mpi")
    print("map returned")
"""


@pytest.mark.full  # the MPI matrix: failures on ranks
def test_a_result_that_cannot_be_pickled_is_a_clean_task_error(tmp_path):
    p = _run(_script(tmp_path, UNPICKLABLE), 3)
    assert p.returncode != 0 and "map returned" not in p.stdout
    err = p.stderr
    assert "TaskError: item 5 failed: PicklingError: the result of f cannot be pickled" in err
    assert "cannot pickle '_thread.lock' object" in err
    assert "MPI_Abort" not in err and "BAD TERMINATION" not in err  # a clean stop, no abort
    for k in (1, 2):
        assert f"dlbkit: rank {k} stopping: item 5 failed on rank" in err
