"""The sixth family (``tests/sixth``, *bags*) served by the house: ``dlbkit.simulate``, an experiment file
through the command line, ``dlbkit families`` and ``dlbkit balancers``, the report and a real local run, with
no edit of a shared module for the family itself. The shared code's gaps it found are tested here too."""

from __future__ import annotations

import csv
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

# the model only: importing the balancers or the declaration registers them, which must wait for the fixture
from sixth.model.workload import Bag
from support import REPO, TESTS
from support.profiles import examples

import dlbkit
from dlbkit import ConfigError, Network, Node, Platform, families
from dlbkit.balancers.registry import REGISTRY, register
from dlbkit.families import registry

DECLARATION = "sixth.face.family"  #: the module whose import registers the family (the CLI's --import)
EXPERIMENT = """\
name = "bags-proof"
repetitions = 2
[platform]
nodes = [{name = "a", speed = 1.0}, {name = "b", speed = 2.0}]
[workload]
kind = "bags"
sizes = [4, 2, 2, 1]
[[balancers]]
name = "bag-round-robin"
[[balancers]]
name = "bag-least-loaded"
"""


@pytest.fixture(scope="module", autouse=True)
def bags():
    """The family registered for this module's tests and taken out after them: the house's tests that read the
    registries describe the shipped families (README's balancer table, one core seeding layout per family)."""
    import importlib
    declared = importlib.import_module(DECLARATION)  # the first import registers it; after a teardown, again
    if "bags" not in families.FAMILIES:  # (by its own module: families.declared_in names it)
        declared = importlib.reload(declared)
    from sixth.balancers import BagLeastLoaded, BagRoundRobin
    mine = (BagLeastLoaded, BagRoundRobin)
    for cls in mine:
        register(cls)
    yield declared.FAMILY
    del families.FAMILIES["bags"]
    registry._DECLARED_IN.pop("bags", None)
    for cls in mine:
        del REGISTRY[cls.name]


def two_nodes() -> Platform:
    return Platform([Node("a", speed=1.0), Node("b", speed=2.0)], Network(latency=0.0, bandwidth=1e9))


