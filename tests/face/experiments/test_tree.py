"""Experiments over task trees: the spec accepts a tree workload with migration balancers and runs
it on the asynchronous engine; a family mixed up with the wrong balancers is a clear error."""

import pytest

from dlbkit import ConfigError
from dlbkit.face.experiments import Experiment, run_sweep
from dlbkit.families.tree.model.workload import TaskTree

TREE = """
name = "trees"
repetitions = 2
seed = 3
[platform]
nodes = [{name = "n", count = 9, speed = 1e6}]
network = {latency = 2e-5, bandwidth = 1e8, topology = "torus"}
[workload]
kind = "tree"
shape = "imbalance"
imbalance = 0.2
depth = 10
grain = 1000
[[balancers]]
name = "steal"
[[balancers]]
name = "random"
"""


def load(text: str = TREE) -> Experiment:
    import tomllib
    return Experiment.from_dict(tomllib.loads(text))


def test_a_tree_experiment_runs_every_task_once_and_records_moves(tmp_path):
    exp = load()
    assert isinstance(exp.workload, TaskTree) and exp.workload.kind == "imbalance"
    sweep = run_sweep(exp, tmp_path)
    assert [r["status"] for r in sweep.rows] == ["ok"] * 4
    nodes = {s.repetition: s.workload.count()[0] for s in exp.expand()}
    for (label, _), trace in sweep.traces.items():  # repetition 0
        assert trace.meta["tasks"] == nodes[0] == sum(trace.meta["expanded"])
    for r in sweep.rows:
        assert 0 < r["efficiency"] <= 1 + 1e-12
        assert r["tasks_moved"] > 0  # both rules move work away from the root's node
    # common random numbers: within a repetition every balancer runs the same tree
    for rep in (0, 1):
        assert len({round(r["lower_bound"], 15) for r in sweep.rows if r["repetition"] == rep}) == 1


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace('name = "steal"', 'name = "gss"'), "balancers[0].name"),
    (lambda t: t.replace('shape = "imbalance"', 'shape = "lopsided"'), "workload.shape"),
    (lambda t: t + '[engine]\nmechanism = "rounds"\n', "engine"),
    (lambda t: t + '[engine]\nstart_node = 9\n', "engine.start_node"),
    (lambda t: t.replace('kind = "tree"', 'kind = "forest"'), "workload.kind"),
])
def test_bad_tree_experiments_name_the_field(edit, field):
    with pytest.raises(ConfigError) as e:
        load(edit(TREE))
    assert e.value.field.startswith(field)


def test_a_divisible_experiment_rejects_migration_balancers():
    text = TREE.replace('kind = "tree"\nshape = "imbalance"\nimbalance = 0.2\ndepth = 10\ngrain = 1000',
                        'kind = "divisible"\nitems = 100')
    with pytest.raises(ConfigError, match="chunking balancer for a divisible workload"):
        load(text)


def test_trees_differ_between_repetitions_but_not_between_balancers():
    exp = load()
    specs = exp.expand()
    seeds = {(s.label, s.repetition): s.workload.seed for s in specs}
    assert seeds[("steal", 0)] == seeds[("random", 0)] != seeds[("steal", 1)] == seeds[("random", 1)]
    fixed = load(TREE.replace("grain = 1000", "grain = 1000\nseed = 5"))
    assert {s.workload.seed for s in fixed.expand()} == {5}


def test_workload_phases_read_off_the_waiting_series():
    from dlbkit.families.tree.face.plots import workload_phases
    t = [0, 1, 2, 3, 4, 5, 6, 7]
    n = [1, 2, 4, 5, 3, 4, 1, 0]  # p = 4: first >= 4 at t = 2, last >= 4 at t = 5 -> falls below at 6
    assert workload_phases(t, n, 4) == (2.0, 6.0)
    assert all(x != x for x in workload_phases(t, n, 9))  # never filled: nan, nan


def test_tree_runs_plot_waiting_tasks_per_node_with_phases(tmp_path):
    import tomllib

    from dlbkit.face.experiments import save_all, summarise
    d = tomllib.loads(TREE)
    d["balancers"] = [{"name": "phase-adaptive", "params": {"balancers": ["gdem", "gdem", "none"],
                                                              "intervals": [1, 4, float("inf")]}}]
    exp = Experiment.from_dict(d)
    sweep = run_sweep(exp, tmp_path)
    (trace,) = sweep.traces.values()
    queues = trace.meta["queues"]
    assert len(queues) == len(trace.meta["waiting"]) and all(len(q) == 9 for q in queues)
    assert [sum(q) for q in queues] == [n for _, n in trace.meta["waiting"]]
    phases = [ph for _, ph in trace.meta["phases"]]
    assert phases[0] == 1 and phases == sorted(phases) and 2 in phases  # one-way, through the steady phase
    images = save_all(tmp_path / "img", summarise(sweep.rows, ["makespan"]), sweep.traces, family="tree")
    assert len(images["tasks"]) == 1 and images["tasks"][0].stat().st_size > 10_000


def test_the_shipped_torus_experiment_compares_every_migration_balancer():
    from dlbkit.balancers import registry
    from dlbkit.face.cli import find_experiment
    from dlbkit.face.experiments import load_experiment
    exp = load_experiment(find_experiment("haron_torus64"))
    assert exp.platform.n_nodes == 64 and isinstance(exp.workload, TaskTree) and exp.workload.kind == "imbalance"
    names = {b.name for b in exp.balancers}
    assert names == set(registry.names("migration"))
    adaptive = [b.params for b in exp.balancers if b.name == "phase-adaptive"]
    assert {p["detector"] for p in adaptive} == {"tasks", "work"}
    assert ["ldsv", "gdem", "none"] in [p["balancers"] for p in adaptive]  # 001's untested algorithmic switch


@pytest.mark.parametrize("edit, field, text", [
    # 8 193 nodes: an information model's tables (checked before any run, not as a failed run)
    (lambda t: t.replace("count = 9,", "count = 8193,").replace('topology = "torus"', 'topology = "complete"')
     + '[info]\nmodel = "gossip"\n', "info", "'exact' (the default) on 8,193 nodes"),
    # 5 793 nodes at fanout 1: a gossip round's entries; a balancer's own table is named as such
    (lambda t: t.replace("count = 9,", "count = 5793,").replace('topology = "torus"', 'topology = "complete"')
     .replace('name = "random"', 'name = "random"\ninfo = {model = "gossip"}'), "balancers[1].info.fanout",
     "a fanout whose rounds send at most 33,554,432 load entries"),
    # swept: the grid point that makes the rounds too large is named
    (lambda t: t.replace("count = 9,", "count = 600,").replace('topology = "torus"', 'topology = "complete"')
     + '[info]\nmodel = "gossip"\n[grid]\n"info.fanout" = [1, 100]\n', "grid", "info.fanout"),
])
def test_an_information_model_too_large_for_the_platform_is_refused_before_the_runs(edit, field, text):
    with pytest.raises(ConfigError) as e:
        load(edit(TREE))
    assert e.value.field.startswith(field) and text in str(e.value)
