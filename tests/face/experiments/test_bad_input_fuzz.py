"""Fuzzing bad input: valid experiment files, platforms and API calls, mutated (types, signs,
NaN/inf, huge and tiny values, missing and unknown keys, bytes that are not UTF-8), must give one
ConfigError — on the CLI one ``dlbkit: error:`` line and exit 2 — and never a traceback, never a
hang, never a lost file. Derandomized (the same examples on every run) and bounded in time: the
whole file runs in well under a minute in the default test run.

The CLI is run in-process (:func:`dlbkit.face.cli.main`) on mutations the loader rejects, so it stops at
validation; mutations the loader accepts are valid experiments and are not run (a valid sweep may be
long). Every call runs under a deadline (:func:`deadline`) that turns a hang into a failure.
"""

import math
import shutil
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import CostModel, Divisible, Markov, Node, Platform, Pulse, Recorded, Step, TaskTree
from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.face.experiments import load_experiment

from support.experiment_files import TINY
from support.fuzz import DATA, FLAG_TEXT, FUZZ, WEIRD, deadline, mutated, to_toml
from support.profiles import examples

SHIPPED = ["demo", "haron_torus64_info", "osman_ring10", "sanchez2002_e2"]


def bases() -> dict[str, dict]:
    out = {"tiny": tomllib.loads(TINY)}
    for name in SHIPPED:
        out[name] = tomllib.loads((DATA / "experiments" / f"{name}.toml").read_text())
    return out


BASES = bases()


