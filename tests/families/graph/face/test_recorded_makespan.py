"""A workflow file's recorded makespan (WfFormat's ``makespanInSeconds``) kept beside the simulated one: the
graph family's own metric ``recorded_makespan`` (:mod:`dlbkit.families.graph.face.family`), from both engines,
in an experiment's table beside the makespan and its lower bound; none for a graph that records no run."""

import json
import math

import dlbkit
from dlbkit import Node, Platform, TaskGraph
from dlbkit.face.cli import main


def chain(makespan):
    """The chain a (4 s) → b (2 s) → c (6 s) as WfFormat 1.5, with *makespan* recorded (None: the key absent)."""
    ex = {"tasks": [{"id": t, "runtimeInSeconds": r} for t, r in (("a", 4), ("b", 2), ("c", 6))]}
    if makespan is not None:
        ex["makespanInSeconds"] = makespan
    return {"name": "chain", "schemaVersion": "1.5", "workflow": {
        "specification": {"tasks": [{"id": "a", "name": "a", "parents": [], "children": ["b"]},
                                    {"id": "b", "name": "b", "parents": ["a"], "children": ["c"]},
                                    {"id": "c", "name": "c", "parents": ["b"], "children": []}]},
        "execution": ex}}


def test_both_engines_keep_the_recorded_makespan(tmp_path):
    """On one node of speed 2 the chain takes (4 + 2 + 6) / 2 = 6 s; the file recorded 13.5 s of its real run."""
    p = tmp_path / "wf.json"
    p.write_text(json.dumps(chain(13.5)))
    g = TaskGraph.read(p)
    one = Platform([Node("n", speed=2.0)])
    for engine in ("static", "dynamic"):
        r = dlbkit.simulate(one, g, "heft", engine_name=engine)
        assert r.makespan == 6.0 and r.metrics["recorded_makespan"] == 13.5, engine
    p.write_text(json.dumps(chain(None)))
    assert math.isnan(dlbkit.simulate(one, TaskGraph.read(p), "heft").metrics["recorded_makespan"])
    layered = dlbkit.families.graph.model.generate.layered(20, width=4, seed=1)
    assert math.isnan(dlbkit.simulate(one, layered, "heft").metrics["recorded_makespan"])


def test_the_experiment_table_shows_it_beside_the_makespan(tmp_path, capsys):
    (tmp_path / "wf.json").write_text(json.dumps(chain(13.5)))
    (tmp_path / "e.toml").write_text('name = "wf"\n[platform]\nnodes = [{name = "n", speed = 2.0}]\n'
                                     '[workload]\nkind = "graph"\nfile = "wf.json"\n[[balancers]]\nname = "heft"\n')
    assert main(["simulate", str(tmp_path / "e.toml"), "--out", str(tmp_path / "o"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "makespan" in line and "recorded_makespan" in line)
    cols = header.split()
    assert cols.index("makespan") < cols.index("lower_bound") < cols.index("recorded_makespan")
    rows = (tmp_path / "o" / "results.csv").read_text().splitlines()
    head, row = rows[0].split(","), rows[1].split(",")
    assert float(row[head.index("recorded_makespan")]) == 13.5 and float(row[head.index("makespan")]) == 6.0
