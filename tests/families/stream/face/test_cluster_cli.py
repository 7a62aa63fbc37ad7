"""``dlbkit cluster`` (a stream of real jobs on a Cluster), its recording replayed by ``dlbkit replay``,
and a client that is interrupted or killed: no node outlives it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from dlbkit.face.replay import replay

from support import HANG_S, REPO, wait_until

WORK = """
import time

def job(i):
    end = time.perf_counter() + 0.002 * (1 + i % 3)
    while time.perf_counter() < end:
        pass
    return i
"""


def _cli(tmp_path, *args, timeout=120):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "dlbkit", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout, env={**env, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})


def test_cluster_command_records_and_replay_replays_it(tmp_path):
    (tmp_path / "work.py").write_text(WORK)
    done = _cli(tmp_path, "cluster", "work:job", "--jobs", "120", "--rate", "200", "--workers", "3",
                "--emulate", "1,1,0.5", "--seed", "2", "--record", "rec.json", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[0])
    assert out["jobs"] == 120 and out["failed"] == 0 and sum(out["jobs_per_node"]) == 120
    assert 0.002 <= out["response_p50"] <= out["response_p95"] <= out["response_p99"]
    assert out["info_messages"] > 0
    rep = _cli(tmp_path, "replay", "rec.json", "--balancer", "random-place", "--info", "exact", "--json")
    assert rep.returncode == 0, rep.stderr
    rows = json.loads(rep.stdout)["rows"]
    assert [(r["balancer"], r["info"]) for r in rows] == [("nezha", "gossip"), ("random-place", "gossip"),
                                                          ("nezha", "exact")]
    # the replay runs the recorded jobs: 120 of them, each at least its measured cost
    r = replay(tmp_path / "rec.json")
    assert len(r.trace.series["job_time"]) == 120
    assert r.metrics["response_mean"] >= 0.002
    # two clocks of one response (docs/cluster.md): the cluster's own mean (submit to this client's
    # callback) holds each job's trip back on top of the recorded one (submit to its end on its
    # node), which is what the replay calls real, to the last bit
    real = json.loads(rep.stdout)["real_response_mean"]
    assert out["recorded_response_mean"] == real
    trust = json.loads(rep.stdout)["trust"]  # the replay of the recorded run against it, as its first line says
    assert trust["measured"] == real and trust["predicted"] == rows[0]["response_mean"]
    assert trust["ratio"] == pytest.approx(rows[0]["response_mean"] / real, rel=1e-12)
    assert out["response_mean"] >= real


@pytest.mark.parametrize("args, field", [(["--jobs", "0"], "--jobs"), (["--jobs", "3", "--rate", "-1"], "--rate"),
                                         (["--jobs", "3", "--rate", "inf"], "--rate must be a finite number of jobs "
                                          "per second > 0; got inf"),
                                         # accepted, it slept silently for years
                                         (["--jobs", "3", "--rate", "1e-9"], "--rate must be at least --jobs / 86,400 "
                                          "s = 3.47e-05 jobs/s: 3 arrivals at this rate would span about 3e+09 s, "
                                          "and dlbkit cluster spans at most a day; got 1e-09"),
                                         (["--jobs", "3", "-b", "gss"], "--balancer must be a placement balancer"),
                                         (["--jobs", "3", "-b", "nezhaa"], "--balancer must be a placement balancer "
                                          "(dlbkit balancers --kind placement): batch-sampling, hybrid-batch,"),
                                         (["--jobs", "3", "-p", "dd=2"], "--param must be a parameter of nezha: d,"),
                                         (["--jobs", "3", "-p", "d"], "KEY=VALUE with a parameter name as KEY "
                                                                      "(e.g. d=2)"),
                                         (["--jobs", "3", "--seed", "-1"], "--seed must be an integer >= 0"),
                                         (["--jobs", "3", "--emulate", "zero.toml"],
                                          "--emulate zero.toml: nodes[0].speed must be a number > 0; got 0"),
                                         (["--jobs", "3", "--info", "periodic"], "dlbkit: error: --info must be"),
                                         (["--jobs", "3", "--info", "gosip"], "dlbkit: error: --info must be an "
                                          "information model: exact, periodic, neighbour, gossip, scatter-old, "),
                                         (["--jobs", "3", "--info-param", "perid=0.1"], "dlbkit: error: --info-param "
                                          "perid must be a parameter of the 'gossip' model"),
                                         (["--jobs", "3", "--info-param", "period=-1"], "dlbkit: error: --info-param "
                                          "(parameter 'period' of gossip) must be a number in the range (0, inf)"),
                                         (["--jobs", "3", "--workers", "0"], "--workers must be an integer >= 1")])
def test_cluster_command_bad_input_is_one_line(tmp_path, args, field):
    (tmp_path / "work.py").write_text(WORK)
    (tmp_path / "zero.toml").write_text('[[nodes]]\nname = "a"\nspeed = 0\n')
    done = _cli(tmp_path, "cluster", "work:job", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("dlbkit: error: ") and field in done.stderr


CLIENT = """
import json, sys, time
import dlbkit

