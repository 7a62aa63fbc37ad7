"""WfCommons' recipes as a graph generator (dlbkit.families.graph.model.wfcommons_recipes): a seed gives one
workflow, what the reader makes of it is what WfCommons wrote, and bad input is one line."""

import importlib.metadata
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO
from support.profiles import examples

from dlbkit.errors import ConfigError
from dlbkit.face.cli import main
from dlbkit.families.graph.model import wfcommons_recipes as wfr
from dlbkit.families.graph.model.generate import graph_from_dict
from dlbkit.families.graph.model.workload import TaskGraph

#: the tests that draw need the extra (the test extra installs it); the one without it does not
needs_wfcommons = pytest.mark.skipif(importlib.util.find_spec("wfcommons") is None,
                                     reason="the wfcommons extra is not installed")

TIMESTAMPS = ('"createdAt"', '"executedAt"')


def _shape(g: TaskGraph) -> tuple:
    return list(g.ids), list(g.loads), sorted(g.edges)


def _without_timestamps(path: Path) -> list[str]:
    return [ln for ln in path.read_text().splitlines() if not ln.strip().startswith(TIMESTAMPS)]


@needs_wfcommons
def test_the_same_seed_gives_the_same_graph_and_another_seed_another():
    a, b, c = wfr.generate("montage", 100, 5), wfr.generate("montage", 100, 5), wfr.generate("montage", 100, 6)
    assert _shape(a) == _shape(b)
    assert _shape(a) != _shape(c)
    assert a.meta["generator"] == {"app": "montage", "tasks": 100, "seed": 5,
                                   "wfcommons": importlib.metadata.version("wfcommons")}


@needs_wfcommons
def test_two_files_from_one_seed_differ_only_in_their_timestamps(tmp_path):
    """WfCommons writes createdAt and executedAt from the clock; every other line (file ids from the
    stand-in uuid4 included) is the same."""
    p, q = wfr.write(tmp_path / "a.json", "epigenomics", 80, 3), wfr.write(tmp_path / "b.json", "epigenomics", 80, 3)
    assert _without_timestamps(p) == _without_timestamps(q)
    assert len(p.read_text().splitlines()) - len(_without_timestamps(p)) == 2


@needs_wfcommons
@pytest.mark.full  # two fresh interpreters importing wfcommons (pandas, scipy): about 5 s
def test_the_file_does_not_depend_on_the_process_hash_seed(tmp_path):
    """Python's str hashes change with PYTHONHASHSEED; a set of node names iterated by WfCommons would
    follow them (RnaseqRecipe's does, and is left out of APPS)."""
    code = ("import sys; from dlbkit.families.graph.model import wfcommons_recipes as w; "
            "w.write(sys.argv[1], 'cycles', 120, 11)")
    for h in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": h, "PYTHONPATH": str(REPO / "src")}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / f"{h}.json")], env=env, check=True)
    assert _without_timestamps(tmp_path / "1.json") == _without_timestamps(tmp_path / "2.json")


@needs_wfcommons
def test_the_graph_is_what_the_written_file_says(tmp_path):
    """generate() and write() draw the same workflow from one seed; the file, read back, is the graph,
    and by hand from its JSON: a task's load is its runtimeInSeconds (no reference speed), a task has
    one edge per parent, and an edge carries the bytes of the files the child reads that the parent
    writes (WfCommons links a parent's outputs as its child's inputs)."""
    g = wfr.generate("1000genome", 70, 2)
    path = wfr.write(tmp_path / "w.json", "1000genome", 70, 2)
    assert _shape(TaskGraph.read(path)) == _shape(g)
    doc = json.loads(path.read_text())
    spec, runs = doc["workflow"]["specification"], doc["workflow"]["execution"]["tasks"]
    runtime = {t["id"]: t["runtimeInSeconds"] for t in runs}
    size = {f["id"]: f["sizeInBytes"] for f in spec["files"]}
    tasks = {t["id"]: t for t in spec["tasks"]}
    assert g.n_tasks == len(tasks) <= 70
    assert dict(zip(g.ids, g.loads)) == {i: runtime[i] for i in tasks}
    assert g.n_edges == sum(len(t["parents"]) for t in tasks.values())
    for src, dst, data in g.edges:
        shared = set(tasks[src]["outputFiles"]) & set(tasks[dst]["inputFiles"])
        assert data == sum(size[f] for f in shared)
    assert g.meta["makespan"] is None  # a generated instance records no run (makespanInSeconds 0)


