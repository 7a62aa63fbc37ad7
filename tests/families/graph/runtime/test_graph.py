"""Real graph runs (``dlbkit.graph``) on the local backend: results along edges, failures, replay.

The MPI backend's graph run is in runtime/test_mpi.py's style at the end of this file (skipped
without mpi4py).
"""

import multiprocessing as mp
import operator
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, DlbkitError, TaskError

from support.profiles import examples

BALANCERS = ["pd", "heft", "round-robin"]


def _no_worker_left():
    return not [p for p in mp.active_children() if p.name.startswith("dlbkit-worker")]


def _diamond():
    return {"a": (operator.add, 1, 2), "b": (operator.mul, "a", 10), "c": (operator.sub, "a", 1),
            "d": (operator.add, "b", "c")}


@pytest.mark.parametrize("balancer", BALANCERS)
def test_a_diamond_gives_exact_results_and_one_interval_per_task(balancer):
    r = dlbkit.run_graph(_diamond(), workers=2, balancer=balancer)
    assert r.results == {"a": 3, "b": 30, "c": 2, "d": 32}
    t = r.trace
    assert t.family == "graph" and t.source == "local"
    assert sorted(t.first) == [0, 1, 2, 3] and set(t.count) == {1}
    start = dict(zip(t.first, t.t_start))
    end = dict(zip(t.first, t.t_end))
    for a, b in [(0, 1), (0, 2), (1, 3), (2, 3)]:  # a task starts after its inputs ended
        assert start[b] >= end[a]
    assert r.metrics["makespan"] > 0 and 0 < r.metrics["efficiency"] <= 1 + 1e-9
    assert _no_worker_left()


def _pair(a, b):
    return (a, b)


def test_a_dask_style_dict_takes_literals_lists_and_nested_calls():
    tasks = {("x", 0): (abs, -4),
             "s": (sum, [("x", 0), 5, ("x", 0)]),          # a list searched for keys
             "n": (_pair, "s", (operator.neg, ("x", 0))),   # a nested call, made on the worker
             "lit": (_pair, "not-a-key", [1, [2, "s"]])}    # strings that are not keys stay strings
    assert dlbkit.graph(tasks, workers=2) == {("x", 0): 4, "s": 13, "n": (13, -4), "lit": ("not-a-key", [1, [2, 13]])}


def test_a_task_naming_another_in_two_arguments_depends_on_it_once():
    """``(add, "a", "a")`` (or "a" and a nested call on "a") was refused as two edges a -> b (each
    argument was indexed alone); it is one dependency, its value passed twice."""
    from dlbkit.families.graph.runtime.tasks import parse_tasks

    tasks = {"a": (operator.add, 1, 1), "b": (operator.add, "a", "a"), "c": (operator.add, "b", (operator.neg, "b"))}
    g = parse_tasks(tasks)
    assert g.deps == [[], [0], [1]] and g.graph.n_edges == 2
    assert dlbkit.graph(tasks, workers=2) == {"a": 2, "b": 4, "c": 0}


def test_a_networkx_graph_calls_each_node_with_its_predecessors_results():
    g = nx.DiGraph()
    g.add_node("u", fn=lambda: 2, load=1.0)
    g.add_node("v", fn=lambda: 5, load=3.0)
    g.add_node("w", fn=operator.pow, load=2.0)
    g.add_edge("u", "w")
    g.add_edge("v", "w")
    for b in ["pd", "heft"]:
        r = dlbkit.run_graph(g, workers=2, balancer=b)
        assert r.results == {"u": 2, "v": 5, "w": 32}
    assert [t["load"] for t in r.trace.meta["dag"]["tasks"]] == [1.0, 3.0, 2.0]


def _combine(i, *xs):
    return (i, sum(x[0] for x in xs) % 1009, len(xs))


def _sequential(tasks):
    out = {}
    for k in sorted(tasks, key=lambda k: int(k[1:])):  # keys t0..tn-1, edges point up the numbering
        fn, i, *deps = tasks[k]
        out[k] = fn(i, *[out[d] for d in deps])
    return out


@st.composite
def _dags(draw):
    n = draw(st.integers(1, 14))
    tasks = {}
    for i in range(n):
        deps = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=3)) if i else []
        tasks[f"t{i}"] = (_combine, i, *[f"t{j}" for j in deps])
    return tasks


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tasks=_dags(), balancer=st.sampled_from(["pd", "heft", "random-map"]), workers=st.integers(1, 3))
def test_random_dags_give_the_sequential_results(tasks, balancer, workers):
    r = dlbkit.run_graph(tasks, workers=workers, balancer=balancer, seed=3)
    assert r.results == _sequential(tasks)
    assert sorted(r.trace.first) == list(range(len(tasks)))


def _fails(x):
    if x == 3:
        raise ValueError(f"bad value {x}")
    return x