def python(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` in a fresh interpreter that finds the family (``tests/`` on the path) and this checkout."""
    path = os.pathsep.join([TESTS, str(REPO / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, *args], check=False, capture_output=True, text=True, timeout=300,
                          cwd=cwd or REPO, env={**os.environ, "PYTHONPATH": path, "MPLBACKEND": "Agg"})


def dlbkit_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return python("-m", "dlbkit", *args, cwd=cwd)


def house_tests(*args: str) -> subprocess.CompletedProcess:
    """The house's own tests ARGS, with the family loaded before they collect (``-p``: a plugin module)."""
    return python("-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-p", DECLARATION, *args)


# --- simulate: the numbers the rules imply, by hand ------------------------------------------------------
def test_least_loaded_places_each_task_where_it_ends_first():
    """Sizes 4, 2, 2, 1 on speeds 1 and 2: 4 → b (ends at 2, not 4), 2 → a (2 < 3), 2 → b (3 < 4), 1 → a
    (3 < 3.5); both nodes end at 3 = 9 work units / 3 units per second, the bound."""
    r = dlbkit.simulate(two_nodes(), Bag([4, 2, 2, 1]), "bag-least-loaded")
    assert r.trace.family == "bags" and r.trace.meta["placement"] == [1, 0, 1, 0]
    assert r.table()["t_end"] == [2.0, 2.0, 3.0, 3.0]
    assert (r.makespan, r.metrics["lower_bound"], r.metrics["efficiency"]) == (3.0, 3.0, 1.0)
    assert r.metrics["finish_spread"] == 0.0 and r.metrics["messages"] == 4.0


def test_round_robin_ignores_the_loads():
    """4 and 2 on a (6 s), 2 and 1 on b (1.5 s): makespan 6, spread 4.5."""
    r = dlbkit.simulate(two_nodes(), Bag([4, 2, 2, 1]), "bag-round-robin")
    assert r.trace.meta["placement"] == [0, 1, 0, 1]
    assert (r.makespan, r.metrics["finish_spread"], r.metrics["efficiency"]) == (6.0, 4.5, 0.5)


def test_a_completion_at_a_placements_instant_is_seen_by_it():
    """One placement a second: at t = 2 task 0 ends on b as task 2 is placed (b: 2/2 = 1 s, not a's 4), and at
    t = 3 both nodes end as task 3 is placed (b: 0.5 s): completions are URGENT on the kernel."""
    r = dlbkit.simulate(two_nodes(), Bag([4, 2, 2, 1]), "bag-least-loaded", dispatch_time=1.0)
    assert r.trace.meta["placement"] == [1, 0, 1, 1]
    assert r.table()["t_start"] == [0.0, 1.0, 2.0, 3.0]
    assert (r.makespan, r.metrics["finish_spread"]) == (3.5, 0.5)


def test_the_same_seed_gives_the_same_trace():
    def run(seed):
        return dlbkit.simulate(two_nodes(), Bag([3, 1, 4, 1, 5, 9, 2, 6], jitter=0.5), "bag-least-loaded",
                               seed=seed).table()
    assert run(7) == run(7) and run(7) != run(8)


@pytest.mark.parametrize("make, field", [(lambda: Bag([]), "sizes"), (lambda: Bag([1, -2]), r"sizes\[1\]"),
                                         (lambda: Bag([1], jitter=1.0), "jitter"),
                                         (lambda: Bag.from_dict({"kind": "bags", "sizes": [1, "x"]}),
                                          r"workload\.sizes\[1\]"),
                                         (lambda: Bag.from_dict({"kind": "bags", "sise": [1]}), r"workload\.sise")])
def test_a_bad_workload_is_a_config_error_naming_the_field(make, field):
    with pytest.raises(ConfigError, match=rf"^{field} "):
        make()


def test_an_answer_that_is_no_node_is_a_config_error_naming_the_rule():
    from sixth.balancers.base import BaggingBalancer

    class Off(BaggingBalancer):
        name = "bag-off-the-end"

        def pick(self, view):
            return view.n_nodes

    with pytest.raises(ConfigError, match=r"the answer of bag-off-the-end\.pick .* \[0, 1\]"):
        dlbkit.simulate(two_nodes(), Bag([1, 1]), Off())


@settings(max_examples=examples(60))
@given(sizes=st.lists(st.floats(0.01, 100.0), min_size=1, max_size=40), speeds=st.lists(st.sampled_from([0.5, 1.0, 3.0]),
                                                                                       min_size=1, max_size=5),
       balancer=st.sampled_from(["bag-least-loaded", "bag-round-robin"]), dispatch=st.sampled_from([0.0, 0.3]))
def test_every_task_runs_once_and_the_work_is_conserved(sizes, speeds, balancer, dispatch):
    p = Platform([Node(f"n{i}", speed=s) for i, s in enumerate(speeds)])
    tr = dlbkit.simulate(p, Bag(sizes), balancer, dispatch_time=dispatch).trace
    assert sorted(tr.first) == list(range(len(sizes))) and set(tr.count) == {1}
    done = sum((e - s) * speeds[n] for n, s, e in zip(tr.node, tr.t_start, tr.t_end))
    assert math.isclose(done, sum(sizes), rel_tol=1e-9) and math.isclose(tr.total_work, sum(sizes), rel_tol=1e-12)
    assert all(a <= s for a, s in zip(tr.t_ask, tr.t_start))


# --- the registry and the command line ----------------------------------------------------------------
def test_the_family_is_declared_as_the_house_declares_one(bags):
    assert families.get("bags") is bags and families.of(Bag([1])) is bags
    assert families.declared_in("bags") == DECLARATION and families.declared_in("divisible") is None
    assert bags.kinds == ("bagging",) and bags.engine.name == "dispatch"
    assert isinstance(bags.sample_view(), bags.view)
    for name in ("bag-least-loaded", "bag-round-robin"):
        REGISTRY[name]().start(bags.sample_view())


def test_dlbkit_balancers_lists_the_kind_after_the_import():
    done = dlbkit_cli("balancers", "--import", DECLARATION, "--kind", "bagging")
    assert done.returncode == 0, done.stderr
    assert "bag-least-loaded  [bagging]" in done.stdout and "bag-round-robin" in done.stdout


def test_dlbkit_families_lists_the_family_with_its_engine_and_metric():
    done = dlbkit_cli("families", "--import", DECLARATION)
    assert done.returncode == 0, done.stderr
    out = done.stdout[done.stdout.index("\nbags "):]
    assert "sixth.sim.engine.simulate_bags" in out and "finish_spread" in out and "stack" in out


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """``dlbkit simulate bags.toml --import sixth.face.family --out out``, once for the tests below."""
    here = tmp_path_factory.mktemp("bags")
    (here / "bags.toml").write_text(EXPERIMENT)
    done = dlbkit_cli("simulate", "bags.toml", "--import", DECLARATION, "--out", "out", cwd=here)
    assert done.returncode == 0, done.stderr
    return here / "out"


def _summary(out: Path) -> dict[tuple[str, str], float]:
    with open(out / "summary.csv", newline="") as f:
        return {(r["balancer"], r["metric"]): float(r["mean"]) for r in csv.DictReader(f)}


def test_an_experiment_file_runs_through_the_cli(swept):
    rows = _summary(swept)
    assert rows[("bag-least-loaded", "makespan")] == 3.0 and rows[("bag-round-robin", "makespan")] == 6.0
    report = (swept / "report.html").read_text()
    assert "tasks stacked in the order it ran them (busy seconds)." in report  # the family's caption of its plot
    for name in ("bag-least-loaded", "bag-round-robin"):
        assert f"stack_{name}.png" in report and (swept / f"stack_{name}.png").exists()
        assert (swept / f"gantt_{name}.png").exists()


def test_the_familys_own_metric_reaches_summary_csv_and_the_report(swept):
    assert _summary(swept)[("bag-round-robin", "finish_spread")] == 4.5
    assert "finish_spread" in (swept / "report.html").read_text()


def test_its_own_metric_is_a_column_of_its_experiments_only():
    """results.csv's columns for a shipped family's experiment are the same whether or not this family is
    registered (a resumed sweep compares them); its own experiments add its own metric."""
    from dlbkit.face.experiments.runner import metric_columns

    shipped = metric_columns(families.get("divisible"))
    assert "finish_spread" not in shipped and "finish_spread" in metric_columns(families.get("bags"))
    assert metric_columns(families.get("bags")) == (*shipped, "finish_spread")
    assert "finish_spread" in metric_columns()  # every registered family's: to tell metric columns from grid keys


def test_a_family_registered_after_the_face_was_imported_gets_its_figures(tmp_path):
    """A script that imports the experiments first (or a family registered later) still has its own plots saved."""
    code = ("import sys; from dlbkit.face.experiments import load_experiment, run_sweep, save_all, summarise; "
            f"import {DECLARATION}; sweep = run_sweep(load_experiment('bags.toml'), 'out'); "
            "w = save_all('out', summarise(sweep.rows), sweep.traces, family='bags'); print(len(w['stack']))")
    (tmp_path / "bags.toml").write_text(EXPERIMENT)
    done = python("-c", code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2"]


def test_a_sweep_on_spawned_workers_finds_the_family(tmp_path):
    """A spawned worker (an MPI or Dask executor's, a forkserver pool's) inherits no registry: it must import the
    module that declared the family, as it imports the module of a balancer of the user's own."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from dlbkit.face.experiments import load_experiment, run_sweep
    (tmp_path / "bags.toml").write_text(EXPERIMENT)
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
        sweep = run_sweep(load_experiment(tmp_path / "bags.toml"), tmp_path / "out", executor=pool)
    assert [r["error"] for r in sweep.rows if r["status"] != "ok"] == []
    assert sorted(r["makespan"] for r in sweep.rows) == [3.0, 3.0, 6.0, 6.0]


def test_the_houses_balancer_contract_runs_over_the_kind():
    """The house's contract suite, run with the family loaded first (``-p``), starts its balancers on its sample view."""
    done = house_tests("tests/balancers/test_contract.py", "-k", "bag-")
    assert done.returncode == 0 and " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-3000:]


def test_the_houses_registry_tests_take_the_family():
    done = house_tests("tests/families/test_registry.py", "-k", "test_a_familys_declaration_is_consistent and bags")
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-3000:]



# --- a real run ----------------------------------------------------------------------------------------
def test_a_real_local_run_returns_every_tasks_result_once():
    from sixth.face.run import run_bags
    r = run_bags(abs, [-3, 1, -4, 1, -5, 9], sizes=[3, 1, 4, 1, 5, 9], workers=2)
    assert r.results == [3, 1, 4, 1, 5, 9]
    assert sorted(r.trace.first) == list(range(6)) and r.trace.family == "bags" and r.trace.source == "local"
    assert r.metrics["makespan"] > 0 and "finish_spread" in r.metrics


def test_a_real_run_is_reached_through_the_registry(bags):
    assert bags.run(abs, [-1, -2, 3], workers=2, balancer="bag-round-robin") == [1, 2, 3]


# --- dlbkit describe: the kinds of file a family declares ------------------------------------------------------
def _bag_file(path: Path):
    """A ``.bag`` file (one task size a line) described, or None for one that opens with ``#`` (not a bag)."""
    from dlbkit.model.description import Description, Fact

    text = path.read_text(encoding="utf-8")
    if text.startswith("#"):
        return None
    b = Bag([float(x) for x in text.split()])
    return Description(str(path), "bag of tasks", "sixth's reader",
                       (Fact("tasks", "tasks", b.n_tasks), Fact("total_size", "total size", sum(b.sizes), "work units")))


def test_a_family_that_declares_no_files_is_skipped_by_describe(bags, tmp_path, capsys):
    """bags declares no ``Family.files``: ``dlbkit describe`` of a .bag file is no kind it reads, the kinds it
    lists (the shipped ones) name no .bag, and the shipped kinds still work beside the family."""
    from dlbkit.face.cli import main

    assert bags.files == ()
    p = tmp_path / "four.bag"
    p.write_text("4\n2\n2\n1\n", encoding="utf-8")
    assert main(["describe", str(p)]) == 2
    err = capsys.readouterr().err
    assert "a file of a kind dlbkit reads" in err and err.count(".bag") == 1  # the file's own name only
    g = tmp_path / "g.json"
    g.write_text('{"tasks": [{"id": "a", "load": 2}]}', encoding="utf-8")
    assert main(["describe", str(g), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_work"] == 2.0


def test_describe_dispatches_to_the_files_a_family_declares(bags, tmp_path, capsys, monkeypatch):
    """The family declaring a kind (.bag) is what ``dlbkit describe`` calls, through the registry alone: sizes 4,
    2, 2, 1 are 4 tasks of 9 work units; a .bag its reader passes on (``#`` first) is no kind, and the error lists
    the family's kind with the shipped ones."""
    import dataclasses

    from dlbkit.face.cli import main
    from dlbkit.model.description import FileKind

    declared = dataclasses.replace(bags, files=(FileKind("bag of tasks", (".bag",), _bag_file),))
    monkeypatch.setitem(families.FAMILIES, "bags", declared)
    p = tmp_path / "four.BAG"  # a suffix matches in any case
    p.write_text("4\n2\n2\n1\n", encoding="utf-8")
    assert main(["describe", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["kind"], d["tasks"], d["total_size"], d["units"]) == ("bag of tasks", 4, 9.0, {"total_size": "work units"})
    assert main(["describe", str(p)]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == ["  tasks       4", "  total size  9 work units"]
    other = tmp_path / "notes.bag"
    other.write_text("# not a bag\n", encoding="utf-8")
    assert main(["describe", str(other)]) == 2
    err = capsys.readouterr().err
    assert "bag of tasks (.bag)" in err and "job stream (SWF log) (.swf)" in err
    assert main(["families"]) == 0
    assert "files:     bag of tasks (.bag)" in capsys.readouterr().out
