"""The Dask backend for the families whose workers keep state (a worker loop each): a task tree's
workers, an SPMD domain's and a job cluster's nodes, each loop one long-running Dask task
(:mod:`dlbkit.runtime.backends.dask_loop`).

The results are asserted equal to the serial computation (exact arithmetic: integer counts, a
stencil's rows bit for bit); a killed Dask worker process is a Cluster node lost with nothing lost or
delivered twice, and a tree's or an SPMD run's worker lost is an error naming it, in bounded time.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import time

import numpy as np
import pytest

import dlbkit
from dlbkit.errors import RemoteTraceback, TaskError
from dlbkit.face.replay import replay
from dlbkit.families.stream.runtime.agent import SWITCH_INTERVAL_S

distributed = pytest.importorskip("distributed")

from support import HANG_S  # noqa: E402
from support.cluster_jobs import boom, check_lost_node, lose_a_node, spin  # noqa: E402
from support.sweeps import dask_client  # noqa: E402,F401 - the module's cluster (a fixture)

pytestmark = pytest.mark.xdist_group("dask_loops")


def binary(n):
    """A binary tree of depth 9 (1023 tasks), each worth 1."""
    return ([n + 1, n + 1] if n < 9 else []), 1


def knapsack(state, bound):
    """Branch and bound on a 0/1 knapsack (capacity 10): a task is (item, weight, value)."""
    weights, values = (5, 4, 6, 3), (10, 40, 30, 50)
    i, w, v = state
    if i == len(weights):
        return [], None, v
    kids = [(i + 1, w, v)]
    if w + weights[i] <= 10:
        kids.append((i + 1, w + weights[i], v + values[i]))
    return kids, None, None


def fails_at_5(n):
    if n == 5:
        raise ValueError("five")
    return ([n + 1] if n < 8 else []), 1


def smooth(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3


def serial(domain, iterations):
    u = domain.copy()
    for _ in range(iterations):
        u[1:-1] = smooth(u)
    return u


def square(x):
    return x * x


def loops_running() -> int:
    """On a Dask worker: the threads of its process inside a dlbkit loop's task (its thread runs on after
    Dask forgets the task, so the scheduler's view cannot say it ended)."""
    import sys as _sys
    import traceback as _tb

    from dlbkit.runtime.backends import dask_loop as _dl
    return sum(any(f.f_code is _dl._loop_task.__code__ for f, _ in _tb.walk_stack(frame))
               for frame in _sys._current_frames().values())


