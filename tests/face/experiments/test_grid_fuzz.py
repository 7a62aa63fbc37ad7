"""Fuzzing ``[grid]`` parameter sweeps: the experiments of
:mod:`face/experiments/test_accepted_input_fuzz` (every family, already small) and the tiny divisible one, given a ``[grid]`` of one
to three keys. Keys are the experiment's own dotted paths (``workload.items``,
``platform.nodes[1].speed``, ``engine.info.period``, ...), the same path spelled twice
(``nodes[01]``) or inside another key's table, and paths that are wrong (unknown names, an index past
a list, bad syntax, roots that cannot be swept, ``info.*`` beside a balancer's own ``info``). Values
are lists of edge values of the right kind (:data:`face/experiments/test_accepted_input_fuzz.EDGE`, known names), weird values
(:data:`face/experiments/test_bad_input_fuzz.WEIRD`), a value twice, an empty list, no list, and long lists whose product
passes the limits. Each experiment is loaded as drawn (under a deadline), and one the loader accepts
is RUN as :func:`face/experiments/test_accepted_input_fuzz.load_and_run` runs any accepted mutation (sizes in the grid's values
capped as :func:`face/experiments/test_accepted_input_fuzz.shrink` caps the tables): a ConfigError in one line, or finite
results; never a ConfigError the loader should have given, another exception or a hang. A few
accepted sweeps also go through ``dlbkit simulate EXP`` and :func:`dlbkit.run_experiment`, whose
results.csv must have one row per run key.

Derandomized; the default run takes a few seconds, the full tier runs it at its full count. Below, one
regression test per defect the fuzzing found.
"""

import copy
import csv
import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.face.experiments import load_experiment
from dlbkit.face.experiments.spec import MAX_POINTS

from support.fuzz import FUZZ, deadline, to_toml
from support.fuzz_grid import BASES, capped, gridded
from support.fuzz_runs import (
    _load,
    load_and_run,
    workdir,  # noqa: F401 (fixtures)
)
from support.profiles import examples


def grid_runs(d: dict, workdir) -> str:
    lengths = [len(v) for v in d["grid"].values() if isinstance(v, list)]
    if len(lengths) == len(d["grid"]) and 2_000 < math.prod(lengths) <= MAX_POINTS:
        return "long: not loaded"  # seconds to a minute of checks, legitimately (the limit: a regression below)
    if _load(d, workdir) is None:  # as drawn: the loader must refuse or bound it, in one line
        return "rejected"
    return load_and_run(capped(d), workdir)


@settings(FUZZ, max_examples=examples(1500))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(data=st.data(), name=st.sampled_from(sorted(BASES)))
def test_grid_sweeps_are_refused_in_one_line_or_run_to_a_finite_result(data, name, workdir):
    event(grid_runs(data.draw(gridded(BASES[name])), workdir))


def _sweep_keys_once(d: dict, workdir, tmp_path, capsys, via: str):
    """An accepted sweep through the CLI or run_experiment: exit 0 (or one line and 2), and one row per
    run key in results.csv (a key twice is a point run twice)."""
    d = capped(d)
    d["repetitions"] = 1
    exp = _load(d, workdir)
    if exp is None or exp.n_runs > 12:
        event("refused or long")
        return
    event("swept")
    path = workdir / "experiments" / "fuzz.toml"
    out = tmp_path / "out"
    with deadline(60):
        if via == "cli":
            code = main(["simulate", str(path), "--out", str(out), "--no-progress"])
            err = capsys.readouterr().err
            assert code == 0 and "Traceback" not in err, err
        else:
            dlbkit.run_experiment(exp, out)
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    keys = [(r["label"], r["point"], r["repetition"]) for r in rows]
    assert len(keys) == len(set(keys)) == exp.n_runs, keys


@settings(FUZZ, max_examples=examples(25))
@given(data=st.data(), name=st.sampled_from(["tiny", "graph_inline", "streams_hetero"]),
       via=st.sampled_from(["cli", "api"]))
