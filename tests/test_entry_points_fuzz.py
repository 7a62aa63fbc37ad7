"""Fuzzing the entry points the other fuzzers do not reach:

- ``dlbkit schedule GRAPH``: every mapping balancer (the search mappers too: ``milp`` under a time
  limit of at most 2 s, ``annealing`` and ``tabu`` on graphs of at most 12 tasks), drawn parameter
  values (:func:`face/experiments/test_accepted_input_fuzz.param_values`), ``--nodes`` or ``--platform``, the cost models,
  ``--contention``, ``--gantt``, ``--json``, on small valid ``.json``/``.stg``/``.adg`` graph files
  and on those files mutated (bytes inserted, deleted, repeated). The rule of the other CLI
  fuzzers: exit 0 with nothing on stderr (no RuntimeWarning either) and, with ``--json``, a finite
  makespan; or exit 2 with exactly one ``dlbkit: error:`` line; never a traceback or a hang.
- :func:`dlbkit.run_spmd` (local worker processes, at most 3, tiny domains): a valid random case
  equals the serial loop bit for bit; a bad argument is a ConfigError naming it, raised before any
  process starts (none is left behind).
- :func:`dlbkit.families.tree.sim.superstep.simulate_superstep` (the BSP task-tree engine, reached by ``dlbkit reproduce
  haron1998``): random valid small inputs execute every task once with a finite total; bad inputs
  are a ConfigError naming the argument.

Derandomized; the default examples run in a few seconds each, the full tier runs them at their full counts.
Below, one regression test per defect the fuzzing found.
"""

import json
import math
import multiprocessing as mp
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import FlatTasks
from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.model.platform import MAX_NODES
from dlbkit.families.tree.sim.superstep import simulate_superstep

from support import HANG_S
from support.fuzz import FLAG_TEXT, FUZZ, WEIRD, deadline
from support.fuzz_entries import (
    _schedule_is_a_plan_or_one_line,
    _superstep_runs,
    graphs,  # noqa: F401 (fixtures)
    mutated_text,
    superstep_case,
)
from support.fuzz_runs import param_values
from support.profiles import examples

MAPPERS = sorted(n for n, c in dlbkit.REGISTRY.items() if c.kind == "mapping")
SEARCH_CAP = {"time_limit": 2.0, "moves": 200, "improving": 200, "patience": 10, "max_stages": 20,
              "candidates": 20, "perturbations": 20, "tenure": 20, "max_swaps": 50, "capacity": 8}


GRAPHS = ["t10.json", "l10.json", "l10.adg", "s.stg"]


def _param_text(name: str, key: str, value) -> str:
    """``key=value`` as the CLI reads it (JSON when it can be); the search mappers' sizes capped."""
    if key in SEARCH_CAP and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        cap = SEARCH_CAP[key]
        value = min(value, cap) if key != "time_limit" else min(max(value, 0.5), cap)
        value = int(value) if isinstance(cap, int) else value
    try:
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        text = str(value)
    return f"{key}={text}"


def often(good, other):
    """*good* seven times in eight, else *other* (good first: Hypothesis starts from and shrinks to it);
    several flags are drawn, so about half the commands are valid."""
    return st.integers(0, 7).flatmap(lambda k: other if k == 7 else good)