def test_an_exception_names_the_task_and_carries_the_workers_traceback():
    tasks = {"a": (_fails, 1), "b": (_fails, 3), "c": (operator.add, "a", "b")}
    for b in ["pd", "heft"]:
        with pytest.raises(TaskError, match=r"task 'b' failed: ValueError: bad value 3") as info:
            dlbkit.graph(tasks, workers=2, balancer=b)
        err = info.value
        assert err.index == "b" and err.what == "task"  # docs/design.md: "TaskError's `what` names the unit"
        assert "in _fails" in err.remote_traceback
        assert isinstance(err.__cause__, ValueError)
        assert _no_worker_left()


@pytest.mark.parametrize("balancer", ["pd", "heft"])
def test_a_killed_workers_task_is_recomputed_and_each_result_kept_once(tmp_path, balancer):
    marker = tmp_path / "killed"
    runs = tmp_path / "runs"
    runs.mkdir()

    def work(i, *xs):
        (runs / f"{i}-{os.getpid()}").write_text("")
        if i == 5 and not marker.exists():
            marker.write_text("x")
            os.kill(os.getpid(), signal.SIGKILL)  # killed while computing task 5
        return i + sum(xs)

    tasks = {f"t{i}": (work, i, *([f"t{i - 1}"] if i % 3 else [])) for i in range(12)}
    r = dlbkit.run_graph(tasks, workers=3, balancer=balancer)
    expected = {}
    for i in range(12):
        expected[f"t{i}"] = i + (expected[f"t{i - 1}"] if i % 3 else 0)
    assert r.results == expected
    assert sorted(r.trace.first) == list(range(12))  # one interval per task: each result kept once
    faults = r.trace.meta["faults"]
    assert 5 in [i for _, i, _ in faults] and r.trace.meta["replans"] == 1
    dead = faults[0][0]
    assert dead not in [w for w, i in zip(r.trace.node, r.trace.first) if i == 5]
    assert len([f for f in os.listdir(runs) if f.startswith("5-")]) == 2  # computed again, once
    assert _no_worker_left()


def test_every_worker_dying_is_an_error():
    def die():
        os._exit(3)

    with pytest.raises(DlbkitError, match="every worker died"):
        dlbkit.graph({"a": (die,)}, workers=1)


def _one_line(e):
    return "\n" not in str(e)


def test_bad_input_is_one_config_error_line():
    with pytest.raises(ConfigError, match=r"tasks must be a directed acyclic graph.*a -> b -> a|b -> a -> b") as i1:
        dlbkit.graph({"a": (abs, "b"), "b": (abs, "a")}, workers=1)
    g = nx.DiGraph()
    g.add_node("a", fn=abs)
    g.add_edge("a", "ghost")  # a dependency on a task that has no function
    with pytest.raises(ConfigError, match=r"tasks.nodes\['ghost'\]\['fn'\] must be a callable") as i2:
        dlbkit.graph(g, workers=1)
    with pytest.raises(ConfigError, match=r"tasks\['a'\] must be a tuple \(callable, \*arguments\)") as i3:
        dlbkit.graph({"a": (3, 4)}, workers=1)
    with pytest.raises(ConfigError, match="does not depend on itself") as i4:
        dlbkit.graph({"a": (abs, "a")}, workers=1)
    with pytest.raises(ConfigError, match="tasks must be a dict") as i5:
        dlbkit.graph([abs], workers=1)
    with pytest.raises(ConfigError, match="mapping balancer|kind") as i6:
        dlbkit.graph(_diamond(), balancer="gss", workers=1)
    with pytest.raises(ConfigError, match=r"load'\] must be a finite number >= 0") as i7:
        g2 = nx.DiGraph()
        g2.add_node("a", fn=abs, load=-1)
        dlbkit.graph(g2, workers=1)
    assert all(_one_line(i.value) for i in (i1, i2, i3, i4, i5, i6, i7))


def test_emulated_speeds_reach_the_plan():
    tasks = {f"t{i}": (abs, -i) for i in range(12)}
    r = dlbkit.run_graph(tasks, emulate=[1.0, 3.0], balancer="heft")
    a = r.trace.meta["assignment"]
    assert a.count(1) > a.count(0)  # the fast worker gets more of the equal tasks
    assert r.trace.speeds == [1.0, 3.0]


@pytest.mark.parametrize("balancer", ["heft", "pd"])
def test_record_and_replay_into_the_graph_simulator(tmp_path, balancer):
    path = tmp_path / "run.json"
    r = dlbkit.run_graph(_diamond(), workers=2, balancer=balancer, record=path)
    rp = dlbkit.replay(path)
    assert rp.trace.family == "graph" and rp.trace.source == "replay"
    assert rp.balancer.name == balancer
    assert sorted(set(rp.trace.first)) == [0, 1, 2, 3]  # a preempted task (dynamic engine) has several rows
    assert rp.makespan > 0 and rp.recorded.makespan == pytest.approx(r.makespan)
    other = dlbkit.replay(path, "round-robin")  # the recorded loads under another mapper
    assert other.trace.family == "graph" and other.balancer.name == "round-robin"


