"""WfCommons WfFormat workflows read as TaskGraphs (issue 33): layouts 1.3, 1.4, 1.5 and 1.6 (as the
``wfcommons`` 1.6 package writes it), bad input, the experiment file and the CLI, and a property (random
DAGs written as WfFormat read back)."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.graphs import dags
from support.profiles import examples

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model import workload
from dlbkit.families.graph.model.workload import TaskGraph, from_wfformat, read_wfformat

# One workflow, by hand: a (split) writes f1 (100 B) and f2 (200 B); b reads f1, c reads f1 and f2;
# d reads b's f3 (50 B) and c's f4 (25 B) and the input f0 (7 B, written by nobody); c also lists an
# extra parent a → edge a→c carries f1 + f2 = 300. a ran 10 s on fast (2000 MHz), b 4 s on slow
# (1000 MHz), c 6 s on fast, d 2 s on no recorded machine.
#   edges: a→b 100, a→c 300, b→d 50, c→d 25: 4 edges, 475 B.
#   loads at reference 1000 MHz: a 10·2 = 20, b 4·1 = 4, c 6·2 = 12, d 2 (no speed): 38.
#   loads without a reference: the seconds, 10 + 4 + 6 + 2 = 22.
FILES = {"f0": 7, "f1": 100, "f2": 200, "f3": 50, "f4": 25}
TASKS = [  # id, parents, inputs, outputs, runtime, machine
    ("a", [], ["f0"], ["f1", "f2"], 10, "fast"),
    ("b", ["a"], ["f1"], ["f3"], 4, "slow"),
    ("c", ["a"], ["f1", "f2"], ["f4"], 6, "fast"),
    ("d", ["b", "c"], ["f0", "f3", "f4"], [], 2, None),
]
EDGES = {("a", "b"): 100.0, ("a", "c"): 300.0, ("b", "d"): 50.0, ("c", "d"): 25.0}


def _children(tasks):
    return {t[0]: [u[0] for u in tasks if t[0] in u[1]] for t in tasks}


def wf15(tasks=TASKS, files=FILES, speeds=(("fast", 2000), ("slow", 1000))):
    kids = _children(tasks)
    return {"name": "toy", "schemaVersion": "1.5", "workflow": {
        "specification": {
            "tasks": [{"id": i, "name": i, "parents": p, "children": kids[i], "inputFiles": ins,
                       "outputFiles": outs} for i, p, ins, outs, _, _ in tasks],
            "files": [{"id": f, "sizeInBytes": s} for f, s in files.items()]},
        "execution": {
            "makespanInSeconds": 20.5, "executedAt": "2024-01-01T00:00:00Z",
            "machines": [{"nodeName": n, "cpu": {"coreCount": 4, "speedInMHz": s}} for n, s in speeds],
            "tasks": [{"id": i, "runtimeInSeconds": r, **({"machines": [m]} if m else {})}
                      for i, _, _, _, r, m in tasks]}}}


def wf14(tasks=TASKS, files=FILES, version="1.4", speeds=(("fast", 2000), ("slow", 1000))):
    old = version == "1.3"
    size, runtime, makespan = ("size", "runtime", "makespan") if old else ("sizeInBytes", "runtimeInSeconds",
                                                                           "makespanInSeconds")
    kids = _children(tasks)
    return {"name": "toy", "schemaVersion": version, "workflow": {
        makespan: 20.5, "executedAt": "2024-01-01T00:00:00Z",
        "machines": [{"nodeName": n, "cpu": {"count": 4, "speed": s}} for n, s in speeds],
        "tasks": [{"name": i, "type": "compute", "parents": p, "children": kids[i], runtime: r,
                   "files": [{"name": f, size: files[f], "link": "input"} for f in ins]
                   + [{"name": f, size: files[f], "link": "output"} for f in outs],
                   **({"machine": m} if m else {})} for i, p, ins, outs, r, m in tasks]}}


def _write(tmp_path, doc, name="wf.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


def _edges(g):
    return {(s, d): data for s, d, data in g.edges}


@pytest.mark.parametrize("make", [wf15, wf14, lambda: wf14(version="1.3")], ids=["1.5", "1.4", "1.3"])
def test_the_toy_workflow_by_hand(tmp_path, make):
    p = _write(tmp_path, make())
    g = TaskGraph.read(p, reference_mhz=1000)
    assert g.ids == ("a", "b", "c", "d") and g.name == "toy"
    assert g.n_tasks == 4 and g.n_edges == 4
    assert _edges(g) == EDGES and sum(_edges(g).values()) == 475
    assert g.loads == (20.0, 4.0, 12.0, 2.0) and sum(g.loads) == 38
    plain = workload.read(p)
    assert plain.loads == (10.0, 4.0, 6.0, 2.0) and sum(plain.loads) == 22  # the seconds, at speed 1
    assert g.meta["makespan"] == 20.5 and g.meta["reference_mhz"] == 1000
    assert g.meta["machines"] == {"fast": {"coreCount": 4.0, "speedInMHz": 2000.0},
                                  "slow": {"coreCount": 4.0, "speedInMHz": 1000.0}}
    assert g.meta["task_machines"] == {"a": ("fast",), "b": ("slow",), "c": ("fast",)}
    assert g.meta["schemaVersion"] == make()["schemaVersion"]


# WfFormat 1.6 as the wfcommons 1.6 package writes a generated instance (its MontageRecipe output read
# for the layout): 1.5's specification/execution, plus a "metrics" object in each, tasks' coreCount and
# command, no machines, makespanInSeconds 0.0. By hand: split (12.5 s) reads in.dat (1000 B) and writes
# p1.dat (400 B) and p2.dat (600 B); proc1 (40 s) turns p1.dat into r1.dat (30 B), proc2 (35.25 s)
# p2.dat into r2.dat (70 B); merge (3 s) reads both and writes final.dat (100 B).
#   edges: split→proc1 400, split→proc2 600, proc1→merge 30, proc2→merge 70: 4 edges, 1100 B.
#   loads: the seconds (no machine: no speed, whatever reference_mhz), 12.5 + 40 + 35.25 + 3 = 90.75.
#   metrics (checked here, not read): 6 files, 1000 + 400 + 600 + 30 + 70 + 100 = 2200 B.
WF16 = {
    "name": "Split-synthetic-instance", "description": "Instance generated with WfCommons - https://wfcommons.org",
    "createdAt": "2026-12-02T13:36:38.596250+00:00", "schemaVersion": "1.6",
    "author": {"name": "someone", "email": "someone@example.org"},
    "runtimeSystem": {"name": "wfcommons", "version": "1.6", "url": "https://docs.wfcommons.org/en/v1.6/"},
    "workflow": {
        "specification": {
            "tasks": [
                {"name": "split", "id": "split_00000001", "parents": [], "children": ["proc_00000002", "proc_00000003"],
                 "inputFiles": ["in.dat"], "outputFiles": ["p1.dat", "p2.dat"]},
                {"name": "proc", "id": "proc_00000002", "parents": ["split_00000001"], "children": ["merge_00000004"],
                 "inputFiles": ["p1.dat"], "outputFiles": ["r1.dat"]},
                {"name": "proc", "id": "proc_00000003", "parents": ["split_00000001"], "children": ["merge_00000004"],
                 "inputFiles": ["p2.dat"], "outputFiles": ["r2.dat"]},
                {"name": "merge", "id": "merge_00000004", "parents": ["proc_00000002", "proc_00000003"],
                 "children": [], "inputFiles": ["r1.dat", "r2.dat"], "outputFiles": ["final.dat"]}],
            "files": [{"id": f, "sizeInBytes": b} for f, b in
                      (("in.dat", 1000), ("p1.dat", 400), ("p2.dat", 600), ("r1.dat", 30), ("r2.dat", 70),
                       ("final.dat", 100))],
            "metrics": {"numberOfTasks": 4, "numberOfFiles": 6, "sumOfFileSizesInBytes": 2200, "numberOfLevels": 3,
                        "minimumWidth": 1, "maximumWidth": 2}},
        "execution": {
            "makespanInSeconds": 0.0, "executedAt": "2026-12-02T13:36:38.596295+00:00",
            "tasks": [{"id": t, "runtimeInSeconds": r, "coreCount": 1, "command": {"program": t.split("_")[0]}}
                      for t, r in (("split_00000001", 12.5), ("proc_00000002", 40.0), ("proc_00000003", 35.25),
                                   ("merge_00000004", 3.0))],
            "metrics": {"sumTaskRuntimesInSeconds": 90.75}}}}
EDGES16 = {("split_00000001", "proc_00000002"): 400.0, ("split_00000001", "proc_00000003"): 600.0,
           ("proc_00000002", "merge_00000004"): 30.0, ("proc_00000003", "merge_00000004"): 70.0}


def test_a_1_6_instance_by_hand(tmp_path):
    spec = WF16["workflow"]["specification"]
    assert spec["metrics"]["sumOfFileSizesInBytes"] == sum(f["sizeInBytes"] for f in spec["files"]) == 2200
    g = TaskGraph.read(_write(tmp_path, WF16), reference_mhz=1000)
    assert g.ids == ("split_00000001", "proc_00000002", "proc_00000003", "merge_00000004")
    assert g.name == "Split-synthetic-instance" and g.n_tasks == 4 and g.n_edges == 4
    assert _edges(g) == EDGES16 and sum(_edges(g).values()) == 1100
    assert g.loads == (12.5, 40.0, 35.25, 3.0) and sum(g.loads) == 90.75
    assert sum(g.loads) == WF16["workflow"]["execution"]["metrics"]["sumTaskRuntimesInSeconds"]
    assert g.meta["schemaVersion"] == "1.6" and g.meta["machines"] == {} and g.meta["task_machines"] == {}


def test_a_makespan_of_0_is_none_recorded_and_any_other_is_kept():
    assert from_wfformat(WF16).meta["makespan"] is None  # a generated instance never ran
    ran = copy.deepcopy(WF16)
    ran["workflow"]["execution"]["makespanInSeconds"] = 61.25
    assert from_wfformat(ran).meta["makespan"] == 61.25
    old = wf14()  # the rule is the reader's, whatever the version: 1.4's 0 as well
    old["workflow"]["makespanInSeconds"] = 0
    assert from_wfformat(old).meta["makespan"] is None


def test_1_6_bad_input_names_the_field_as_1_5_does():
    bad = copy.deepcopy(WF16)
    bad["workflow"]["specification"]["tasks"][3]["parents"][1] = "proc_9"
    _bad(bad, "workflow.specification.tasks[3].parents[1]")
    bad = copy.deepcopy(WF16)
    bad["workflow"]["execution"]["tasks"][2]["runtimeInSeconds"] = -35.25
    _bad(bad, "workflow.execution.tasks[2].runtimeInSeconds")


def test_1_4_and_1_5_layouts_give_the_same_graph(tmp_path):
    a = read_wfformat(_write(tmp_path, wf15(), "a.json"), reference_mhz=500)
    b = read_wfformat(_write(tmp_path, wf14(), "b.json"), reference_mhz=500)
    assert (a.ids, a.loads, a.edges) == (b.ids, b.loads, b.edges)
    assert a.loads == (40.0, 8.0, 24.0, 2.0)


def test_children_only_and_ids_in_1_4():
    d = wf15()  # children alone declare the edges: the same graph
    for t in d["workflow"]["specification"]["tasks"]:
        t["parents"] = []
    assert _edges(from_wfformat(d)) == EDGES
    d = wf14()  # parents named by id (converted instances): found through the task's id
    for t in d["workflow"]["tasks"]:
        t["id"] = "ID_" + t["name"]
        t["parents"] = ["ID_" + p for p in t["parents"]]
        t.pop("children")
    assert _edges(from_wfformat(d)) == EDGES


def test_dlbkit_json_still_reads_and_takes_no_reference(tmp_path):
    g = TaskGraph(["x", "y"], loads=[1, 2], edges=[("x", "y", 3)])
    p = tmp_path / "g.json"
    g.write(p)
    assert TaskGraph.read(p).edges == g.edges and dict(TaskGraph.read(p).meta) == {}
    with pytest.raises(ConfigError, match="reference_mhz"):
        TaskGraph.read(p, reference_mhz=1000)


def _bad(doc, field_part):
    with pytest.raises(ConfigError) as e:
        from_wfformat(doc, "wf.json", reference_mhz=1000)
    assert e.value.field.startswith("wf.json") and field_part in e.value.field, e.value.field
    return e.value


def _mut(make, fn):
    d = copy.deepcopy(make())
    fn(d)
    return d


S = lambda d: d["workflow"]["specification"]  # noqa: E731
X = lambda d: d["workflow"]["execution"]  # noqa: E731


def test_bad_1_5_input_names_the_field():
    _bad(_mut(wf15, lambda d: S(d)["tasks"][3]["parents"].__setitem__(0, "zz")),
         "workflow.specification.tasks[3].parents[0]")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][0]["children"].append("nobody")),
         "workflow.specification.tasks[0].children[2]")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][0]["parents"].append("d")), "(parents/children)")  # a cycle
    _bad(_mut(wf15, lambda d: S(d)["tasks"][1]["parents"].append("b")), "workflow.specification.tasks[1].parents[1]")
    _bad(_mut(wf15, lambda d: X(d)["tasks"][2].__setitem__("runtimeInSeconds", -1)),
         "workflow.execution.tasks[2].runtimeInSeconds")
    _bad(_mut(wf15, lambda d: X(d)["tasks"][2].pop("runtimeInSeconds")), "workflow.execution.tasks[2].runtimeInSeconds")
    _bad(_mut(wf15, lambda d: X(d)["tasks"].pop(1)), "workflow.specification.tasks[1].id")  # no record
    _bad(_mut(wf15, lambda d: X(d)["tasks"][0].__setitem__("id", "q")), "workflow.execution.tasks[0].id")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][2]["inputFiles"].append("nofile")),
         "workflow.specification.tasks[2].inputFiles[2]")
    _bad(_mut(wf15, lambda d: S(d)["files"][1].__setitem__("sizeInBytes", "big")), "workflow.specification.files[1]")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][0].__setitem__("parents", "a")), "workflow.specification.tasks[0].parents")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][0].__setitem__("id", 3)), "workflow.specification.tasks[0].id")
    _bad(_mut(wf15, lambda d: S(d)["tasks"][1].__setitem__("id", "a")), "workflow.specification.tasks[1].id")
    _bad(_mut(wf15, lambda d: X(d)["tasks"][0].__setitem__("runtimeInSeconds", True)), "runtimeInSeconds")
    _bad(_mut(wf15, lambda d: X(d).__setitem__("machines", {"fast": 1})), "workflow.execution.machines")
    _bad(_mut(wf15, lambda d: X(d)["machines"][0]["cpu"].__setitem__("speedInMHz", 0)), "cpu.speedInMHz")
    _bad(_mut(wf15, lambda d: d["workflow"].pop("execution")), "workflow.execution")
    _bad(_mut(wf15, lambda d: S(d).__setitem__("tasks", [])), "workflow.specification.tasks")
    e = _bad(_mut(wf15, lambda d: d.__setitem__("schemaVersion", "1.2")), "schemaVersion")
    assert "1.3, 1.4, 1.5" in str(e)
    _bad(_mut(wf15, lambda d: d.__setitem__("schemaVersion", 1.5)), "schemaVersion")


def test_bad_1_4_and_1_3_input_names_the_field():
    T = lambda d: d["workflow"]["tasks"]  # noqa: E731
    _bad(_mut(wf14, lambda d: T(d)[3]["parents"].__setitem__(0, "zz")), "workflow.tasks[3].parents[0]")
    _bad(_mut(wf14, lambda d: T(d)[1].pop("runtimeInSeconds")), "workflow.tasks[1].runtimeInSeconds")
    _bad(_mut(wf14, lambda d: T(d)[1].__setitem__("runtimeInSeconds", -0.5)), "workflow.tasks[1].runtimeInSeconds")
    _bad(_mut(wf14, lambda d: T(d)[0]["files"][0].__setitem__("link", "both")), "workflow.tasks[0].files[0].link")
    _bad(_mut(wf14, lambda d: T(d)[0]["files"][0].pop("sizeInBytes")), "workflow.tasks[0].files[0].sizeInBytes")
    _bad(_mut(wf14, lambda d: T(d)[0]["parents"].append("c")), "(parents/children)")  # a → c → a
    _bad(_mut(wf14, lambda d: T(d).__setitem__(0, "a")), "workflow.tasks[0]")
    # 1.3's keys are runtime and size: a 1.3 file with 1.4's names is missing them
    _bad(_mut(lambda: wf14(version="1.3"), lambda d: T(d)[2].__setitem__("runtimeInSeconds", T(d)[2].pop("runtime"))),
         "workflow.tasks[2].runtime")


def test_bad_files(tmp_path):
    p = tmp_path / "wf.json"
    p.write_text('{"schemaVersion": "1.5", "workflow": ', encoding="utf-8")
    with pytest.raises(ConfigError, match="wf.json"):
        TaskGraph.read(p)
    with pytest.raises(ConfigError, match="wf.json"):
        read_wfformat(p)
    p.write_bytes(json.dumps(wf15()).encode().replace(b'"toy"', b'"t\xff"'))
    for fn in (TaskGraph.read, read_wfformat):
        with pytest.raises(ConfigError, match="wf.json"):
            fn(p)
    for bad in (0, -1, "fast", float("nan")):
        with pytest.raises(ConfigError) as e:
            read_wfformat(_write(tmp_path, wf15()), reference_mhz=bad)
        assert e.value.field == "reference_mhz"


def test_experiment_file_and_cli(tmp_path, capsys):
    from dlbkit.face.cli import main
    from dlbkit.face.experiments.spec import load_experiment

    _write(tmp_path, wf15())
    exp = tmp_path / "exp.toml"
    exp.write_text('name = "wf"\n[platform]\nnodes = [{name = "n0", speed = 1.0}, {name = "n1", speed = 2.0}]\n'
                   '[workload]\nkind = "graph"\nfile = "wf.json"\nreference_mhz = 1000\n'
                   '[[balancers]]\nname = "heft"\n', encoding="utf-8")
    g = load_experiment(exp).workload
    assert isinstance(g, TaskGraph) and g.loads == (20.0, 4.0, 12.0, 2.0)
    exp.write_text(exp.read_text().replace("1000", "0"))
    with pytest.raises(ConfigError) as e:
        load_experiment(exp)
    assert e.value.field == "workload.reference_mhz"
    assert main(["schedule", str(tmp_path / "wf.json"), "--nodes", "3"]) == 0
    capsys.readouterr()
    _write(tmp_path, _mut(wf15, lambda d: S(d)["tasks"][3]["parents"].__setitem__(0, "zz")), "bad.json")
    assert main(["schedule", str(tmp_path / "bad.json"), "--nodes", "3"]) == 2
    err = capsys.readouterr().err
    assert "workflow.specification.tasks[3].parents[0]" in err and len(err.strip().splitlines()) == 1


@settings(max_examples=examples(60), deadline=None)
@given(dags(), st.booleans())
def test_random_dags_round_trip(dag, old):
    n, sizes, runtimes = dag
    ids = [f"t{i}" for i in range(n)]
    # each edge's data is one file the parent writes and the child reads
    files = {f"f{i}_{j}": s for (i, j), s in sizes.items()}
    tasks = [(ids[j], [ids[i] for (i, k) in sizes if k == j],
              [f"f{i}_{j}" for (i, k) in sizes if k == j], [f"f{j}_{k}" for (i, k) in sizes if i == j],
              runtimes[j], None) for j in range(n)]
    g = from_wfformat(wf14(tasks, files) if old else wf15(tasks, files))
    assert g.ids == tuple(ids)
    assert g.loads == tuple(map(float, runtimes))
    assert _edges(g) == {(ids[i], ids[j]): float(s) for (i, j), s in sizes.items()}
