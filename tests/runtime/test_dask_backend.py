"""The Dask backend (``backend="dask"``): dlbkit's balancers deciding, a Dask cluster's workers computing.

Most tests share one cluster of two workers as threads of this process (cheap to start; over TCP, so
that the CLI can reach it from another process); the killed-worker tests start a cluster of worker
processes of their own, since only a process can be killed.
"""

from __future__ import annotations

import functools
import operator
import os
import pickle
import signal
import sys
import threading
import time

import pytest

import dlbkit
from dlbkit.errors import ConfigError, TaskError

distributed = pytest.importorskip("distributed")

from dlbkit.runtime.backends import dask as dask_backend  # noqa: E402
from support.sweeps import dask_client  # noqa: E402,F401 - the module's cluster (a fixture)
from support.sweeps import dlbkit_cmd  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask_backend")


def slow_square(x):
    time.sleep(0.002)
    return x * x


def fails_at_7(x):
    if x == 7:
        raise ValueError("seven")
    return x


def lambda_result(x):
    return lambda: x  # a result that cannot be pickled


# --- map, run_map, Loop -----------------------------------------------------------------------------
@pytest.mark.parametrize("balancer", ["awf-c", "fac2", "ss", "static"])
def test_map_gives_every_result_once_in_input_order(dask_client, balancer):
    items = list(range(120))
    r = dlbkit.run_map(slow_square, items, backend="dask", client=dask_client, balancer=balancer)
    assert r.results == [x * x for x in items]
    tr = r.trace
    assert tr.source == "dask" and tr.meta["backend"] == "dask" and tr.n_nodes == 2
    # every item in exactly one chunk: the chunks tile 0..119
    covered = sorted((f, c) for f, c in zip(tr.first, tr.count))
    assert sum(c for _, c in covered) == 120
    assert [f for f, _ in covered] == [0] + list(__import__("itertools").accumulate(c for _, c in covered))[:-1]
    assert set(tr.node) == {0, 1}


def test_map_emulation_stretches_the_slow_workers_chunks(dask_client):
    r = dlbkit.run_map(slow_square, range(80), backend="dask", client=dask_client, emulate=[1.0, 0.25])
    tr = r.trace
    busy = tr.meta["item_cost"]
    for w, speed in ((0, 1.0), (1, 0.25)):
        rows = [k for k in range(tr.n_intervals) if tr.node[k] == w]
        assert rows, f"worker {w} got no chunk"
        for k in rows:
            took = tr.t_end[k] - tr.t_start[k]
            work = sum(busy[tr.first[k]:tr.first[k] + tr.count[k]])
            # Emulation.stretch sleeps until the chunk has taken its measured time / speed; a loaded
            # machine only adds to it (the workers are threads here), so the bound is one-sided
            assert took >= work / speed - 1e-6
    assert tr.speeds == [1.0, 0.25]


def test_map_error_names_the_item(dask_client):
    with pytest.raises(TaskError) as e:
        dlbkit.map(fails_at_7, range(20), backend="dask", client=dask_client)
    assert e.value.index == 7 and "ValueError: seven" in str(e.value)


def test_graph_error_names_the_task(dask_client):
    g = {"a": (abs, -7), "b": (fails_at_7, "a"), "c": (operator.neg, "b")}
    with pytest.raises(TaskError) as e:
        dlbkit.graph(g, backend="dask", client=dask_client)
    assert e.value.index == "b" and "ValueError: seven" in str(e.value)


def test_map_and_graph_keep_what_finished_before_an_error_and_return_exceptions(dask_client):
    with pytest.raises(TaskError) as e:
        dlbkit.map(fails_at_7, range(20), backend="dask", client=dask_client, balancer="ss")
    kept = e.value.results
    assert 7 not in kept and all(v == i for i, v in kept.items()) and e.value.trace.meta["partial"]["done"] == len(kept)
    r = dlbkit.map(fails_at_7, range(20), backend="dask", client=dask_client, return_exceptions=True)
    assert isinstance(r[7], ValueError) and str(r[7]) == "seven" and [v for v in r if v != r[7]] == [
        i for i in range(20) if i != 7]
    g = {"a": (abs, -7), "b": (fails_at_7, "a"), "c": (operator.neg, "b"), "d": (operator.neg, "a")}
    got = dlbkit.graph(g, backend="dask", client=dask_client, return_exceptions=True)
    assert got["a"] == 7 and got["d"] == -7 and isinstance(got["b"], ValueError) and got["c"] is got["b"]
    with pytest.raises(TaskError) as e:
        dlbkit.graph(g, backend="dask", client=dask_client, balancer="heft")
    assert e.value.results.get("a") == 7 and "b" not in e.value.results and "c" not in e.value.results