@st.composite
def schedule_argv(draw, graphs):
    """``schedule GRAPH`` with a mapping balancer, its parameters and the other flags, mostly valid."""
    name = draw(often(st.sampled_from(GRAPHS), st.sampled_from(["nope.json", "dir", "p.toml", "x.txt", ""])))
    if name in GRAPHS and draw(st.integers(0, 3)) == 0:
        text = draw(mutated_text((graphs / name).read_text()))
        name = "m" + name[name.rindex("."):]
        (graphs / name).write_bytes(text.encode("utf-8", "surrogateescape"))
    argv = ["schedule", str(graphs / name) if name else name]
    balancer = draw(often(st.sampled_from(MAPPERS), FLAG_TEXT))
    argv += ["--balancer", balancer]
    keys = dlbkit.REGISTRY[balancer].param_names() if balancer in MAPPERS else []
    for key in draw(st.lists(st.sampled_from(keys), max_size=3, unique=True)) if keys else []:
        argv += ["--param", _param_text(balancer, key, draw(param_values(balancer, key)))]
    if balancer == "milp" and not any(a.startswith("time_limit=") for a in argv):
        argv += ["--param", "time_limit=2"]  # the default is a long HiGHS run on a hard case
    argv += draw(often(st.sampled_from([["--nodes", "3"], ["--nodes", "1"], ["--nodes", "2"], ["--nodes", "3"], ["--nodes", "4"],
                                         ["--platform", str(graphs / "p.toml")]]),
                        st.sampled_from([["--nodes", "0"], ["--nodes", "-1"], ["--nodes", "100000"], ["--nodes", "x"],
                                         ["--platform", str(graphs / "s.stg")], ["--platform", "nope.toml"],
                                         ["--nodes", "2", "--platform", str(graphs / "p.toml")], []])))
    if draw(st.integers(0, 3)) == 0:
        argv += ["--cost-model", draw(often(st.sampled_from(["standard", "thesis"]), FLAG_TEXT))]
    if draw(st.integers(0, 4)) == 0:
        argv += ["--contention"] + draw(st.sampled_from([[], ["port"], ["link"]]))
    if draw(st.integers(0, 4)) == 0:
        argv += ["--seed", draw(st.sampled_from(["0", "1", "7", str(2**64), "-1", "x"]))]
    if draw(st.integers(0, 6)) == 0:
        argv += ["--gantt", str(graphs / draw(st.sampled_from(["g.png", "g.svg", "nodir/g.png", "g.txt", "dir"])))]
    if draw(st.booleans()):
        argv += ["--json"]
    return argv


@settings(FUZZ, max_examples=examples(1000))
@given(data=st.data())
def test_schedule_gives_a_plan_or_one_line(graphs, capsys, data):
    _schedule_is_a_plan_or_one_line(capsys, data.draw(schedule_argv(graphs)))


BIG = {("load", ".json"): '{"tasks": [{"id": "a", "load": 1e308}, {"id": "b", "load": 1e308}], '
                         '"edges": [{"from": "a", "to": "b", "data": 0}]}',
       ("data", ".json"): '{"tasks": [{"id": "a", "load": 0}, {"id": "b", "load": 0}], '
                         '"edges": [{"from": "a", "to": "b", "data": 1e308}]}',
       ("load", ".adg"): "0 1 0 1e308 0 (1,0)\n1 3 1 1e308 0\n",
       ("data", ".adg"): "0 1 0 0 0 (1,1e308)\n1 3 1 0 0\n"}


