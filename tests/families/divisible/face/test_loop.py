"""dlbkit.Loop: a persistent pool of worker processes, reused across time steps."""

import os
import time

import pytest

import dlbkit
from dlbkit.errors import ConfigError, DlbkitError, TaskError
from dlbkit.model.metrics import compute
from dlbkit.families.divisible.model.steps import n_steps, step_trace

from support.loop_jobs import RaisesOnTen, square


def pid(_):
    return os.getpid()


def spin(x):
    s = 0
    for i in range(2000 * (x % 4 + 1)):
        s += i
    return x


def fails_on_7(x):
    if x == 7:
        raise ValueError("seven")
    return x


def test_workers_start_once_and_serve_every_step():
    with dlbkit.Loop(pid, workers=2, balancer="ss") as loop:
        pids = [set(loop.map(range(40))) for _ in range(3)]
        procs = list(loop._transport._procs)
    assert pids[0] | pids[1] | pids[2] <= {p.pid for p in procs}
    assert len(pids[0] | pids[1] | pids[2]) <= 2
    assert all(not p.is_alive() for p in procs)  # close() stopped them


def test_results_in_item_order_every_step_and_one_trace_over_all():
    with dlbkit.Loop(square, workers=2) as loop:
        for k in range(3):
            items = list(range(k, 50 + k))
            r = loop.run(items)
            assert r.results == [x * x for x in items]
            # the step's trace is a one-step map trace: every item once, times from the step's start
            seen = sorted(i for f, n in zip(r.trace.first, r.trace.count) for i in range(f, f + n))
            assert seen == list(range(50))
            assert r.metrics["makespan"] == pytest.approx(r.trace.makespan) and r.trace.makespan > 0
        tr = loop.trace
    assert n_steps(tr) == 3 and len(tr.meta["item_cost"]) == 150
    r = dlbkit.replay(tr)  # a time-stepping recording replays as the simulator's steps
    assert n_steps(r.trace) == 3 and r.trace.count and sum(r.trace.count) == 150
    steps = tr.meta["time_steps"]
    assert all(a["end"] <= b["start"] for a, b in zip(steps, steps[1:]))
    for k in range(3):  # cutting the whole trace gives each step's trace back
        assert step_trace(tr, k).count == loop.steps[k].trace.count
    assert compute(tr)["makespan"] == pytest.approx(steps[-1]["end"] if tr.makespan <= steps[-1]["end"]
                                                    else tr.makespan)
    # each step's metrics count its own messages (as a dlbkit.map call's would), the whole run all of them
    per_step = [s.metrics["messages"] for s in loop.steps]
    assert all(m > 0 for m in per_step) and sum(per_step) == compute(tr)["messages"]


def test_awf_carries_weights_across_real_steps():
    with dlbkit.Loop(spin, emulate=[1.0, 0.5], balancer="awf") as loop:
        loop.map(range(60))
        loop.map(range(60))
        carried = loop.trace.meta["carried"]
    w = carried[0]["weights"]
    assert len(w) == 2 and sum(w) == pytest.approx(2.0) and w[0] > w[1]  # the slower worker weighs less
    assert carried[1]["steps"] == 2


@pytest.mark.parametrize("name", ["awf", "af", "awf-c", "auto"])
def test_an_empty_step_carries_the_state_on_unchanged(name):
    """An empty step measures nothing and is not a time step of the balancer's: time-stepping AWF's
    step index s (the weight of a step in π_i) does not count it, auto's `every` neither (as under
    MPI, where an empty step runs no coordinator and the state is carried on)."""
    with dlbkit.Loop(spin, emulate=[1.0, 0.5], balancer=name) as loop:
        loop.map(range(30))
        loop.map([])
        loop.map(range(30))
        carried = loop.trace.meta["carried"]
    assert carried[1] == carried[0]
    if name == "awf":
        assert [c["steps"] for c in carried] == [1, 1, 2]
    if name == "auto":
        assert [c["step"] for c in carried] == [1, 1, 2]


def test_a_failing_step_stops_the_pool_and_closes_the_loop():
    loop = dlbkit.Loop(fails_on_7, workers=2)
    assert loop.map([1, 2]) == [1, 2]
    procs = list(loop._transport._procs)
    with pytest.raises(TaskError) as e:
        loop.map(range(10))
    assert e.value.index == 7
    assert loop.closed and all(not p.is_alive() for p in procs)
    with pytest.raises(DlbkitError, match="closed"):
        loop.map([1])
    loop.close()  # idempotent