def no_loop_left(client, within=HANG_S):
    """True once no Dask worker's process runs a dlbkit loop (each ends when its run does)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(client.run(loops_running).values()):
            return True
        time.sleep(0.05)
    return False


# --- a task tree --------------------------------------------------------------------------------------
@pytest.mark.parametrize("balancer", ["steal", "rid"])
def test_tree_on_dask_counts_every_task_once(dask_client, balancer):
    r = dlbkit.run_tree(binary, 0, backend="dask", client=dask_client, balancer=balancer)
    assert r.value == 2 ** 10 - 1
    assert r.trace.source == "dask" and r.trace.n_nodes == 2
    assert sum(r.trace.count) == r.tasks == sum(r.trace.meta["expanded"]) == 2 ** 10 - 1
    assert no_loop_left(dask_client)


def test_branch_and_bound_on_dask_finds_the_optimum(dask_client):
    # the optimum: items 1 and 3 (weights 4 + 3, values 40 + 50); no third item fits beside them
    value, best = dlbkit.tree(knapsack, (0, 0, 0), bound=0, combine=max, backend="dask", client=dask_client)
    assert best == 90


def test_tree_user_error_on_dask_is_a_task_error_and_no_loop_is_left(dask_client):
    with pytest.raises(TaskError, match=r"task 5 failed: ValueError: five"):
        dlbkit.tree(fails_at_5, 0, backend="dask", client=dask_client)
    assert no_loop_left(dask_client)


# --- an SPMD domain -------------------------------------------------------------------------------
@pytest.mark.parametrize("balancer", [None, "dlah"])
def test_spmd_on_dask_is_the_serial_loop_bit_for_bit(dask_client, balancer):
    u = np.zeros(60)
    u[-1] = 3.0
    r = dlbkit.run_spmd(smooth, u, iterations=40, window=5, backend="dask", client=dask_client, balancer=balancer,
                        emulate=[1.0, 0.5])
    assert np.array_equal(r.domain, serial(u, 40))
    assert r.trace.source == "dask"
    assert no_loop_left(dask_client)


# --- a job cluster ----------------------------------------------------------------------------------
@pytest.mark.parametrize("balancer", ["nezha", "round-robin-place"])
def test_cluster_on_dask_equals_a_serial_run(dask_client, balancer):
    with dlbkit.Cluster(backend="dask", client=dask_client, balancer=balancer) as c:
        got = [f.result(timeout=HANG_S) for f in [c.submit(square, i) for i in range(50)]]
        assert list(c.map(square, range(10), timeout=HANG_S)) == [i * i for i in range(10)]
    assert got == [i * i for i in range(50)]
    assert [j.state for j in c.ps()] == ["done"] * 60
    assert c.result().trace.meta["duplicates"] == 0
    assert no_loop_left(dask_client)
    assert dask_client.status == "running"  # the cluster is the user's: it runs on


def test_the_nodes_set_their_processes_switch_interval_back(dask_client):
    # the Dask workers here are threads of this process: two nodes in it, the interval set once
    before = sys.getswitchinterval()
    with dlbkit.Cluster(backend="dask", client=dask_client) as c:
        assert c.submit(sys.getswitchinterval).result(timeout=HANG_S) == SWITCH_INTERVAL_S != before
    assert no_loop_left(dask_client)
    assert sys.getswitchinterval() == before


def test_cluster_on_dask_emulates_records_replays_and_keeps_a_jobs_error(dask_client, tmp_path):
    path = tmp_path / "rec.json"
    with dlbkit.Cluster(backend="dask", client=dask_client, balancer="local", emulate=[1.0, 0.25], seed=0,
                        record=path) as c:
        jobs = [c.submit(spin, 0.01, origin=k % 2) for k in range(6)]
        bad = c.submit(boom, 7)
        with pytest.raises(ValueError, match="job 7 failed on purpose") as info:
            bad.result(timeout=HANG_S)
        assert isinstance(info.value.__cause__, RemoteTraceback) and "in boom" in str(info.value.__cause__)
        assert [f.result(timeout=HANG_S) for f in jobs] == [0.01] * 6
    # the quarter-speed node's jobs are stretched to at least 4 x their busy time (a sleep is never
    # shorter than asked); the full-speed node's are not stretched
    slow = [j for j in c.ps() if j.state == "done" and j.node == 1]
    assert slow and all(j.ended - j.started >= j.busy / 0.25 * (1 - 1e-6) for j in slow)
    assert c.result().trace.source == "dask"
    r = replay(path)
    assert len(r.trace.series["job_time"]) == 7


def test_a_cluster_of_eight_dask_workers_starts():
    """Eight loops connect at once: a listener's default backlog of 1 dropped the others, which did not
    start within 10 s."""
    with distributed.LocalCluster(processes=False, n_workers=8, threads_per_worker=1, protocol="tcp",
                                  dashboard_address=None) as lc, distributed.Client(lc, set_as_default=False) as cl:
        with dlbkit.Cluster(backend="dask", client=cl) as c:
            assert [f.result(timeout=HANG_S) for f in [c.submit(square, i) for i in range(40)]] == \
                [i * i for i in range(40)]
            assert c.alive() == list(range(8))
        assert no_loop_left(cl)


def test_a_start_that_fails_leaves_no_loop_running(dask_client):
    """Worker 1's task is pinned to an address where no Dask worker is (a worker lost while the run
    starts): the start fails within its limit, naming it, and the loop that did start ends."""
    from dlbkit.families.stream.runtime.program import ClusterRun
    from dlbkit.info import resolve as resolve_info
    from dlbkit.balancers.registry import resolve
    from dlbkit.runtime.backends import dask as dask_backend
    from dlbkit.runtime.backends.dask_loop import DaskLoopTransport

    program = ClusterRun(2, resolve("nezha", kind="placement"), resolve_info("gossip")).program
    program.setup(2, time.perf_counter(), program.shared())
    addrs = [list(dask_client.nthreads())[0], "tcp://127.0.0.1:9"]
    with pytest.raises(dlbkit.DlbkitError, match=r"did not start within 1 s \(not connected: \[1\];"):
        DaskLoopTransport(dask_client, addrs, program, [program.origin] * 2, live=dask_backend._workers,
                          connect_s=1.0)
    assert no_loop_left(dask_client)


def test_cluster_on_dask_workers_chooses_the_first(dask_client):
    with dlbkit.Cluster(1, backend="dask", client=dask_client) as c:
        assert c.submit(square, 7).result(timeout=HANG_S) == 49
        assert c.alive() == [0]


def test_cluster_on_dask_refuses_an_emulation_of_another_node_count(dask_client):
    with pytest.raises(dlbkit.ConfigError, match=r"emulate must be one per node \(2\); got .3 nodes."):
        dlbkit.Cluster(backend="dask", client=dask_client, emulate=[1.0, 1.0, 0.5])


# --- a Dask worker process killed mid-run --------------------------------------------------------------
@pytest.fixture
def three_processes(tmp_path):
    """A Dask cluster of three worker processes, and each one's pid in the scheduler's order."""
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        c.wait_for_workers(3, timeout=HANG_S)
        pids = c.run(os.getpid)
        yield c, [pids[a] for a in c.nthreads()]


def test_cluster_on_dask_loses_nothing_when_a_worker_process_is_killed(three_processes):
    client, pids = three_processes
    with dlbkit.Cluster(backend="dask", client=client, balancer="round-robin-place", seed=4) as c:
        lose_a_node(c, lambda: os.kill(pids[1], signal.SIGKILL))
    check_lost_node(c)


def kill_named(pidfile):
    """SIGKILL the process named in *pidfile* (maybe this one), once: the first caller removes the file."""
    try:
        pid = int(open(pidfile).read())
        os.remove(pidfile)
        os.kill(pid, signal.SIGKILL)
    except (FileNotFoundError, ValueError, ProcessLookupError):  # killed already
        pass


def binary_killing(n, pidfile):
    """:func:`binary`, slower; the first task of depth 6 kills the process named in *pidfile*."""
    time.sleep(0.002)
    if n == 6:
        kill_named(pidfile)
    return binary(n)


def test_tree_on_dask_survives_a_killed_worker_each_task_once(three_processes, tmp_path):
    client, pids = three_processes
    pidfile = tmp_path / "victim.pid"
    pidfile.write_text(str(pids[1]))
    r = dlbkit.run_tree(functools.partial(binary_killing, pidfile=str(pidfile)), 0, backend="dask", client=client)
    assert not pidfile.exists()  # the kill happened
    assert r.value == r.tasks == 1023  # every task expanded once by the workers that finished
    assert r.trace.meta["dead"] == [1] and r.trace.meta["recovery"][0]["to"] in (0, 2)


_STEPS = [0]  # the steps this process computed


def smooth_killing(u, pidfile):
    """A smoothing step, slower; the fifth step a process computes kills the process named in *pidfile*."""
    time.sleep(0.002)
    _STEPS[0] += 1
    if _STEPS[0] == 5:
        kill_named(pidfile)
    return (u[:-2] + u[1:-1] + u[2:]) / 3


def test_spmd_on_dask_survives_a_killed_worker_to_the_serial_result(three_processes, tmp_path):
    client, pids = three_processes
    pidfile = tmp_path / "victim.pid"
    pidfile.write_text(str(pids[1]))
    u = np.random.default_rng(3).random(62)
    serial = u.copy()
    for _ in range(30):
        serial[1:-1] = (serial[:-2] + serial[1:-1] + serial[2:]) / 3
    r = dlbkit.run_spmd(functools.partial(smooth_killing, pidfile=str(pidfile)), u, iterations=30, window=5,
                        backend="dask", client=client)
    assert not pidfile.exists()  # the kill happened
    assert np.array_equal(r.domain, serial)
    assert r.trace.meta["dead"] == [1] and r.rows[1] == 0 and sum(r.rows) == 60


def test_journals_of_a_loop_a_tree_and_a_cluster_on_dask_resume(dask_client, tmp_path, monkeypatch):
    from dlbkit.families.tree.runtime import coordinator
    from dlbkit.runtime.journal import entries
    # a Loop: a rerun gets its steps from the journal, a step cut short computes only what is missing
    j = tmp_path / "loop"
    with dlbkit.Loop(square, backend="dask", client=dask_client, journal=j) as loop:
        first = [loop.map(range(40)) for _ in range(2)]
    with open(j, "r+b") as f:  # as a killed client leaves it: the second step's results in part
        f.truncate(j.stat().st_size - 200)
    with dlbkit.Loop(square, backend="dask", client=dask_client, journal=j) as loop:
        again = [loop.run(range(40)) for _ in range(2)]
    assert [s.results for s in again] == first
    kept = [s.trace.meta["journal"]["reused"] for s in again]
    assert kept[0] == 40 and 0 < kept[1] < 40 and sum(again[1].trace.count) == 40 - kept[1]
    # a tree: snapshots, then a rerun from the last one expands just what is left (nothing, once done)
    monkeypatch.setattr(coordinator, "JOURNAL_S", 0.01)
    t = tmp_path / "tree"
    r = dlbkit.run_tree(functools.partial(binary_killing, pidfile=str(tmp_path / "none")), 0, backend="dask",
                        client=dask_client, journal=t)
    assert r.value == 1023 and r.trace.meta["journal"]["snapshots"] >= 1
    assert [k for keys, _ in entries(t) for k in keys][-1] == ("done", 0)
    assert dlbkit.run_tree(functools.partial(binary_killing, pidfile=str(tmp_path / "none")), 0, backend="dask",
                           client=dask_client, journal=t).tasks == 0
    # a cluster: the jobs the journal holds are not sent to any node
    c_j = tmp_path / "cluster"
    with dlbkit.Cluster(backend="dask", client=dask_client, journal=c_j) as c:
        assert [f.result(timeout=HANG_S) for f in [c.submit(square, i) for i in range(20)]] == [i * i for i in range(20)]
    with dlbkit.Cluster(backend="dask", client=dask_client, journal=c_j) as c:
        assert [f.result(timeout=HANG_S) for f in [c.submit(square, i) for i in range(25)]] == [i * i for i in range(25)]
    assert c.journaled == 20 and len(c.ps()) == 5
