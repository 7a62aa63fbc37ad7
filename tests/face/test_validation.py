"""Bad input is one clear ConfigError from the CLI and the Python API alike; sizes are bounded
before work; arithmetic stays finite; files that are not UTF-8 are named; output does not mislead."""

import math
import time
import warnings

import numpy as np
import pytest

import dlbkit
from dlbkit import Constant, CostModel, Divisible, Markov, Node, Platform, Pulse, Recorded, Step, TaskTree, simulate
from dlbkit.families.simulate import UnusedAvailabilityWarning
from dlbkit.face.cli import main, plain_text
from dlbkit.errors import ConfigError
from dlbkit.face.experiments import format_table, load_experiment, summarise
from dlbkit.face.experiments.spec import MAX_REPETITIONS, MAX_RUNS
from dlbkit.model.metrics import lower_bound
from dlbkit.model.trace import Trace
from dlbkit.families.tree.model.workload import MAX_TREE_NODES, TreeSize
from dlbkit.families.divisible.model.workload import MAX_ITEMS

from support.experiment_files import TINY


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text, name="exp.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def one_error_line(err):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dlbkit: error: ") and "Traceback" not in err, err
    return lines[0]


# --- class 4: sizes bounded before work, finite arithmetic --------------------------------------------
@pytest.mark.parametrize("old, new, field", [
    ("repetitions = 3", "repetitions = 1000000000000", "repetitions"),
    ("items = 120", "items = 1000000000000000", "workload.items"),
    ('{name = "a", speed = 1.0}', '{name = "a", speed = 1e308}', "platform.nodes[1].speed"),
    ("latency = 1e-3", "latency = 1e300", "platform.network.latency"),
])
def test_absurd_sizes_are_rejected_at_load_naming_the_limit(tmp_path, capsys, old, new, field):
    """Huge repetitions, items and magnitudes fail in validation, in well under a second, naming the limit."""
    assert old in TINY
    path = write(tmp_path, TINY.replace(old, new))
    t0 = time.perf_counter()
    code, _out, err = run_cli(capsys, "simulate", path, "--out", tmp_path / "out")
    assert time.perf_counter() - t0 < 5
    line = one_error_line(err)
    assert code == 2 and field in line and "limit" in line
    assert not (tmp_path / "out").exists()  # nothing was started


def test_the_number_of_runs_is_bounded_before_expanding(tmp_path):
    """Repetitions × balancers × grid points above MAX_RUNS is refused before any run is built."""
    reps = MAX_REPETITIONS
    text = TINY.replace("repetitions = 3", f"repetitions = {reps}") + '\n[grid]\n"workload.items" = [100, 200, 300, 400, 500, 600]\n'
    assert reps * 2 * 6 > MAX_RUNS
    with pytest.raises(ConfigError, match=r"runs \(repetitions × balancers × grid points\) must be at most 1,000,000"):
        load_experiment(write(tmp_path, text))


def test_python_constructors_bound_sizes_too():
    with pytest.raises(ConfigError, match="workload.items must be an integer in \\[1, 100,000,000\\]"):
        Divisible(10**15)
    assert MAX_ITEMS == 10**8
    with pytest.raises(ConfigError, match="workload.depth"):
        TaskTree(depth=200)
    assert TaskTree(depth=16).expected_nodes() < MAX_TREE_NODES


def test_lower_bound_of_huge_speeds_is_finite_and_quick():
    """Two nodes of speed 1e308 (their sum overflows) used to loop for ever in lower_bound."""
    for avail in ([Constant().realise(), Constant().realise()],
                  [Constant().realise(), Pulse(start=1.0, duration=1.0, level=0.5).realise()]):
        tr = Trace(2, [0, 1], speeds=[1e308, 1e308], availability=avail, total_work=100.0, max_item=1.0)
        t0 = time.perf_counter()
        lb = lower_bound(tr)
        assert time.perf_counter() - t0 < 1.0
        assert math.isfinite(lb) and lb == pytest.approx(100.0 / 2e308, rel=1e-9)


def test_non_finite_numbers_are_rejected_everywhere():
    for bad in (math.nan, math.inf, -math.inf, 10**400):
        with pytest.raises(ConfigError, match="node 'a'.speed"):
            Node("a", speed=bad)
        with pytest.raises(ConfigError, match="workload.cost.value"):
            CostModel("constant", value=bad)


# --- class 5: bytes that are not UTF-8 ---------------------------------------------------------------
def test_non_utf8_experiment_names_the_file_and_byte_offset(tmp_path, capsys):
    data = TINY.encode()
    at = data.index(b"two balancers")
    path = tmp_path / "bad.toml"
    path.write_bytes(data[:at] + b"\xff\xfe" + data[at:])
    code, _out, err = run_cli(capsys, "simulate", path, "--out", tmp_path / "out")
    line = one_error_line(err)
    assert code == 2 and str(path) in line and f"byte offset {at}" in line and "UTF-8" in line