BAD_BYTES = [b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"]


@st.composite
def bad_encoding(draw, text: str) -> tuple[bytes, int]:
    """*text* as UTF-8 with bytes that are not UTF-8 inserted at a drawn offset."""
    data = text.encode()
    at = draw(st.integers(0, len(data)))
    while at < len(data) and (data[at] & 0xC0) == 0x80:  # not inside a character
        at += 1
    return data[:at] + draw(st.sampled_from(BAD_BYTES)) + data[at:], at


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder with the shipped platforms (so ``file = "../platforms/x.toml"`` resolves) and an
    output folder holding a results file that no failing command may touch."""
    root = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(DATA / "platforms", root / "platforms")
    (root / "experiments").mkdir()
    out = root / "out"
    out.mkdir()
    (out / "results.csv").write_text("label,point,repetition,status\nkept,,0,ok\n")
    return root


def check_cli_rejects(path: Path, workdir: Path, capsys) -> str:
    """``dlbkit simulate PATH`` stops at validation: exit 2, one error line, no traceback, and the
    results already in the output folder unchanged."""
    before = (workdir / "out" / "results.csv").read_bytes()
    with deadline():
        code = main(["simulate", str(path), "--out", str(workdir / "out")])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("dlbkit: error: "), err
    assert "Traceback" not in err + out
    assert (workdir / "out" / "results.csv").read_bytes() == before
    assert sorted(p.name for p in (workdir / "out").iterdir()) == ["results.csv"]
    return lines[0]


def validate(path: Path):
    """load_experiment(path): the experiment, or the ConfigError (anything else fails the test)."""
    try:
        with deadline():
            return load_experiment(path)
    except ConfigError as e:
        text = str(e)
        assert "\n" not in " ".join(text.split()) and e.field and e.allowed, text
        return e


# --- experiment files ---------------------------------------------------------------------------------
@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(BASES)))
def test_mutated_experiment_files_fail_with_one_line(data, name, workdir, capsys):
    d = data.draw(mutated(BASES[name]))
    path = workdir / "experiments" / "fuzz.toml"
    path.write_text(to_toml(d))
    got = validate(path)
    if isinstance(got, ConfigError):
        check_cli_rejects(path, workdir, capsys)
    else:  # a mutation that keeps the experiment valid: its sizes are within the limits
        assert got.n_runs <= 1_000_000 and got.repetitions <= 100_000
        assert getattr(got.workload, "n_items", 0) <= 10**8
        assert all(1e-30 <= n.speed <= 1e30 for n in got.platform.nodes)


@settings(FUZZ, max_examples=examples(40))
@given(data=st.data(), name=st.sampled_from(sorted(BASES)))
def test_experiment_files_that_are_not_utf8_name_the_byte(data, name, workdir, capsys):
    raw, at = data.draw(bad_encoding(to_toml(BASES[name])))
    path = workdir / "experiments" / "enc.toml"
    path.write_bytes(raw)
    line = check_cli_rejects(path, workdir, capsys)
    assert "UTF-8" in line and f"byte offset {at}" in line and str(path) in line


@settings(FUZZ, max_examples=examples(30))
@given(data=st.data())
def test_availability_csv_that_is_not_utf8_or_not_numbers(data, workdir, capsys):
    text = "time,level\n0,1.0\n5,0.5\n9,0.25\n"
    if data.draw(st.booleans()):
        raw, _ = data.draw(bad_encoding(text))
    else:
        lines = text.splitlines()
        k = data.draw(st.integers(1, len(lines) - 1))
        lines[k] = data.draw(st.sampled_from(["x,y", "nan,1", "1,inf", "-1,0.5", "3", "0,0", "0,2", "1e400,1"]))
        raw = ("\n".join(lines) + "\n").encode()
    (workdir / "experiments" / "load.csv").write_bytes(raw)
    d = tomllib.loads(TINY)
    d["platform"]["nodes"][2]["availability"] = {"kind": "trace", "file": "load.csv"}
    path = workdir / "experiments" / "csv.toml"
    path.write_text(to_toml(d))
    assert isinstance(validate(path), ConfigError)
    line = check_cli_rejects(path, workdir, capsys)
    assert "platform.nodes[2].availability" in line


# --- platforms ----------------------------------------------------------------------------------------
PLATFORMS = {p.stem: tomllib.loads(p.read_text()) for p in sorted((DATA / "platforms").glob("*.toml"))}


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(PLATFORMS)))
def test_mutated_platforms_raise_config_error_only(data, name, workdir):
    d = data.draw(mutated(PLATFORMS[name]))
    try:
        with deadline():
            p = Platform.from_dict(d, base_dir=workdir / "platforms")
    except ConfigError as e:
        assert e.field and "\n" not in str(e)
        return
    # accepted: every number is finite and within dlbkit's limits, so the totals are too
    assert math.isfinite(p.total_speed) and p.n_nodes <= 100_000


# --- Python API ---------------------------------------------------------------------------------------
NUM = st.one_of(WEIRD, st.floats(min_value=0.01, max_value=10))


@FUZZ
@given(dist=st.one_of(st.sampled_from(["constant", "uniform", "normal", "exponential", "linear", "array"]), WEIRD),
       fields=st.dictionaries(st.sampled_from(["value", "low", "high", "mean", "std", "first", "last", "floor",
                                               "values"]), NUM, max_size=3))
def test_cost_models_raise_config_error_or_give_positive_finite_costs(dist, fields):
    try:
        with deadline():
            c = CostModel(dist, **fields)
            costs = Divisible(len(c.values) if c.dist == "array" else 50, c).costs(np.random.default_rng(0))
    except ConfigError as e:
        assert e.field.startswith("workload.cost")
        return
    assert np.all(np.isfinite(costs)) and np.all(costs > 0)


SPECS = st.one_of(
    st.builds(Pulse, start=NUM, duration=NUM, level=NUM, base=NUM, period=st.one_of(st.none(), NUM)),
    st.builds(Step, at=NUM, level=NUM, before=NUM),
    st.builds(Markov, mean_free=NUM, mean_busy=NUM, low=NUM, high=NUM, start_busy=st.one_of(st.booleans(), WEIRD)),
    st.builds(Recorded, times=st.lists(NUM, max_size=3).map(tuple), levels=st.lists(NUM, max_size=3).map(tuple)),
)


@FUZZ
@given(name=st.one_of(st.just("a"), WEIRD), speed=NUM, cores=st.one_of(st.integers(-2, 4), WEIRD),
       memory=st.one_of(st.none(), NUM), availability=st.one_of(NUM, st.just({"kind": "pulse"}), st.none()),
       spec=st.data())
def test_nodes_and_availabilities_raise_config_error_only(name, speed, cores, memory, availability, spec):
    with deadline():
        try:
            a = spec.draw(SPECS) if availability is None else availability
        except ConfigError:
            return  # an availability's own constructor refused the drawn values
        try:
            n = Node(name, speed, cores, memory, a)
        except ConfigError as e:
            assert e.field.startswith(("node", "availability")), e.field
            return
    assert 1e-30 <= n.speed <= 1e30 and isinstance(n.cores, int) and n.cores >= 1
    assert 0 < n.availability.realise(np.random.default_rng(0)).level(0.0) <= 1


class ReachedTheRuntime(Exception):
    """Raised by the stubbed runners: the arguments passed every check."""


@pytest.fixture
def no_runtime(monkeypatch):
    from dlbkit.families.divisible.runtime import program as divisible_program
    from dlbkit.families.spmd.runtime import program as spmd_program
    from dlbkit.families.tree.runtime import program as tree_program

    def stub(*a, **k):
        raise ReachedTheRuntime

    monkeypatch.setattr(divisible_program, "run_map", stub)
    monkeypatch.setattr(tree_program, "run_tree", stub)
    monkeypatch.setattr(spmd_program, "run_spmd", stub)


ARG = st.one_of(st.none(), WEIRD)


@settings(FUZZ, max_examples=examples(150))
@given(entry=st.sampled_from(["map", "tree", "spmd", "simulate"]),
       kwargs=st.dictionaries(st.sampled_from(["seed", "params", "progress", "emulate", "master", "balancer",
                                               "workers", "backend"]), ARG, max_size=3))
def test_api_calls_with_bad_arguments_raise_config_error(no_runtime, entry, kwargs):
    """Every entry point checks its arguments before any work: a ConfigError, or the stubbed runtime."""
    if entry != "simulate" and "workers" in kwargs and not isinstance(kwargs["workers"], int):
        pass  # checked like the rest
    if entry == "simulate":
        kwargs = {k: v for k, v in kwargs.items() if k in ("seed", "params", "balancer")}
        call = lambda: dlbkit.simulate(Platform([Node("m"), Node("a"), Node("b", speed=2.0)]),  # noqa: E731
                                       Divisible(30), **kwargs)
    elif entry == "map":
        call = lambda: dlbkit.run_map(abs, range(10), **kwargs)  # noqa: E731
    elif entry == "tree":
        kwargs.pop("master", None)
        call = lambda: dlbkit.run_tree(lambda n: ([], 1), 0, **kwargs)  # noqa: E731
    else:
        kwargs.pop("master", None)
        call = lambda: dlbkit.run_spmd(lambda u: u[1:-1], np.zeros(12), iterations=1, **kwargs)  # noqa: E731
    try:
        with deadline():
            call()
    except (ConfigError, ReachedTheRuntime) as e:
        if isinstance(e, ConfigError):
            assert e.field and "\n" not in str(e)


def test_a_loop_too_large_to_hold_is_a_config_error_before_any_worker(no_runtime):
    """A range of 10**12 items was a MemoryError traceback (one result slot per item) after the workers
    had started; now it is refused first, with the limit, as a simulated loop's workload.items is."""
    from dlbkit.families.divisible.model.workload import MAX_ITEMS

    for call in (lambda: dlbkit.run_map(abs, range(10**12)), lambda: dlbkit.map(abs, range(MAX_ITEMS + 1))):
        with deadline(), pytest.raises(ConfigError) as e:
            call()
        assert e.value.field == "items" and f"at most {MAX_ITEMS:,} items" in str(e.value)
    with deadline(), pytest.raises(ReachedTheRuntime):
        dlbkit.run_map(abs, range(MAX_ITEMS))  # the limit itself is allowed (checked by length, not built)


CHUNKING = sorted(n for n, c in dlbkit.REGISTRY.items() if c.kind == "chunking")


@settings(FUZZ, max_examples=examples(100))
@given(data=st.data(), name=st.sampled_from(CHUNKING))
def test_balancer_parameters_raise_config_error_or_run(data, name):
    """Any chunking balancer with weird values for its own parameters: a ConfigError, or a finite run."""
    keys = dlbkit.REGISTRY[name].param_names()
    if not keys:
        return
    params = data.draw(st.dictionaries(st.sampled_from(keys), NUM, min_size=1, max_size=2))
    p = Platform([Node("m"), Node("a"), Node("b", speed=2.0)])
    try:
        with deadline():
            r = dlbkit.simulate(p, Divisible(40), name, params=params)
    except ConfigError as e:
        assert "\n" not in str(e)
        return
    assert math.isfinite(r.makespan) and r.makespan > 0


@settings(FUZZ, max_examples=examples(60))
@given(kind=st.one_of(st.sampled_from(["balanced", "random", "imbalance"]), WEIRD),
       depth=st.one_of(st.integers(0, 300), WEIRD), fanout=st.one_of(st.integers(0, 10**6), WEIRD),
       grain=NUM, seed=st.one_of(st.integers(0, 5), WEIRD))
def test_task_trees_are_bounded(kind, depth, fanout, grain, seed):
    try:
        with deadline(5):
            t = TaskTree(kind=kind, depth=depth, fanout=fanout, grain=grain, seed=seed)
    except ConfigError as e:
        assert e.field.startswith("workload.")
        return
    assert t.expected_nodes() <= 10**8


RUN_FLAGS = ["--items", "--balancer", "--param", "--workers", "--emulate", "--master", "--seed", "--record", "--out",
             "--results", "--ranks", "--backend"]
SCHEDULE_FLAGS = ["--nodes", "--platform", "--balancer", "--param", "--seed", "--gantt", "--cost-model", "--contention"]
RECORDING_FLAGS = {"replay": ["--balancer", "--param", "--seed", "--model", "--info"],
                   "advise": ["--balancer", "--plot"]}


def _cli_is_one_line_or_reaches_the_work(capsys, argv):
    """``main(argv)``: status 0, or 2 with one ``dlbkit: error:`` line; never a traceback or a hang."""
    try:
        with deadline():
            code = main(argv)
    except ReachedTheRuntime:
        return
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert lines and lines[-1].startswith("dlbkit: error: "), (argv, err)
        assert "Traceback" not in err, (argv, err)


@pytest.fixture
def cli_dir(tmp_path, monkeypatch):
    """A folder with a function module, a platform file, a task graph and a recorded loop."""
    (tmp_path / "work_fz.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "p.toml").write_text('[[nodes]]\nname = "m"\nspeed = 1\n[[nodes]]\nname = "a"\nspeed = 2\n')
    (tmp_path / "dir").mkdir()
    from dlbkit.families.graph.model.generate import topcuoglu10
    topcuoglu10().write(tmp_path / "g.json")
    dlbkit.simulate(Platform([Node("m"), Node("a"), Node("b", speed=0.5)]), Divisible(30), "gss",
                    master="m").save(tmp_path / "sim.json")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.fixture
def recorded_dir(cli_dir):
    """cli_dir with a real recorded loop (two local workers, 40 items)."""
    dlbkit.run_map(abs, range(40), workers=2, balancer="fac2", record=cli_dir / "real.json")
    return cli_dir


@settings(FUZZ, max_examples=examples(150))
@given(flags=st.lists(st.tuples(st.sampled_from(RUN_FLAGS), FLAG_TEXT), max_size=4))
def test_run_flags_give_one_line_or_reach_the_workers(no_runtime, cli_dir, capsys, flags):
    argv = ["run", "work_fz:f"] + [x for pair in flags for x in pair]
    if "--items" not in argv:
        argv += ["--items", "3"]
    _cli_is_one_line_or_reaches_the_work(capsys, argv)


@settings(FUZZ, max_examples=examples(100))
@given(flags=st.lists(st.tuples(st.sampled_from(SCHEDULE_FLAGS), FLAG_TEXT), max_size=4))
def test_schedule_flags_give_one_line_or_a_plan(cli_dir, capsys, flags):
    argv = ["schedule", "g.json"] + [x for pair in flags for x in pair]
    if "--nodes" not in argv and "--platform" not in argv:
        argv += ["--nodes", "3"]
    # the search mappers cannot be drawn here (FLAG_TEXT names none); tests/test_entry_points_fuzz.py runs them
    _cli_is_one_line_or_reaches_the_work(capsys, argv)


@settings(FUZZ, max_examples=examples(100))
@given(command=st.sampled_from(sorted(RECORDING_FLAGS)), data=st.data())
def test_replay_and_advise_flags_give_one_line_or_a_table(recorded_dir, capsys, command, data):
    flags = data.draw(st.lists(st.tuples(st.sampled_from(RECORDING_FLAGS[command]), FLAG_TEXT), max_size=3))
    trace = data.draw(st.sampled_from(["real.json", "sim.json", "g.json", "p.toml", "nope.json", "dir"]))
    _cli_is_one_line_or_reaches_the_work(capsys, [command, trace] + [x for pair in flags for x in pair])


CLUSTER_FLAGS = ["--jobs", "--rate", "--workers", "--balancer", "--param", "--info", "--info-param", "--emulate",
                 "--seed", "--record"]
SIMULATE_FLAGS = ["--out", "--jobs", "--batch", "--executor"]


@settings(FUZZ, max_examples=examples(100))
@given(flags=st.lists(st.tuples(st.sampled_from(CLUSTER_FLAGS), FLAG_TEXT), max_size=4))
def test_cluster_flags_give_one_line_or_reach_the_cluster(cli_dir, capsys, monkeypatch, flags):
    import dlbkit.families.stream.face.cluster

    class Stub:
        def __init__(self, *a, **k):
            raise ReachedTheRuntime

    monkeypatch.setattr(dlbkit.families.stream.face.cluster, "Cluster", Stub)
    argv = ["cluster", "work_fz:f"] + [x for pair in flags for x in pair]
    if "--jobs" not in argv:
        argv += ["--jobs", "3"]
    _cli_is_one_line_or_reaches_the_work(capsys, argv)


@settings(FUZZ, max_examples=examples(60))
@given(flags=st.lists(st.tuples(st.sampled_from(SIMULATE_FLAGS), FLAG_TEXT), max_size=3))
def test_simulate_flags_give_one_line_or_a_sweep(cli_dir, capsys, flags):
    (cli_dir / "exp.toml").write_text(TINY)
    argv = ["simulate", "exp.toml", "--no-progress"] + [x for pair in flags for x in pair]
    if "--out" not in argv:
        argv += ["--out", "o"]
    _cli_is_one_line_or_reaches_the_work(capsys, argv)


# --- bench, and simulate / replay / advise held to exactly one line -----------------------------------
def _cli_exits_0_or_2_with_one_line(capsys, argv):
    """``main(argv)``: status 0, or 2 with exactly one ``dlbkit: error:`` line on stderr (argparse's
    usage errors too); never a traceback, a hang, or status 1 (none of bench, simulate, replay and
    advise documents it)."""
    with deadline():
        code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err + out, (argv, err)
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert len(lines) == 1 and lines[0].startswith("dlbkit: error: "), (argv, err)


BENCH_FLAGS = ["--workers", "--tasks", "--servers", "--load", "--choices", "--jobs", "--seed", "-P", "-N"]
#: values each flag takes (drawn three times in four; FLAG_TEXT's weird text otherwise)
VALID = {"--workers": ["1", "2", "3", "8", "40"], "--tasks": ["1", "2", "10", "40", "0"], "-P": ["2", "5"],
         "-N": ["3", "40"], "--servers": ["1", "2", "10", "40"], "--load": ["0.5", "0.9", "0.99", "1e-9", "0.999999"],
         "--choices": ["1", "2", "3", "10"],
         "--jobs": ["10", "11", "9", "1", "2"],  # bench: supermarket jobs (10 at least); simulate: processes
         "--seed": ["0", "1", "7", "2**63"],
         "--balancer": ["gss", "fac2", "awf-c", "auto", "ss", "static", "tss", "jsq", "nezha", "power-of-d"],
         "-b": ["gss", "wf", "sanchez", "jsq", "power-of-d", "spillback"], "--model": ["measured", "emulated"],
         "--info": ["exact", "periodic", "gossip", "monitored", "scatter-4.3", "neighbour", "scatter-old"],
         "--param": ["min_chunk=1", "min_chunk=0", "size=3", "first=5", "last=1", "k=2", "mu=1", "sigma=0",
                     "d=2", "probe=1", "weights=1", "c0=1", "h=0.1", "alpha=1e30"],
         "-p": ["min_chunk=2", "size=1e9"], "--plot": ["a.png", "dir/a.png", "a.pdf", "nodir/a.png"],
         "--out": ["o", "dir"], "-j": ["1", "2"], "--batch": ["1", "auto", "3"],
         "--executor": ["local", "dask", "mpi", "serial"], "--scheduler": ["tcp://127.0.0.1:1"]}


def mostly(good, other):
    """*good* three times in four, else *other*."""
    return st.integers(0, 3).flatmap(lambda k: good if k else other)


def flag_pairs(flags: list[str], max_size: int, small=lambda v: v):
    """Up to *max_size* (flag, value) pairs: a value the flag takes three times in four."""
    def value(flag):
        return mostly(st.sampled_from(VALID.get(flag, ["1"])), FLAG_TEXT).map(small)
    return st.lists(st.sampled_from(flags).flatmap(lambda f: st.tuples(st.just(f), value(f))), max_size=max_size)


def _small(value: str) -> str:
    """A valid size is run: one from 61 to 10**9 (within every limit) is cut to 40 (a million jobs is a
    legitimately long run); beyond 10**9 it is kept, for the limits to refuse."""
    try:
        v = int(value)
    except ValueError:
        return value
    return "40" if 60 < v <= 10**9 else value


OWN_FLAGS = {"m1": ["--workers", "--tasks", "-P", "-N", "--seed"], "m2": ["--workers", "--tasks", "-P", "-N", "--seed"],
             "supermarket": ["--servers", "--load", "--choices", "--jobs", "--seed"]}


@st.composite
def bench_argv(draw):
    """``bench MODEL`` with up to five flags, mostly the model's own with values they take."""
    model = draw(mostly(st.sampled_from(sorted(OWN_FLAGS)), FLAG_TEXT))
    flags = draw(flag_pairs(OWN_FLAGS.get(model, BENCH_FLAGS), 5, _small) if draw(mostly(st.just(True), st.just(False)))
                 else flag_pairs(BENCH_FLAGS, 5, _small))
    switches = draw(st.lists(st.sampled_from(["--replace", "--json"]), max_size=2, unique=True))
    return ["bench", model] + [x for pair in flags for x in pair] + switches


@settings(FUZZ, max_examples=examples(1500))
@given(argv=bench_argv())
def test_bench_flags_give_one_line_or_a_table(capsys, argv):
    _cli_exits_0_or_2_with_one_line(capsys, argv)


SIMULATE_ALL = SIMULATE_FLAGS + ["--scheduler", "-j"]
REPLAY_ALL = {"replay": RECORDING_FLAGS["replay"] + ["-b", "-p"], "advise": RECORDING_FLAGS["advise"] + ["-b"]}


@pytest.fixture
def recordings_dir(recorded_dir):
    """recorded_dir with a job stream's trace too (simulated: replay takes it as a cluster recording)."""
    from dlbkit import Stream

    dlbkit.simulate(Platform([Node(f"n{i}", speed=1 + i) for i in range(3)]), Stream(rates=0.5, jobs=30), "jsq",
                    seed=1).save(recorded_dir / "stream.json")
    return recorded_dir


def _recording_argv(data, command):
    flags = data.draw(flag_pairs(REPLAY_ALL[command], 4))
    trace = data.draw(mostly(st.sampled_from(["real.json", "sim.json", "stream.json"]),
                             st.sampled_from(["g.json", "p.toml", "nope.json", "dir", ""])))
    return [command, trace] + [x for pair in flags for x in pair] + data.draw(
        st.lists(st.just("--json"), max_size=1))


@settings(FUZZ, max_examples=examples(1000))
@given(command=st.sampled_from(sorted(REPLAY_ALL)), data=st.data())
def test_replay_and_advise_flags_give_exactly_one_line(recordings_dir, capsys, command, data):
    _cli_exits_0_or_2_with_one_line(capsys, _recording_argv(data, command))


@st.composite
def simulate_argv(draw):
    """``simulate TARGET`` with up to three flags (``--out o`` unless drawn)."""
    target = draw(mostly(st.just("exp.toml"), st.sampled_from(["p.toml", "g.json", "nope.toml", "dir", ""])))
    flags = draw(flag_pairs(SIMULATE_ALL, 3))
    argv = ["simulate", target] + draw(st.sampled_from([[], ["--progress"], ["--no-progress"]]))
    argv += [x for pair in flags for x in pair]
    return argv if "--out" in argv else argv + ["--out", "o"]


@settings(FUZZ, max_examples=examples(200))
@given(argv=simulate_argv())
def test_simulate_flags_give_exactly_one_line(cli_dir, capsys, argv):
    (cli_dir / "exp.toml").write_text(TINY)
    _cli_exits_0_or_2_with_one_line(capsys, argv)