def test_a_balancer_raising_in_a_step_is_noted_as_in_map_and_closes_the_loop():
    """A Loop step ran its coordinator outside the backends' shared failure path (base.drive): the
    balancer's exception came out with no note, read as a worker's failure. It now has the note
    ``dlbkit.map`` gives, and the loop is closed as after any failing step (docs/loop.md)."""
    line = RaisesOnTen.chunk.__code__.co_firstlineno + 2
    note = [f"dlbkit: raised by RaisesOnTen.chunk (loop_jobs.py:{line}) in the coordinator (this process), "
            "not in a worker"]
    with pytest.raises(ValueError, match="no chunk for ten") as in_map:
        dlbkit.map(square, range(10), workers=2, balancer=RaisesOnTen(), progress=False)
    assert in_map.value.__notes__ == note
    loop = dlbkit.Loop(square, workers=2, balancer=RaisesOnTen())
    assert loop.map([1, 2, 3]) == [1, 4, 9]
    procs = list(loop._transport._procs)
    with pytest.raises(ValueError, match="no chunk for ten") as in_loop:
        loop.map(range(10))
    assert in_loop.value.__notes__ == note
    assert loop.closed and all(not p.is_alive() for p in procs)
    with pytest.raises(DlbkitError, match="closed"):
        loop.map([1])


def test_a_failing_step_keeps_the_recording_of_the_steps_before(tmp_path):
    """A failure closes the loop, and with *record* the steps that completed are still saved (close()
    after a failure has nothing left to do, so the failure itself saves them)."""
    path = tmp_path / "run.json"
    with pytest.raises(TaskError):
        with dlbkit.Loop(fails_on_7, workers=2, record=path) as loop:
            assert loop.map([1, 2]) == [1, 2]
            assert loop.map([3, 4]) == [3, 4]
            loop.map(range(10))
    rec = dlbkit.load_trace(path)
    assert n_steps(rec) == 2 and rec.meta["item_cost"] and len(rec.meta["item_cost"]) == 4
    assert sorted(i for f, n in zip(rec.first, rec.count) for i in range(f, f + n)) == [0, 1, 2, 3]


def test_close_stops_the_workers_even_when_the_recording_cannot_be_written(tmp_path):
    where = tmp_path / "gone"
    where.mkdir()
    loop = dlbkit.Loop(square, workers=2, record=where / "run.json")
    loop.map([1, 2, 3])
    procs = list(loop._transport._procs)
    where.rmdir()  # the directory went away while the loop ran
    with pytest.raises(ConfigError, match="record"):
        loop.close()
    deadline = time.monotonic() + 10
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert loop.closed and all(not p.is_alive() for p in procs)


def test_empty_step_and_auto_record(tmp_path):
    path = tmp_path / "run.json"
    with dlbkit.Loop(spin, workers=2, balancer="auto", params={"every": 2}, record=path) as loop:
        assert loop.map([]) == []
        for _ in range(3):
            loop.map(range(80))
    assert path.is_file()  # close() saved every step
    rec = dlbkit.load_trace(path)
    autos = [s.get("auto") for s in rec.meta["time_steps"]]
    assert autos[1]["used"] == "awf-c" and autos[1]["evaluated"] == "first step measured"
    assert autos[2]["used"] == autos[1]["next"]
    with pytest.raises(ConfigError, match="one item count"):  # the empty step differs from the others
        dlbkit.replay(path)


@pytest.mark.parametrize("kw, field", [
    ({"workers": 0}, "workers"),
    ({"backend": "nosuch"}, "backend"),
    ({"backend": "mpi"}, "backend"),
    ({"balancer": "auto", "params": {"candidates": []}}, "candidates"),
    ({"balancer": "heft"}, "balancer"),
    ({"seed": -1}, "seed"),
    ({"start_method": "bogus"}, "start_method"),
    ({"start_method": 3}, "start_method"),
    ({"record": "/no/such/directory/run.json"}, "record"),
])
def test_bad_arguments_raise_before_any_worker_starts(kw, field):
    with pytest.raises(ConfigError, match=field):
        dlbkit.Loop(square, **kw)


def test_run_map_bad_start_method_is_a_config_error():
    """Not multiprocessing's ValueError: a ConfigError naming the field and the methods allowed."""
    with pytest.raises(ConfigError, match="start_method.*'spawn'"):
        dlbkit.run_map(square, range(3), workers=1, start_method="bogus")


def test_bad_items():
    with dlbkit.Loop(square, workers=1) as loop:
        with pytest.raises(ConfigError, match="items"):
            loop.map("abc")


def test_no_worker_outlives_an_unclosed_loop():
    loop = dlbkit.Loop(square, workers=2)
    procs = list(loop._transport._procs)
    del loop
    deadline = time.monotonic() + 10
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(not p.is_alive() for p in procs)
