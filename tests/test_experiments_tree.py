"""Experiments over task trees: the spec accepts a tree workload with migration balancers and runs
it on the asynchronous engine; a family mixed up with the wrong balancers is a clear error."""

import pytest

from dlbkit import ConfigError
from dlbkit.experiments import Experiment, run_sweep
from dlbkit.model.tree import TaskTree

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
    nodes = exp.workload.count()[0]
    for (label, _), trace in sweep.traces.items():
        assert trace.meta["tasks"] == nodes == sum(trace.meta["expanded"])
    for r in sweep.rows:
        assert 0 < r["efficiency"] <= 1 + 1e-12
        assert r["tasks_moved"] > 0  # both rules move work away from the root's node
    # common random numbers: the same tree in every run, so the lower bound is the same
    assert len({round(r["lower_bound"], 15) for r in sweep.rows}) == 1


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