def test_non_utf8_availability_csv_names_the_file(tmp_path, capsys):
    (tmp_path / "load.csv").write_bytes(b"time,level\n0,1.0\n5,0.5\xe9\n")
    text = TINY.replace('availability = {kind = "pulse", start = 5.0, duration = 10.0, level = 0.5}',
                        'availability = {kind = "trace", file = "load.csv"}')
    code, _out, err = run_cli(capsys, "simulate", write(tmp_path, text), "--out", tmp_path / "out")
    line = one_error_line(err)
    assert code == 2 and "platform.nodes[2].availability.file" in line and "load.csv" in line
    assert "byte offset 22 (line 3)" in line and "UTF-8" in line


def test_an_empty_availability_trace_says_so(tmp_path):
    (tmp_path / "empty.csv").write_text("time,level\n")
    with pytest.raises(ConfigError, match="at least one time,level line"):
        Platform.from_dict({"nodes": [{"speed": 1.0, "availability": {"kind": "trace", "file": "empty.csv"}}]},
                           base_dir=tmp_path)
    with pytest.raises(ConfigError, match=r"availability.times must be at least one time,level pair"):
        Recorded((), ())


# --- class 6: the Python API checks what the files check ---------------------------------------------
@pytest.mark.parametrize("make, field", [
    (lambda: CostModel("uniform", low=-5, high=-1), "workload.cost.low"),
    (lambda: CostModel("gaussian"), "workload.cost.dist"),
    (lambda: CostModel("uniform", low=0.5), "workload.cost.high"),
    (lambda: CostModel("uniform", low=2.0, high=1.0), "workload.cost.high"),
    (lambda: CostModel("constant", mean=2.0), "workload.cost.mean"),
    (lambda: CostModel("array", values=[]), "workload.cost.values"),
    (lambda: Divisible(10, "x"), "workload.cost"),
    (lambda: Node("a", availability=2.0), "node 'a'.availability"),
    (lambda: Node("a", availability="busy"), "node 'a'.availability"),
    (lambda: Node("", speed=1.0), "node name"),
    (lambda: Pulse(start=-1, duration=1, level=0.5), "availability.start"),
    (lambda: Pulse(start=0, duration=2, level=0.5, period=2), "availability.period"),
    (lambda: Step(at=1, level=0), "availability.level"),
    (lambda: Markov(1, 1, 0.5, start_busy="yes"), "availability.start_busy"),
    (lambda: Recorded((1.0,), (0.5,)), "availability.times[0]"),
    (lambda: Platform("ab"), "nodes"),
    (lambda: Platform([Node("a")], "net"), "network"),
])
def test_constructors_raise_config_error_naming_the_field(make, field):
    with pytest.raises(ConfigError) as e:
        make()
    assert e.value.field == field


def test_node_accepts_a_bare_level_and_a_table_as_a_platform_file_does():
    assert Node("a", availability=0.5).availability == Constant(0.5)
    a = Node("a", availability={"kind": "pulse", "start": 1, "duration": 2, "level": 0.5}).availability
    assert a == Pulse(1.0, 2.0, 0.5)
    assert Divisible(4, 2.0).cost == CostModel("constant", value=2.0)


def test_the_file_loader_and_the_constructors_give_the_same_objects():
    p = Platform.from_dict({"nodes": [{"name": "a", "speed": 2, "availability": 0.5}]})
    assert p.nodes[0] == Node("a", 2.0, availability=Constant(0.5))
    w = Divisible.from_dict({"items": 10, "cost": {"dist": "uniform", "low": 1, "high": 2}})
    assert w == Divisible(10, CostModel("uniform", low=1.0, high=2.0))


def small():
    return Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=3.0)])


@pytest.mark.parametrize("call, field", [
    (lambda: simulate(small(), Divisible(40), "ss", seed="abc"), "seed"),
    (lambda: simulate(small(), Divisible(40), "ss", seed=-1), "seed"),
    (lambda: simulate(small(), Divisible(40), "ss", params=[1, 2]), "params"),
    (lambda: simulate(small(), Divisible(40), "ss", master_overhead=-1.0), "engine.master_overhead"),
    (lambda: simulate("nope.toml", Divisible(40), "ss"), "file"),
    (lambda: simulate(42, Divisible(40), "ss"), "platform"),
    (lambda: dlbkit.map(abs, [1], progress="yes"), "progress"),
    (lambda: dlbkit.map(abs, [1], emulate=[]), "emulate"),
    (lambda: dlbkit.map(abs, [1], emulate=[1.0, -1.0]), "emulate[1]"),
    (lambda: dlbkit.map(abs, [1], master="x"), "master"),
    (lambda: dlbkit.map(abs, [1], seed="abc"), "seed"),
    (lambda: dlbkit.map(abs, [1], params=[1, 2]), "params"),
    (lambda: dlbkit.map(abs, 5), "items"),
    (lambda: dlbkit.tree(lambda n: ([], 1), 0, progress="yes"), "progress"),
    (lambda: dlbkit.tree(lambda n: ([], 1), 0, seed=1.5), "seed"),
    (lambda: dlbkit.spmd(lambda u: u[1:-1], np.zeros(8), iterations=1, progress=1), "progress"),
])
def test_entry_points_reject_bad_arguments_before_any_work(call, field):
    """No worker is started: each of these fails in argument checks, naming the argument."""
    with pytest.raises(ConfigError) as e:
        call()
    assert e.value.field == field