@needs_wfcommons
@settings(max_examples=examples(20), deadline=None)
@given(seed=st.integers(0, 2**40), app=st.sampled_from(["srasearch", "epigenomics", "blast"]))
def test_a_seed_gives_one_graph_and_leaves_the_global_generators_alone(seed, app):
    """Invariant: whatever the seed, a second draw is the same graph, at most the tasks asked for, and
    Python's and numpy's global generators continue as if nothing had drawn from them."""
    random.seed(99)
    np.random.seed(99)
    expected = (random.random(), np.random.random())
    random.seed(99)
    np.random.seed(99)
    g = wfr.generate(app, 50, seed)
    assert (random.random(), np.random.random()) == expected
    assert _shape(wfr.generate(app, 50, seed)) == _shape(g)
    assert g.n_tasks <= 50


@needs_wfcommons
def test_the_least_tasks_is_the_smallest_base_graph():
    """montage's recipe (wfcommons 1.6) has base graphs of 60 to 2,124 nodes: 60 builds, 59 is one line."""
    assert wfr.min_tasks("montage") == 60
    assert wfr.generate("montage", 60, 0).n_tasks <= 60
    with pytest.raises(ConfigError) as e:
        wfr.generate("montage", 59, 0)
    assert e.value.field == "tasks" and "at least 60 for montage" in str(e.value)


@needs_wfcommons
def test_an_unknown_app_lists_the_known_ones():
    with pytest.raises(ConfigError) as e:
        wfr.generate("1000genomes", 100, 0)
    msg = str(e.value)
    assert e.value.field == "app" and "\n" not in msg
    assert all(a in msg for a in wfr.APPS) and "did you mean '1000genome'" in msg
    assert "rnaseq" not in wfr.APPS  # its draw follows the hash seed (module docstring)


@needs_wfcommons
def test_an_experiment_names_the_workload_field():
    with pytest.raises(ConfigError) as e:
        graph_from_dict({"kind": "graph", "generator": "wfcommons", "app": "montage", "tasks": 10})
    assert e.value.field == "workload.tasks"
    with pytest.raises(ConfigError) as e:
        graph_from_dict({"kind": "graph", "generator": "wfcommons", "tasks": 100})
    assert e.value.field == "workload.app"


EXPERIMENT = """name = "wf"
[platform]
nodes = [{name = "a", speed = 1.0}, {name = "b", speed = 2.0}]
[workload]
kind = "graph"
generator = "wfcommons"
app = "montage"
tasks = 80
[[balancers]]
name = "heft"
"""


def test_without_the_extra_the_cli_says_what_to_install(tmp_path, monkeypatch, capsys):
    """sys.modules["wfcommons"] = None makes `import wfcommons` fail as when it is not installed."""
    monkeypatch.setitem(sys.modules, "wfcommons", None)
    exp = tmp_path / "wf.toml"
    exp.write_text(EXPERIMENT)
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "wf.toml" in err[0] and "workload.generator" in err[0] and "pip install 'dlbkit[wfcommons]'" in err[0]


def test_the_author_is_dlbkit_whoever_runs_it(tmp_path, monkeypatch):
    """WfCommons names the file's author by ``getpass.getuser()``, which raises KeyError for a uid without a
    name (some containers): in the seeded block the author is ``dlbkit``, and getpass is put back after."""
    import getpass

    def nameless():
        raise KeyError("getpwuid(): uid not found: 12345")

    monkeypatch.setattr(getpass, "getuser", nameless)
    path = wfr.write(tmp_path / "m.json", "montage", 60, seed=3)
    assert json.loads(path.read_text())["author"]["name"] == "dlbkit"
    from wfcommons.common import workflow
    assert workflow.getpass is getpass
