"""Nothing finished is lost when the user's code raises (local backend; Dask: runtime/test_dask_backend.py,
MPI: runtime/test_mpi.py).

``dlbkit.map`` and ``dlbkit.graph`` raise a TaskError that keeps every result already in
(``.results``) and the part's trace, which ``record=`` writes (and replay refuses: it needs every
unit's cost); with ``return_exceptions=True`` a failed item's (or task's) exception is its result and
every other result is computed, as ``asyncio.gather(return_exceptions=True)`` gives them, and a task
that needs a failed one gets its exception without running, as Dask gives it.
"""

from __future__ import annotations

import json
import operator
import pickle
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError, TaskError
from dlbkit.runtime.record import load_trace


class Bad(ValueError):
    pass


def _square_unless(x, failing):
    if x in failing:
        raise Bad(f"bad item {x}")
    return x * x


class SquareUnless:
    """A picklable function failing on the items of *failing* (the spawn start method pickles it)."""

    def __init__(self, failing):
        self.failing = frozenset(failing)

    def __call__(self, x):
        return _square_unless(x, self.failing)


def _covered(trace) -> list[int]:
    return sorted(i for f, c in zip(trace.first, trace.count) for i in range(f, f + c))


# --- map --------------------------------------------------------------------------------------------
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(0, 60), data=st.data(), balancer=st.sampled_from(["ss", "gss", "awf-c", "static"]))
def test_map_returning_exceptions_gives_each_failed_items_exception_in_place_and_every_other_result(n, data, balancer):
    failing = data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n // 3 + 1) if n else st.just(set()))
    r = dlbkit.run_map(SquareUnless(failing), range(n), balancer=balancer, workers=2, return_exceptions=True)
    assert len(r.results) == n
    for i, v in enumerate(r.results):
        if i in failing:
            assert type(v) is Bad and str(v) == f"bad item {i}"
            assert "Traceback" in str(v.__cause__)  # the worker's traceback, as concurrent.futures gives it
        else:
            assert v == i * i
    assert _covered(r.trace) == list(range(n))  # every item once, the failed ones too
    assert r.trace.meta.get("failed", []) == sorted(failing)


def test_a_map_that_fails_keeps_every_result_computed_before_it():
    """One worker, one item per chunk: the items before the failing one are exactly the ones kept."""
    with pytest.raises(TaskError, match="item 30 failed: Bad: bad item 30") as got:
        dlbkit.map(SquareUnless({30}), range(100), balancer="ss", workers=1)
    e = got.value
    assert e.index == 30
    assert e.results == {i: i * i for i in range(30)}
    part = e.trace.meta["partial"]
    assert part == {"failed": "item 30", "done": 30, "of": 100, "unit": "items"}
    assert _covered(e.trace) == list(range(30))


def test_a_map_that_fails_on_two_workers_keeps_only_true_results():
    with pytest.raises(TaskError) as got:
        dlbkit.map(SquareUnless({150}), range(200), balancer="gss", workers=2)
    e = got.value
    assert 150 not in e.results and e.results
    assert all(v == i * i for i, v in e.results.items())
    assert sorted(e.results) == _covered(e.trace)  # what the trace says ran is what was kept
    assert e.trace.meta["partial"]["done"] == len(e.results)


def test_the_task_error_keeps_its_results_when_pickled():
    with pytest.raises(TaskError) as got:
        dlbkit.map(SquareUnless({5}), range(10), balancer="ss", workers=1)
    e = pickle.loads(pickle.dumps(got.value))
    assert e.results == {i: i * i for i in range(5)} and e.trace.meta["partial"]["done"] == 5


def lambda_at(x):
    return (lambda: x) if x == 5 else x


def test_a_result_that_cannot_be_pickled_is_its_items_exception_when_returning_exceptions():
    r = dlbkit.map(lambda_at, range(12), balancer="static", workers=2, return_exceptions=True)
    assert isinstance(r[5], pickle.PicklingError) and "the result of lambda_at cannot be pickled" in str(r[5])
    assert [v for i, v in enumerate(r) if i != 5] == [i for i in range(12) if i != 5]