def test_an_accepted_grid_sweep_writes_one_row_per_run_key(data, name, via, workdir, tmp_path_factory, capsys):
    _sweep_keys_once(data.draw(gridded(BASES[name], mild=True)), workdir, tmp_path_factory.mktemp("grid"), capsys, via)


# --- regressions --------------------------------------------------------------------------------------
def _tiny(grid: dict) -> dict:
    d = copy.deepcopy(BASES["tiny"])
    d["balancers"] = d["balancers"][:1]
    d["grid"] = grid
    return d


def _refused(d: dict, workdir) -> ConfigError:
    path = workdir / "experiments" / "fuzz.toml"
    path.write_text(to_toml(d))
    with pytest.raises(ConfigError) as e:
        load_experiment(path)
    return e.value


@pytest.mark.parametrize("values, j, shown", [([10, 10], 1, "grid.workload.items[0]"),
                                              ([10, 20, 10.0], 2, "grid.workload.items[0]")])
def test_a_grid_value_given_twice_is_refused(values, j, shown, workdir):
    """``"workload.items" = [10, 10]`` ran the point twice under one run key: results.csv had two
    rows (label, point, repetition) alike and the summary counted two repetitions of a
    one-repetition sweep. Now the second is refused, naming the first."""
    e = _refused(_tiny({"workload.items": values}), workdir)
    assert e.field == f"grid.workload.items[{j}]" and shown in e.allowed and "not given before" in e.allowed
    e = _refused(_tiny({"platform.nodes[1].speed": [1.0, 2.0, 1e0]}), workdir)
    assert e.field == "grid.platform.nodes[1].speed[2]"
    e = _refused(_tiny({"workload.cost": [{"dist": "uniform", "low": 1, "high": 2},
                                          {"high": 2, "low": 1, "dist": "uniform"}]}), workdir)
    assert e.field == "grid.workload.cost[1]"
    assert _load(_tiny({"platform.nodes[1].speed": [1, 2.0], "workload.items": [10, 20]}), workdir).n_runs == 4


@pytest.mark.parametrize("first, second", [("platform.nodes[1].speed", "platform.nodes[01].speed"),
                                           ("workload.cost", "workload.cost.high"),
                                           ("workload.cost.high", "workload.cost"),
                                           ("platform.nodes", "platform.nodes[1].speed")])
def test_two_grid_keys_setting_one_value_are_refused(first, second, workdir):
    """``nodes[1].speed`` and ``nodes[01].speed`` set the same speed: the later key won, and results.csv
    named a point with both values. Same when one key sets the table holding the other's value."""
    vals = {"platform.nodes[1].speed": [1.0, 2.0], "platform.nodes[01].speed": [3.0],
            "workload.cost": [{"dist": "uniform", "low": 1, "high": 2}], "workload.cost.high": [2.0, 3.0],
            "platform.nodes": [[{"name": "m", "speed": 1.0}, {"name": "a", "speed": 1.0}]]}
    e = _refused(_tiny({first: vals[first], second: vals[second]}), workdir)
    assert e.field == f"grid.{second}" and f"grid.{first} sets it" in e.allowed


def test_a_grid_of_more_points_than_the_limit_is_refused_before_any_is_built(workdir):
    """1000 × 1000 values (10**6 runs with one balancer, within the runs limit) were all built and
    checked on load: minutes and gigabytes before the first run (90 000 points of the tiny sweep
    took 13.6 s and 0.4 GB here). Now a product beyond 100 000 points is refused at once."""
    d = _tiny({"workload.items": list(range(1, 1001)), "engine.master_overhead": [i / 1000 for i in range(1000)]})
    with deadline(10):  # a hang guard, not a timing figure: it took minutes
        e = _refused(d, workdir)
    assert e.field.startswith("grid points") and e.value == 10**6 and "at most 100,000" in e.allowed
    d["grid"] = {"workload.items": list(range(1, 101)), "engine.master_overhead": [i / 1000 for i in range(100)]}
    assert _load(d, workdir).n_runs == 10_000