@pytest.mark.parametrize("what, suffix", sorted(BIG))
def test_a_graph_load_or_data_beyond_the_magnitude_limit_is_one_line_naming_the_file(graphs, capsys, what, suffix):
    """A load or an edge's data of 1e308 was accepted: every path sum overflowed (heft's makespan inf
    with a RuntimeWarning on stderr; metis a NaN or OverflowError traceback). Now the file's field is
    refused with the 1e30 limit on magnitudes every other dlbkit number has."""
    path = graphs / f"big_{what}{suffix}"
    path.write_text(BIG[what, suffix])
    field = f"{path}.tasks[" if what == "load" else f"{path}.edges[0].data"
    for balancer in ("heft", "metis"):
        assert main(["schedule", str(path), "--nodes", "2", "-b", balancer, "--json"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"dlbkit: error: {field}"), err
        assert "[0, 1e30]" in err, err
    path.write_text(BIG[what, suffix].replace("1e308", "1e30"))  # the limit itself is allowed
    assert main(["schedule", str(path), "--nodes", "2", "-b", "metis", "--json"]) == 0
    assert math.isfinite(json.loads(capsys.readouterr().out)["makespan"])


@pytest.mark.parametrize("nodes, start", [("2", "dlbkit: error: costs of {g} must be a cost table with one column per node"),
                                          ("100000", "dlbkit: error: --nodes must be an integer in [1, 8,192]")])
def test_schedule_names_the_flag_and_the_graph_file(graphs, capsys, nodes, start):
    """``--nodes 2`` on a 3-column cost table named a bare ``costs``, ``--nodes 100000`` a bare ``nodes``:
    neither the file nor the flag. Now the line names both as the command line has them."""
    g = str(graphs / "t10.json")
    assert main(["schedule", g, "--nodes", nodes]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(start.format(g=g)), err


def test_schedule_gantt_leaves_no_figure_open(graphs, capsys):
    """``schedule --gantt`` left its figure open in pyplot: main() called in-process 21 times (as the
    fuzzer does) gave matplotlib's "more than 20 figures" RuntimeWarning, and held every chart."""
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    main(["schedule", str(graphs / "l10.json"), "--nodes", "2", "--gantt", str(graphs / "g.png")])
    capsys.readouterr()
    assert (graphs / "g.png").stat().st_size > 0 and len(plt.get_fignums()) == before


# --- run_spmd (local processes) -----------------------------------------------------------------------
def smooth(u):
    return 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]


def smooth2(u):
    return (u[:-4] + u[1:-3] + u[2:-2] + u[3:-1] + u[4:]) / 5.0


def serial(step, domain, iterations, halo):
    u = domain.copy()
    for _ in range(iterations):
        u[halo:-halo] = step(u)
    return u


def _no_children():
    assert mp.active_children() == [], mp.active_children()


SPMD_CASE = dict(rows=st.integers(4, 14), cols=st.sampled_from([None, 1, 3]), iterations=st.integers(0, 4),
                 workers=st.integers(1, 3), halo=st.sampled_from([1, 2]), window=st.integers(1, 3),
                 balancer=st.sampled_from(["dlah", "homogeneous-diffusion", "processor-only", "optimal-chain", None]),
                 seed=st.integers(0, 3), dtype=st.sampled_from(["float64", "float32", "int64"]))


@settings(FUZZ, max_examples=examples(150))
@given(**SPMD_CASE)
def test_run_spmd_equals_the_serial_loop(rows, cols, iterations, workers, halo, window, balancer, seed, dtype):
    _spmd_equals_serial(rows, cols, iterations, workers, halo, window, balancer, seed, dtype)


def _spmd_equals_serial(rows, cols, iterations, workers, halo, window, balancer, seed, dtype):
    rows = max(rows, 2 * halo + workers * halo)  # every worker can keep halo rows
    shape = (rows,) if cols is None else (rows, cols)
    domain = (np.random.default_rng(seed).random(shape) * 100).astype(dtype)
    step = smooth if halo == 1 else smooth2
    try:
        with deadline(HANG_S, wall=True):  # real worker processes
            r = dlbkit.run_spmd(step, domain, iterations=iterations, workers=workers, halo=halo, window=window,
                                balancer=balancer, seed=seed, progress=False)
    except ConfigError as e:  # a combination the runtime refuses must say so before any process
        _no_children()
        pytest.fail(f"valid case refused: {e}")
    assert np.array_equal(r.domain, serial(step, domain, iterations, halo))
    assert sum(r.rows) == rows - 2 * halo and len(r.rows) == workers  # every interior row owned once
    _no_children()


SPMD_BAD = {"iterations": [-1, 1.5, "3", None, math.nan, True], "workers": [0, -1, 1.5, "2", True],
            "halo": [0, -1, 1.5, "1", 10**6], "window": [0, -1, 0.5, "2", math.inf], "seed": [-1, 1.5, "x"],
            "balancer": ["nope", 3, "gss"], "backend": ["nope", 3], "params": ["x", [1], {"zz": 1}],
            "bandwidth": [0, -1, math.nan, "x"], "progress": ["yes", 2], "start_method": ["nope", 3]}


@settings(FUZZ, max_examples=examples(400))
@given(data=st.data(), key=st.sampled_from(sorted(SPMD_BAD)))
def test_run_spmd_refuses_a_bad_argument_by_name_before_any_process(data, key):
    _spmd_bad_argument(data, key)


def _spmd_bad_argument(data, key):
    value = data.draw(st.one_of(st.sampled_from(SPMD_BAD[key]), WEIRD))
    if key == "iterations" and isinstance(value, int) and not isinstance(value, bool) and value > 50:
        value = 50  # a valid count: 10**5 iterations are a legitimately long run, not a defect
    kwargs = {"iterations": 2, "workers": 2, "progress": False}
    kwargs[key] = value
    try:
        with deadline(HANG_S, wall=True):  # it may start worker processes
            r = dlbkit.run_spmd(smooth, np.arange(10.0), **kwargs)
    except ConfigError as e:
        # named as the field, or in what is allowed (a halo too wide for the domain names both)
        assert key in e.field or key in e.allowed, (key, value, e.field, str(e))
        assert "\n" not in str(e)
    else:  # a value the argument takes: the serial result
        assert np.array_equal(r.domain, serial(smooth, np.arange(10.0), kwargs["iterations"], kwargs.get("halo", 1)))
    _no_children()


@pytest.mark.parametrize("entry", ["spmd", "map"])
def test_an_emulated_platform_file_that_is_missing_is_named_as_emulate(entry, tmp_path):
    """``emulate="nope.toml"`` was a ConfigError naming ``file`` (Platform.from_toml's field), not the
    argument; now it names ``emulate``, before any process."""
    call = {"spmd": lambda: dlbkit.run_spmd(smooth, np.arange(10.0), iterations=1, emulate=str(tmp_path / "nope.toml")),
            "map": lambda: dlbkit.run_map(abs, range(4), emulate=str(tmp_path / "nope.toml"))}[entry]
    with deadline(30), pytest.raises(ConfigError) as e:
        call()
    assert e.value.field == "emulate" and "an existing TOML file" in str(e.value)
    _no_children()


@pytest.mark.parametrize("domain", [np.array(["a"] * 8), np.array([b"x"] * 8), np.zeros(8, dtype="datetime64[s]"),
                                    np.zeros(8, dtype=[("a", float)])])
def test_a_domain_that_is_not_numbers_is_refused_before_any_process(domain):
    """A domain of strings (or bytes, dates, records) passed the check (only dtype object was refused)
    and failed in the workers, as a TaskError from the user's step; now it is a ConfigError naming
    ``domain`` up front."""
    with deadline(30), pytest.raises(ConfigError) as e:
        dlbkit.run_spmd(smooth, domain, iterations=1, workers=2, progress=False)
    assert e.value.field == "domain" and "a numeric array" in str(e.value)
    _no_children()


@settings(FUZZ, max_examples=examples(1500))
@given(case=superstep_case())
def test_superstep_runs_every_task_once_to_a_finite_total(case):
    _superstep_runs(case)


SUPERSTEP_BAD = {"p": [0, -1, 1.5, "4", True, None], "topology": ["nope", 3, None], "interval": [-1, math.nan, "2", True],
                 "balancer": ["nope", 3, "gss", "heft"], "workload": [None, 3, "x", [1.0, 2.0]], "seed": [-1, 1.5, "x"]}


@settings(FUZZ, max_examples=examples(60))
@given(data=st.data(), key=st.sampled_from(sorted(SUPERSTEP_BAD)))
def test_superstep_refuses_a_bad_argument_by_name(data, key):
    value = data.draw(st.one_of(st.sampled_from(SUPERSTEP_BAD[key]), WEIRD))
    if key == "p" and isinstance(value, int) and 64 < value <= MAX_NODES:
        value = 64  # a valid processor count: 10**5 processors take seconds per iteration, not a defect
    kwargs = {"workload": FlatTasks([1.0, 2.0, 3.0]), "balancer": "gdem", "p": 4, "topology": "torus",
              "interval": None, "seed": 0}
    kwargs[key] = value
    w, b = kwargs.pop("workload"), kwargs.pop("balancer")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with deadline(20):
                r = simulate_superstep(w, b, **kwargs)
    except ConfigError as e:
        assert e.field and "\n" not in str(e)
        if key in ("p", "topology", "interval", "workload", "seed"):
            assert key in e.field, (key, value, e.field, str(e))
        return
    assert math.isfinite(r.total) and r.nodes == 3, (key, value)


def test_superstep_refuses_more_processors_than_a_platform_may_have():
    """p = 10**18 hung (the torus's sides were searched for among all its divisors); now it is refused
    with the platform's limit."""
    with deadline(5), pytest.raises(ConfigError) as e:
        simulate_superstep(FlatTasks([1.0]), "gdem", p=10**18)
    assert e.value.field == "p" and f"at most {MAX_NODES:,}" in str(e.value)
    assert simulate_superstep(FlatTasks([1.0, 2.0]), "gdem", p=12).nodes == 2