def test_record_writes_the_part_that_ran_and_replay_refuses_it(tmp_path):
    path = tmp_path / "part.json"
    with pytest.raises(TaskError) as got:
        dlbkit.map(SquareUnless({30}), range(100), balancer="ss", workers=1, record=path)
    assert f"is recorded in {path}" in " ".join(got.value.__notes__)
    t = load_trace(path)
    assert t.meta["partial"] == {"failed": "item 30", "done": 30, "of": 100, "unit": "items"}
    assert _covered(t) == list(range(30))
    with pytest.raises(ConfigError, match=r"a run that failed at item 30 after 30 of 100 items"):
        dlbkit.replay(path)
    with pytest.raises(ConfigError, match="the recording of a whole run"):
        dlbkit.advise(path)
    p = subprocess.run([sys.executable, "-m", "dlbkit", "replay", str(path)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and "dlbkit: error: trace must be the recording of a whole run" in p.stderr
    assert "Traceback" not in p.stderr


def test_the_cli_keeps_the_part_that_ran_in_its_results_and_record_files(tmp_path):
    (tmp_path / "fails.py").write_text("def f(x):\n    if x == 30:\n        raise ValueError('bad')\n"
                                       "    return x * x\n")
    p = subprocess.run([sys.executable, "-m", "dlbkit", "run", "fails:f", "--items", "100", "--workers", "1",
                        "--balancer", "ss", "--record", "r.json", "--results", "res.json"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120,
                       env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert p.returncode == 1
    assert "dlbkit: error: item 30 failed: ValueError: bad" in p.stderr
    assert "dlbkit: wrote the 30 of 100 items computed before it in res.json" in p.stderr
    assert json.loads((tmp_path / "res.json").read_text()) == {str(i): i * i for i in range(30)}
    assert load_trace(tmp_path / "r.json").meta["partial"]["done"] == 30


# --- graph ------------------------------------------------------------------------------------------
def _bad_task(key, *inputs):
    raise Bad(f"bad task {key}")


def _sum_task(key, *inputs):
    return key + sum(inputs)


@st.composite
def failing_dags(draw):
    """(n, edges i → j with i < j, the tasks that raise)."""
    n = draw(st.integers(1, 14))
    edges = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]),
                         max_size=25))
    failing = draw(st.sets(st.integers(0, n - 1), max_size=3))
    return n, sorted(edges), failing


def _tasks(n, edges, failing):
    preds = {j: [i for i, k in edges if k == j] for j in range(n)}
    # keys are names: an argument equal to a key is that task's value (Dask's rule), so the index passed is not one
    return {f"t{j}": (_bad_task if j in failing else _sum_task, j, *(f"t{i}" for i in preds[j])) for j in range(n)}, preds


def _serial(n, preds, failing):
    """Each task's value, or the set of failing tasks (itself or above) that make it not computable."""
    out = {}
    for j in range(n):
        above = set().union(*(out[i] for i in preds[j] if isinstance(out[i], set))) if preds[j] else set()
        if j in failing:
            above.add(j)
        out[j] = above if above else j + sum(out[i] for i in preds[j])
    return out


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag=failing_dags(), balancer=st.sampled_from(["pd", "heft", "round-robin"]))
def test_a_graph_returning_exceptions_gives_a_failed_tasks_exception_to_it_and_to_every_task_needing_it(dag, balancer):
    n, edges, failing = dag
    tasks, preds = _tasks(n, edges, failing)
    r = dlbkit.run_graph(tasks, balancer=balancer, workers=2, return_exceptions=True)
    want = _serial(n, preds, failing)
    assert list(r.results) == [f"t{j}" for j in range(n)]
    for j, v in enumerate(r.results.values()):
        if isinstance(want[j], set):
            assert type(v) is Bad and int(str(v).split()[-1]) in want[j]
        else:
            assert v == want[j]
    ran = sorted(f for f in failing if want[f] == {f})  # a failing task runs unless a task above it failed
    assert r.trace.meta.get("failed", []) == ran
    assert r.trace.meta.get("not_run", []) == sorted(j for j in range(n) if isinstance(want[j], set) and j not in ran)
    done = sorted(r.trace.first)  # one interval per task computed, each once
    assert done == sorted(j for j in range(n) if not isinstance(want[j], set))


@pytest.mark.parametrize("balancer", ["pd", "heft"])
def test_a_graph_that_fails_keeps_every_value_computed_before_it(tmp_path, balancer):
    tasks = {"a": (abs, -2), "b": (_bad_task, "B", "a"), "c": (operator.add, "b", 1), "d": (operator.mul, "a", 3)}
    path = tmp_path / "g.json"
    with pytest.raises(TaskError, match="task 'b' failed: Bad: bad task B") as got:
        dlbkit.graph(tasks, balancer=balancer, workers=1, record=path)
    e = got.value
    assert e.index == "b" and "b" not in e.results and "c" not in e.results
    assert e.results["a"] == 2 and set(e.results) <= {"a", "d"}
    assert all({"a": 2, "d": 6}[k] == v for k, v in e.results.items())
    part = load_trace(path).meta["partial"]
    assert part == {"failed": "task 'b'", "done": len(e.results), "of": 4, "unit": "tasks"}
    with pytest.raises(ConfigError, match="after .* of 4 tasks"):
        dlbkit.replay(path)


def test_a_dask_collection_is_refused_return_exceptions():
    dask = pytest.importorskip("dask")
    with pytest.raises(ConfigError, match="return_exceptions must be False for a Dask collection"):
        dlbkit.graph(dask.delayed(abs)(-1), return_exceptions=True)


@pytest.mark.parametrize("value", ["yes", 1])
def test_return_exceptions_is_a_flag(value):
    with pytest.raises(ConfigError, match="return_exceptions"):
        dlbkit.map(abs, [1], return_exceptions=value)
    with pytest.raises(ConfigError, match="return_exceptions"):
        dlbkit.graph({"a": (abs, -1)}, return_exceptions=value)

