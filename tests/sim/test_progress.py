"""Progress inside one simulation: every engine's ``progress(done, total)``.

The throttle (dlbkit.sim.progress) is switched off here (every completion is reported), so the tests
see every call and depend on no clock: the counts never decrease, end at the total, and the run is
the same trace with and without a callback."""

import os
import re
import threading

import numpy as np
import pytest

import dlbkit
from dlbkit import ConfigError, Divisible, Network, Node, Platform
from dlbkit.balancers import registry
from dlbkit.families.tree.balancers import WorkStealing
from dlbkit.face.cli import RunBar, main
from dlbkit.families.graph.model.generate import topcuoglu10
from dlbkit.families.spmd.model.workload import Spmd
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
from dlbkit.sim import progress as sim_progress
from dlbkit.families.divisible.sim.engine import simulate_divisible
from dlbkit.families.tree.sim.engine import simulate_tree_async

from support.experiment_files import TINY


@pytest.fixture
def every_completion(monkeypatch):
    """Report every completion: no clock in the tests."""
    monkeypatch.setattr(sim_progress, "INTERVAL_S", 0.0)
    monkeypatch.setattr(sim_progress, "MAX_STRIDE", 1)


def plain(x):
    """*x* as nested lists, tuples and dicts of numbers and strings (NaN as a string), to compare."""
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [plain(v) for v in x]
    if isinstance(x, dict):
        return sorted((repr(k), plain(v)) for k, v in x.items())
    if isinstance(x, float):
        return repr(x)  # to the last bit; NaN equals NaN
    if hasattr(x, "__dict__"):
        return type(x).__name__, plain(vars(x))
    slots = [n for c in type(x).__mro__ for n in getattr(c, "__slots__", ())]
    if slots:
        return type(x).__name__, plain({n: getattr(x, n, None) for n in slots})
    return x


def same_trace(a, b) -> None:
    va, vb = vars(a), vars(b)
    assert va.keys() == vb.keys()
    for k in va:
        assert plain(va[k]) == plain(vb[k]), k


def check_calls(calls, total=None) -> None:
    assert len(calls) >= 2
    done = [d for d, _ in calls]
    totals = [t for _, t in calls]
    assert done == sorted(done) and totals == sorted(totals)  # never decreasing
    assert all(0 <= d <= t for d, t in calls)
    assert calls[-1][0] == calls[-1][1]  # ends at the total
    if total is not None:
        assert calls[-1][1] == total


def with_and_without(run, total=None):
    calls = []
    traced = run(lambda done, tot: calls.append((done, tot)))
    check_calls(calls, total)
    same_trace(run(None), traced)
    return calls


def platform(n=4, latency=1e-3, topology="complete"):
    return Platform([Node(f"n{i}", speed=float(1 + i % 3)) for i in range(n)],
                    Network(latency=latency, bandwidth=1e9, topology=topology))


# --- the engines ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mechanism,fast,balancer", [("self-scheduling", None, "gss"),
                                                     ("self-scheduling", None, "ss"),
                                                     ("self-scheduling", False, "gss"),
                                                     ("self-scheduling", None, "awf-b"),
                                                     ("rounds", None, "static")])
def test_divisible_reports_items_completed(every_completion, mechanism, fast, balancer):
    p = platform()

    def run(progress):
        return simulate_divisible(p, Divisible(300), registry.make(balancer), seed=3, mechanism=mechanism,
                                  fast_path=fast, log_events=mechanism != "rounds", progress=progress)

    calls = with_and_without(run, 300)
    if mechanism == "self-scheduling":
        assert len({d for d, _ in calls}) > 3  # completions along the way, not only the ends


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("record", [True, False])
def test_tree_reports_tasks_completed_of_tasks_created(every_completion, fast, record):
    tree = TaskTree("random", depth=7, fanout=2, seed=2, grain=1.0)

    def run(progress):
        return simulate_tree_async(platform(), tree, WorkStealing(), seed=1, control_bytes=0, task_bytes=0,
                                   fast_path=fast, record=record, log_events=True, progress=progress)

    calls = with_and_without(run)
    assert calls[-1][1] == run(None).meta.get("tasks", calls[-1][1])
    assert calls[0][1] < calls[-1][1]  # the total grows as tasks are created
    assert calls[0][0] == 0 and len(calls) > 10


def test_tree_fast_loop_reports_while_recording_with_a_growing_sample_stride(every_completion, monkeypatch):
    from dlbkit.families.tree.sim import engine as tree_async
    monkeypatch.setattr(tree_async, "WAITING_SAMPLES", 4)  # the sample stride doubles several times
    tasks = FlatTasks([1.0 + (i % 5) for i in range(400)])

    def run(progress):
        return simulate_tree_async(platform(3), tasks, WorkStealing(), seed=1, control_bytes=0, task_bytes=0,
                                   fast_path=True, progress=progress)

    calls = with_and_without(run, 400)
    assert [d for d, _ in calls[:-1]] == list(range(0, 401))  # the start, then every completion once