# --- class 7: defaults said out loud -------------------------------------------------------------------
def test_simulate_says_which_node_is_the_master(tmp_path, capsys):
    r = simulate(small(), Divisible(40), "ss")
    assert r.trace.meta["master"] == "m" and r.trace.meta["master_computes"] is False
    assert repr(r) == f"<Result divisible, ss: makespan {r.makespan:.6g} s, master 'm' hands out work, does not compute>"
    assert r.trace.n_nodes == 2  # m computes nothing
    code, out, _ = run_cli(capsys, "simulate", write(tmp_path, TINY), "--out", tmp_path / "out")
    assert code == 0
    assert out.splitlines()[1].startswith("master: node 'm' hands out work and does not compute")


def test_a_uniform_cost_without_high_is_an_error_not_a_default(tmp_path, capsys):
    text = TINY.replace('cost = {dist = "uniform", low = 0.5, high = 1.5}', 'cost = {dist = "uniform", low = 0.5}')
    code, _out, err = run_cli(capsys, "simulate", write(tmp_path, text), "--out", tmp_path / "out")
    assert code == 2 and "workload.cost.high must be given for dist 'uniform'" in one_error_line(err)


# --- class 8: output that does not mislead -------------------------------------------------------------
def rows(labels, values):
    return [{"label": lbl, "balancer": lbl.lower(), "point": "", "status": "ok", "makespan": v, "chunks": 4.0,
             "lower_bound": 1.0} for lbl in labels for v in values]


def test_one_repetition_shows_the_mean_without_an_interval():
    text = format_table(summarise(rows(["A", "B"], [2.5]), ["makespan", "chunks", "lower_bound"]))
    assert "±" not in text.split("mean ±")[0]
    assert "one repetition gives no interval" in text


def test_identical_balancers_keep_their_columns_and_n():
    text = format_table(summarise(rows(["A", "B"], [2.0, 3.0]), ["makespan", "chunks", "lower_bound"]))
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["balancer", "n", "makespan"]
    assert lines[2].split()[:2] == ["A", "2"] and lines[3].split()[:2] == ["B", "2"]
    assert "every balancer gave identical results" in text and "same for every balancer" not in text
    # nothing is marked best, so the legend does not explain a mark
    assert "*" not in text and lines[-1] == "mean ± 95% CI half-width (Student's t) over repetitions"


def test_plain_text_unmarks_sphinx_and_drops_unshipped_files():
    assert plain_text("see :class:`~dlbkit.a.Foo` and ``x = 1`` with *p*") == "see Foo and x = 1 with p"
    assert plain_text("Osman 2003 §7; notes/000_osman.md §6.2") == "Osman 2003 §7"
    assert plain_text("Blumofe 1999; benchmarks/MODELS.md M2") == "Blumofe 1999"
    assert plain_text("ties (MODELS.md M1's rule) break by index") == "ties break by index"


def test_gantt_rows_are_named_after_platform_nodes():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p = Platform([Node("m"), Node("alpha", cores=2), Node("beta", speed=2.0)])
    fig = simulate(p, Divisible(40), "ss").plot_gantt()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    plt.close(fig)
    assert labels == ["alpha/0 (s=1)", "alpha/1 (s=1)", "beta (s=2)"]


def test_a_pulse_after_the_run_warns(tmp_path, capsys):
    p = Platform([Node("m"), Node("a", availability=Pulse(start=1e6, duration=5, level=0.5)), Node("b")])
    with pytest.warns(UnusedAvailabilityWarning, match="node 'a': its availability pulse begins at t = 1e\\+06 s"):
        simulate(p, Divisible(40), "ss")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate(small(), Divisible(40), "ss")  # nothing to say
    code, _out, err = run_cli(capsys, "simulate", write(tmp_path, TINY.replace("start = 5.0", "start = 5000.0")),
                              "--out", tmp_path / "out")
    assert code == 0
    assert err.strip().splitlines() == [
        "dlbkit: warning: node 'b': its availability pulse begins at t = 5000 s, after every run ended "
        + err.split("after every run ended ", 1)[1].strip()]


def test_count_is_a_named_tuple_and_period_names_the_duration():
    size = TaskTree(depth=4).count()
    assert isinstance(size, TreeSize) and size == (15, 7) and (size.nodes, size.internal) == (15, 7)
    with pytest.raises(ConfigError, match=r"nodes\[0\].availability.period must be a number > 2, the pulse's duration"):
        Platform.from_dict({"nodes": [{"speed": 1, "availability": {"kind": "pulse", "start": 0, "duration": 2,
                                                                    "level": 0.5, "period": 1}}]})


def test_balancer_parameters_are_finite_and_bounded():
    """fsc with h = 1e308 overflowed inside the balancer; now its parameter check names the limit."""
    with pytest.raises(ConfigError, match=r"parameter 'h' of fsc must be .* magnitude at most 1e30"):
        simulate(small(), Divisible(40), "fsc", params={"h": 1e308})
