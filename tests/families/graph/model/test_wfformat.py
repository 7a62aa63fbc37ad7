"""WfCommons WfFormat workflows read as TaskGraphs (issue 33): layouts 1.3, 1.4 and 1.5, bad input,
the experiment file and the CLI, and a property (random DAGs written as WfFormat read back)."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model import workload
from dlbkit.families.graph.model.workload import from_wfformat, read_wfformat
from dlbkit.families.graph.model.workload import TaskGraph

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


@st.composite
def dags(draw):
    n = draw(st.integers(1, 12))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda e: e[0] < e[1]),
                         max_size=30))
    runtimes = draw(st.lists(st.integers(0, 10 ** 6), min_size=n, max_size=n))
    sizes = {e: draw(st.integers(0, 10 ** 9)) for e in sorted(pairs)}
    return n, sizes, runtimes


@settings(max_examples=60, deadline=None)
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