def test_tree_general_loop_with_a_periodic_balancer(every_completion):
    tree = TaskTree("random", depth=6, fanout=2, seed=4, grain=1.0)

    def run(progress):
        return dlbkit.simulate(platform(4, topology="ring"), tree, "gdem", seed=2, progress=progress).trace

    with_and_without(run)


def test_spmd_reports_loops(every_completion):
    p = Platform([Node(f"w{i}", speed=float(1 + i)) for i in range(3)], Network(latency=1e-4, bandwidth=1e8))
    w = Spmd(points=3000, loops=40, boundary=10, noise=0.1)

    def run(progress):
        return dlbkit.simulate(p, w, "dlah", seed=1, window=5, progress=progress).trace

    calls = with_and_without(run, 40)
    assert len(calls) > 4


def test_graph_reports_tasks(every_completion):
    def run(progress):
        return dlbkit.simulate(platform(3), topcuoglu10(), "heft", progress=progress).trace

    assert with_and_without(run, 10)[0] == (0, 10)


@pytest.mark.parametrize("balancer", ["pd", "heft"])
def test_the_dynamic_graph_engine_reports_every_finished_task(every_completion, balancer):
    def run(progress):
        return dlbkit.simulate(platform(3), topcuoglu10(), balancer, engine_name="dynamic", progress=progress).trace

    calls = with_and_without(run, 10)
    assert calls[0] == (0, 10) and [d for d, _ in calls[1:11]] == list(range(1, 11))


def test_progress_must_be_a_function():
    with pytest.raises(ConfigError, match="progress"):
        dlbkit.simulate(platform(), Divisible(10), "ss", progress="yes")


def test_the_throttle_reports_first_then_rarely_and_always_the_end():
    calls = []
    t = sim_progress.Ticker(lambda d, n: calls.append((d, n)))
    strides = [t(k, 100) for k in range(100)]
    t.finish(100)
    assert calls[0] == (0, 100) and calls[-1] == (100, 100)
    assert all(s >= 1 and s & (s - 1) == 0 for s in strides)  # powers of two


# --- the CLI's bar ----------------------------------------------------------------------------------------
ONE_RUN = TINY.replace("repetitions = 3", "repetitions = 1").split("[[balancers]]")[0] + '[[balancers]]\nname = "ss"\n'


def write(tmp_path, text):
    p = tmp_path / "one.toml"
    p.write_text(text)
    return p


def test_one_run_is_silent_when_stderr_is_not_a_terminal(tmp_path, capsys):
    code = main(["simulate", str(write(tmp_path, ONE_RUN)), "--out", str(tmp_path / "a")])
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and "1 runs" in out


def test_one_run_draws_a_bar_of_its_items_when_asked(tmp_path, capsys, every_completion):
    code = main(["simulate", str(write(tmp_path, ONE_RUN)), "--out", str(tmp_path / "a"), "--progress"])
    _out, err = capsys.readouterr()
    assert code == 0
    assert re.search(r"100%\|.*\| 120/120 \[.* items/s\]\n$", err)
    assert "runs/s" not in err  # one bar: the run's, not a bar of one run besides


def test_a_sweep_keeps_the_bar_of_its_runs(tmp_path, capsys, every_completion):
    p = tmp_path / "exp.toml"
    p.write_text(TINY)
    code = main(["simulate", str(p), "--out", str(tmp_path / "a"), "--progress"])
    _out, err = capsys.readouterr()
    assert code == 0 and "items/s" not in err and re.search(r"6/6 \[.*runs/s\]\n$", err)


def read_pty_while(fn):
    """Run *fn(tty)* with a pseudo-terminal as its stream; return what the terminal got."""
    master, slave = os.openpty()
    chunks = []

    def drain():
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:
                return
            if not b:
                return
            chunks.append(b)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        with os.fdopen(slave, "w") as tty:
            fn(tty)
    finally:
        reader.join(timeout=10)
        os.close(master)
    return b"".join(chunks).decode()


def test_one_run_draws_a_bar_on_a_pseudo_terminal(tmp_path, monkeypatch, every_completion):
    import sys
    exp = write(tmp_path, ONE_RUN)
    codes = []

    def go(tty):
        monkeypatch.setattr(sys, "stderr", tty)
        codes.append(main(["simulate", str(exp), "--out", str(tmp_path / "a")]))
        monkeypatch.undo()

    text = read_pty_while(go)
    assert codes == [0]
    assert "0/120" in text and "120/120 [" in text and "items/s]" in text and "runs/s" not in text


def test_the_run_bar_is_a_bar_on_a_pseudo_terminal_and_lines_in_a_file(tmp_path):
    def go(tty):
        bar = RunBar(tty, unit="tasks")
        assert bar.enabled
        for done, total in [(0, 3), (1, 5), (5, 7), (7, 7)]:
            bar(done, total)
        assert bar.bar is None  # closed at the end

    text = read_pty_while(go)
    assert "0/3" in text and "7/7 [" in text and "tasks/s]" in text
    with open(tmp_path / "log", "w") as f:
        bar = RunBar(f)
        bar(0, 2)
        bar(2, 2)
    # a file gets a line every LINE_S s (tests/face/cli/test_progress_lines.py): none for a run this short
    assert bar.mode == "lines" and (tmp_path / "log").read_text() == ""