def test_map_with_a_journal_on_dask_resumes_from_what_it_kept(dask_client, tmp_path):
    j = tmp_path / "j"
    first = dlbkit.run_map(slow_square, range(80), backend="dask", client=dask_client, journal=j)
    assert first.results == [x * x for x in range(80)] and first.trace.meta["journal"]["computed"] == 80
    with open(j, "r+b") as f:  # torn as a killed client leaves it: about half the records kept
        f.truncate(j.stat().st_size // 2)
    again = dlbkit.run_map(slow_square, range(80), backend="dask", client=dask_client, journal=j)
    meta = again.trace.meta["journal"]
    assert again.results == first.results and 0 < meta["reused"] < 80 and meta["computed"] == 80 - meta["reused"]
    assert sum(again.trace.count) == meta["computed"]
    g = {"a": (abs, -7), "b": (operator.neg, "a"), "c": (operator.add, "a", "b")}
    assert dlbkit.graph(g, backend="dask", client=dask_client, journal=tmp_path / "g") == {"a": 7, "b": -7, "c": 0}
    r = dlbkit.run_graph(g, backend="dask", client=dask_client, journal=tmp_path / "g")
    assert r.results == {"a": 7, "b": -7, "c": 0} and r.trace.meta["journal"]["reused"] == 3


def test_map_unpicklable_result_is_named(dask_client):
    with pytest.raises(TaskError) as e:
        dlbkit.map(lambda_result, range(5), backend="dask", client=dask_client, balancer="ss")
    assert "cannot be pickled" in str(e.value) and "lambda_result" in str(e.value)


def test_map_record_replays(dask_client, tmp_path):
    path = tmp_path / "run.json"
    r = dlbkit.run_map(slow_square, range(60), backend="dask", client=dask_client, record=path)
    sim = dlbkit.replay(path, balancer="fac2")
    assert sim.trace.source == "replay" and sim.trace.total_work == pytest.approx(r.trace.total_work, rel=1e-9)


def test_loop_steps_on_the_same_workers(dask_client):
    with dlbkit.Loop(slow_square, backend="dask", client=dask_client, balancer="awf-c") as loop:
        a = loop.map(range(30))
        b = loop.run(range(30, 70))
    assert a == [x * x for x in range(30)] and b.results == [x * x for x in range(30, 70)]
    assert b.trace.source == "dask" and b.trace.meta["step_start"] > 0
    assert loop.trace.n_intervals == loop.steps[0].trace.n_intervals + b.trace.n_intervals
    assert dask_client.status == "running"  # the cluster is the user's: it runs on


def test_workers_chooses_the_first_workers(dask_client):
    r = dlbkit.run_map(slow_square, range(10), backend="dask", client=dask_client, workers=1)
    assert set(r.trace.node) == {0} and r.trace.n_nodes == 1


def test_the_dashboard_names_are_the_chunks(dask_client):
    # what the dashboard's task stream shows: each task's key, whose first part is the chunk's name
    with distributed.get_task_stream(client=dask_client) as ts:
        r = dlbkit.run_map(slow_square, range(40), backend="dask", client=dask_client, balancer="fac2")
    names = {distributed.utils.key_split(d["key"]) for d in ts.data}
    tr = r.trace
    want = {f"dlbkit slow_square items {f}–{f + c - 1}" if c > 1 else f"dlbkit slow_square item {f}"
            for f, c in zip(tr.first, tr.count)}
    assert want <= names


# --- graph and Dask collections -------------------------------------------------------------------
@pytest.mark.parametrize("balancer", ["pd", "heft", "round-robin"])
def test_graph_on_dask(dask_client, balancer):
    g = {"a": (abs, -2), "b": (operator.add, "a", 10), "c": (operator.mul, "a", "b"), "d": (sum, ["a", "b", "c"])}
    r = dlbkit.run_graph(g, backend="dask", client=dask_client, balancer=balancer)
    assert r.results == {"a": 2, "b": 12, "c": 24, "d": 38}
    assert r.trace.source == "dask" and sorted(r.trace.first) == [0, 1, 2, 3]


def test_no_live_worker_is_taken_for_dead_while_the_clients_cached_identity_is_refreshed(dask_client):
    """The Client refreshes its cached identity of the scheduler every 2 s with no per-worker part; the
    backend read that cache for the workers and once reported every worker of a 10 000-task graph dead.
    Here a thread refreshes it so all the time, and the run must see its workers alive throughout."""
    stop = threading.Event()

    def refresh():
        while not stop.is_set():
            dask_client.scheduler_info(n_workers=0)

    t = threading.Thread(target=refresh, daemon=True)
    t.start()
    try:
        tasks = {f"t{i}": (operator.add, f"t{i - 1}", 1) if i % 10 else (abs, 0) for i in range(200)}
        r = dlbkit.run_graph(tasks, backend="dask", client=dask_client)
    finally:
        stop.set()
        t.join()
    assert r.results == {f"t{i}": i % 10 for i in range(200)} and r.trace.meta["faults"] == []


class Canceller(threading.Thread):
    """Cancels, through the run's own Client as Dask itself would (a lost scheduler connection, lost
    data), the tasks whose key's name is in *names*, each the first *times* it appears."""

    def __init__(self, client, names, times=1):
        super().__init__(daemon=True)
        self.client, self.names, self.times = client, set(names), times
        self.done: dict = {}  # name -> times cancelled
        self.seen: set = set()
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            for key in list(self.client.futures):
                name = key[0] if isinstance(key, tuple) else key
                if name in self.names and key not in self.seen and self.done.get(name, 0) < self.times:
                    self.seen.add(key)
                    self.done[name] = self.done.get(name, 0) + 1
                    self.client.cancel([distributed.Future(key, self.client)])
            time.sleep(0.001)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.halt.set()
        self.join()


def slow_abs(x):
    time.sleep(0.05)  # long enough for the canceller to find the task pending
    return abs(x)


def test_tasks_dask_cancels_are_submitted_again_and_nothing_is_lost_or_done_twice(dask_client):
    g = {f"t{i}": (slow_abs, -i) for i in range(12)}
    names = [f"dlbkit 't{i}'" for i in (1, 4, 7)]
    with Canceller(dask_client, names) as c:
        r = dlbkit.run_graph(g, backend="dask", client=dask_client, balancer="round-robin")
    assert c.done == {n: 1 for n in names}  # each of the three was cancelled once, while pending
    assert r.results == {f"t{i}": i for i in range(12)}
    assert sorted(r.trace.first) == list(range(12))  # every task's result taken once


def test_a_task_dask_keeps_cancelling_ends_the_run_with_the_reason(dask_client):
    g = {f"t{i}": (slow_abs, -i) for i in range(4)}
    with Canceller(dask_client, ["dlbkit 't2'"], times=dask_backend.RESUBMITS + 1) as c:
        with pytest.raises(dlbkit.DlbkitError, match=r"cancelled the task .*'t2'.* 4 times, .*reason"):
            dlbkit.run_graph(g, backend="dask", client=dask_client)
    assert c.done == {"dlbkit 't2'": dask_backend.RESUBMITS + 1}


def test_dask_collection_on_the_dask_backend_equals_dasks_own(dask_client):
    da = pytest.importorskip("dask.array")
    import dask
    import dask.bag
    # a graph of about 200 tasks (a reshape, a transpose, a tree reduction): one Dask task each here
    x = da.arange(36, chunks=6).reshape(6, 6)
    y = (x + x.T).sum()
    assert dlbkit.graph(y, backend="dask", client=dask_client) == y.compute(scheduler="sync") == 2 * sum(range(36))
    s = dlbkit.dask.scheduler(backend="dask", client=dask_client, balancer="heft")
    b = dask.bag.from_sequence(range(20), npartitions=4).map(operator.neg).sum()
    assert dask.compute(y, b, scheduler=s) == dask.compute(y, b, scheduler="sync")
    assert s.last.trace.source == "dask"


# --- bad input ------------------------------------------------------------------------------------
def test_a_closed_client_is_refused():
    with distributed.Client(processes=False, n_workers=1, dashboard_address=None, set_as_default=False) as c:
        pass
    with pytest.raises(ConfigError, match=r"client.*a running distributed.Client \(this one is 'closed'\)"):
        dlbkit.map(abs, [1, -2], backend="dask", client=c)


def test_an_address_nobody_listens_on_is_refused_in_bounded_time(monkeypatch):
    monkeypatch.setattr(dask_backend, "CONNECT_S", 1.0)
    t = time.monotonic()
    with pytest.raises(ConfigError, match=r"client must be the address of a running Dask scheduler, reached within 1 s: .*got 'tcp://127.0.0.1:9'"):
        dlbkit.map(abs, [1, -2], backend="dask", client="tcp://127.0.0.1:9")
    assert time.monotonic() - t < 15  # Dask's own connect retries end at the timeout; never a hang


def test_no_client_and_none_running_is_refused():
    with pytest.raises(ConfigError, match="none was given and no Client is running"):
        dlbkit.map(abs, [1], backend="dask")


def test_a_client_without_the_dask_backend_is_refused_by_every_family(dask_client):
    calls = [lambda: dlbkit.map(abs, [1], client=dask_client),
             lambda: dlbkit.graph({"a": (abs, -1)}, client=dask_client),
             lambda: dlbkit.tree(lambda t: ([], 1), 0, client=dask_client),
             lambda: dlbkit.spmd(lambda u: u[1:-1], [0.0, 1.0, 2.0], iterations=1, client=dask_client),
             lambda: dlbkit.Cluster(2, client=dask_client)]
    for call in calls:
        with pytest.raises(ConfigError, match=r"client.*None unless backend='dask'"):
            call()
    with pytest.raises(ConfigError, match=r"backend must be one of 'local', 'mpi', 'dask'; got 'ray'"):
        dlbkit.Cluster(2, backend="ray")


def test_more_workers_than_the_cluster_has(dask_client, monkeypatch):
    monkeypatch.setattr(dask_backend, "CONNECT_S", 0.5)
    with pytest.raises(ConfigError, match=r"workers.*at most the Dask cluster's workers \(2 after waiting"):
        dlbkit.map(abs, [1], backend="dask", client=dask_client, workers=3)


def test_without_distributed_backend_dask_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    with pytest.raises(ConfigError, match=r"pip install 'dlbkit\[dask\]'"):
        dlbkit.map(abs, [1], backend="dask", client="tcp://127.0.0.1:9")


def test_cli_runs_on_a_dask_scheduler_and_refuses_a_dead_one(dask_client, tmp_path):
    # the function must be importable on the Dask workers (threads of this test process here), as any
    # Dask task's is: a standard library one
    out = tmp_path / "r.json"
    p = dlbkit_cmd("run", "operator:neg", "-N", "50", "--backend", "dask", "--client", dask_client.scheduler.address,
                   "--results", str(out), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    import json
    assert json.loads(out.read_text()) == [-x for x in range(50)]
    p = dlbkit_cmd("run", "operator:neg", "-N", "5", "--backend", "dask", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "--client" in p.stderr


# --- a worker killed mid-run ------------------------------------------------------------------------
def kill_when(x, at, pidfile):
    """*x* + 1000 after 10 ms; at item *at*, first SIGKILL the Dask worker process named in *pidfile*
    (maybe this one: whichever worker computes item *at*, one worker dies mid-run, once)."""
    if x == at:
        try:
            os.kill(int(open(pidfile).read()), signal.SIGKILL)
        except ProcessLookupError:  # the item recomputed after its worker died: dead already
            pass
    time.sleep(0.01)
    return x + 1000


def sleepy_task(*inputs):
    time.sleep(0.01)
    return 1 + sum(inputs)


def kill_then_sleepy(pidfile, *inputs):
    kill_when(0, 0, pidfile)
    return sleepy_task(*inputs)


@pytest.fixture
def process_cluster(tmp_path):
    """A cluster of two worker processes, and a file naming the second one's pid."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            distributed.Client(lc, set_as_default=False) as c:
        victim = list(c.nthreads())[1]
        pidfile = tmp_path / "victim.pid"
        pidfile.write_text(str(c.run(os.getpid, workers=[victim])[victim]))
        yield c, str(pidfile)


def test_a_killed_worker_loses_nothing_map(process_cluster):
    client, pidfile = process_cluster
    r = dlbkit.run_map(functools.partial(kill_when, at=150, pidfile=pidfile), range(300), backend="dask",
                       client=client, balancer="ss")
    assert r.results == [x + 1000 for x in range(300)]  # each computed and kept once, in order
    tr = r.trace
    faults = tr.meta["faults"]
    assert len(faults) == 1 and faults[0][0] == 1  # (worker, first, count, time): the second worker
    t_dead = faults[0][3]
    assert all(tr.t_start[k] < t_dead for k in range(tr.n_intervals) if tr.node[k] == 1)
    assert sum(tr.count) == 300 and sorted(tr.first) == list(range(300))


def test_a_killed_worker_loses_nothing_graph(process_cluster):
    client, pidfile = process_cluster
    # 30 independent chains of 8 tasks: each value is its depth + 1; the worker dies at chain 15's 5th task
    g = {}
    for c in range(30):
        g[(c, 0)] = (sleepy_task,)
        for d in range(1, 8):
            g[(c, d)] = (sleepy_task, (c, d - 1))
    g[(15, 4)] = (kill_then_sleepy, pidfile, (15, 3))
    r = dlbkit.run_graph(g, backend="dask", client=client, balancer="pd")
    assert r.results == {(c, d): d + 1 for c in range(30) for d in range(8)}
    assert r.trace.meta["faults"] and {f[0] for f in r.trace.meta["faults"]} == {1}
    assert r.trace.meta["replans"] == 1
    assert sorted(r.trace.first) == list(range(240))  # one interval per task: a result kept once


def test_pickled_reply_is_what_the_pipes_carry():
    out = dask_backend._answer_task(lambda send, msg, w, origin, k: send((msg, w, k)), "m", 3, 0.0, ("k",))
    assert [pickle.loads(b) for b in out] == [("m", 3, "k")]