def nap(x):
    time.sleep(30)
    return x

if __name__ == "__main__":
    with dlbkit.Cluster(3, seed=0) as c:
        fs = [c.submit(nap, i) for i in range(9)]
        print(json.dumps(c.pids()), flush=True)
        time.sleep(60)
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_no_node_outlives_an_interrupted_or_killed_client(tmp_path, sig):
    (tmp_path / "client.py").write_text(textwrap.dedent(CLIENT))
    p = subprocess.Popen([sys.executable, str(tmp_path / "client.py")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        line = p.stdout.readline()
        if not line:
            p.wait(timeout=HANG_S)
            pytest.fail(f"the client ended before printing its nodes' pids: {p.stderr.read()}")
        pids = json.loads(line)
        assert len(pids) == 3 and not any(_gone(q) for q in pids)
        p.send_signal(sig)
        # the ceilings are for a hang only: a loaded machine takes its time to stop the nodes
        p.wait(timeout=HANG_S)
        wait_until(lambda: all(_gone(q) for q in pids), "every node of the client ended")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in p.stderr.read()


@pytest.mark.full  # about 10 s: two balancers, a cluster each
def test_the_example_runs(tmp_path):
    example = REPO / "examples" / "job_stream.py"
    done = subprocess.run([sys.executable, str(example), "--seconds", "1", "--balancers", "nezha,random-place"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("4 nodes of speeds [1.0, 1.0, 0.5, 0.5]")
    rows = [ln.split() for ln in lines[2:]]
    assert [r[0] for r in rows] == ["nezha", "random-place"]
    assert all(int(r[1]) > 0 and float(r[2]) <= float(r[3]) <= float(r[4]) for r in rows)  # p50 <= p90 <= p99


def test_more_nodes_than_cpus_is_one_warning_line(tmp_path):
    """The oversubscription warning, as ``dlbkit run`` says it: one line ``dlbkit: warning: …``, not
    Python's two-line warning naming cli.py."""
    from dlbkit.runtime.backends.local import default_workers
    (tmp_path / "work.py").write_text(WORK)
    n = default_workers() + 1
    done = _cli(tmp_path, "cluster", "work:job", "--jobs", "6", "--workers", str(n))
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dlbkit: warning: {n} workers on "), done.stderr


def test_a_placement_balancer_of_ones_own_in_the_jobs_module_is_found(tmp_path):
    # as `dlbkit run` does, the job's module is imported before --balancer is checked, so the
    # balancer it registers can be named; before, it was refused as unknown
    (tmp_path / "work.py").write_text(WORK + textwrap.dedent('''
        from dlbkit import PlacementBalancer, Taxonomy, register

        @register
        class Own(PlacementBalancer):
            """Keep every job where it arrives."""
            name = "own-local-test"
            source = "a test"
            taxonomy = Taxonomy("arrival", "distributed", "none", "one task", "origin")
            reads_loads = False

            def place(self, view):
                return view.node
        '''))
    done = _cli(tmp_path, "cluster", "work:job", "--jobs", "20", "--workers", "2", "-b", "own-local-test", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[0])
    assert out["jobs"] == 20 and out["failed"] == 0 and out["balancer"] == "own-local-test"