def test_a_graph_recording_replayed_under_another_kind_is_one_line(tmp_path, capsys):
    """A chunking balancer for a graph recording is bad input (it was an AttributeError traceback)."""
    from dlbkit.face.cli import main

    path = tmp_path / "run.json"
    dlbkit.run_graph(_diamond(), workers=2, balancer="heft", record=path)
    with pytest.raises(ConfigError, match=r"^balancer must be a mapping balancer \(dlbkit balancers --kind mapping\) "
                                          r"or an online mapping balancer .*: annealing, .*, pd; 'fac2' is a chunking "
                                          r"balancer \(dlbkit balancers --kind chunking\): it cuts a loop into chunks: "
                                          r"dlbkit.map, dlbkit.Loop, a divisible workload; got 'fac2'$"):
        dlbkit.replay(path, "fac2")
    assert main(["replay", str(path), "-b", "fac2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dlbkit: error: --balancer must be a mapping balancer")
    assert main(["replay", str(path), "-b", "round-robin", "-p", "x=1"]) == 2
    assert "--param must be a parameter of a --balancer balancer: round-robin: (none); got 'x'" in \
        capsys.readouterr().err


# --- MPI ------------------------------------------------------------------------------------------
MPI_JOB = """
import json, operator, dlbkit
from mpi4py import MPI

def inc(x):
    return x + 1

tasks = {"a": (inc, 1), "b": (operator.mul, "a", 10), "c": (inc, "a"), "d": (operator.add, "b", "c")}
out = {}
for b in ("heft", "pd"):
    r = dlbkit.run_graph(tasks, balancer=b, backend="mpi")
    out[b] = [r.results, r.trace.source, sorted(r.trace.first)]
with open(f"report-{MPI.COMM_WORLD.Get_rank()}.json", "w") as f:
    json.dump(out, f)
"""


def test_the_mpi_backend_runs_a_graph_on_every_rank(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py")
    here = Path(sys.executable).parent / "mpiexec"
    mpiexec = str(here) if here.exists() else None
    if mpiexec is None:
        pytest.skip("no mpiexec next to python")
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(MPI_JOB))
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    p = subprocess.run([mpiexec, "-n", "3", sys.executable, str(script)], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    import json
    reports = [json.loads((tmp_path / f"report-{k}.json").read_text()) for k in range(3)]
    for rep in reports:
        for b in ("heft", "pd"):
            assert rep[b] == [{"a": 2, "b": 20, "c": 3, "d": 23}, "mpi", [0, 1, 2, 3]]


MPI_RANDOM_DAGS = """
import json, random, dlbkit
from mpi4py import MPI
from dlbkit.balancers.registry import REGISTRY

def combine(i, *xs):
    return (i, sum(x[0] for x in xs) % 1009, len(xs))

rng = random.Random(20261124)  # the same draws on every rank
out = []
for b in sorted(n for n, c in REGISTRY.items() if c.kind in ("mapping", "graph-online")):
    n = rng.randrange(1, 13)
    tasks = {f"t{i}": (combine, i, *[f"t{j}" for j in rng.sample(range(i), min(i, rng.randrange(4)))])
             for i in range(n)}
    seq = {}
    for i in range(n):
        fn, x, *deps = tasks[f"t{i}"]
        seq[f"t{i}"] = fn(x, *[seq[d] for d in deps])
    params = {"annealing": {"moves": 30, "patience": 2}, "tabu": {"perturbations": 60}}.get(b)
    r = dlbkit.run_graph(tasks, balancer=b, params=params, backend="mpi", seed=rng.randrange(1000))
    out.append([b, r.results == seq, sorted(r.trace.first) == list(range(n))])
with open(f"report-{MPI.COMM_WORLD.Get_rank()}.json", "w") as f:
    json.dump(out, f)
"""


# full tier: the MPI matrix: every mapper on ranks (test_the_mpi_backend_runs_a_graph_on_every_rank is the fast
# tier's)
@pytest.mark.full
def test_the_mpi_backend_runs_random_dags_under_every_mapper(tmp_path):
    """One mpiexec job: every mapping and online balancer on a random DAG gives the sequential results
    on every rank, each task computed once."""
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py")
    here = Path(sys.executable).parent / "mpiexec"
    if not here.exists():
        pytest.skip("no mpiexec next to python")
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(MPI_RANDOM_DAGS))
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    p = subprocess.run([str(here), "-n", "3", sys.executable, str(script)], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    import json

    from dlbkit.balancers.registry import REGISTRY
    names = sorted(n for n, c in REGISTRY.items() if c.kind in ("mapping", "graph-online"))
    for k in range(3):
        assert json.loads((tmp_path / f"report-{k}.json").read_text()) == [[b, True, True] for b in names]
