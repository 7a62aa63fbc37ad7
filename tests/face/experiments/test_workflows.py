"""The shipped experiment `workflows`: every mapping balancer but milp, PD and replanning HEFT on
WfCommons workflows over the SimGrid platform workflows8.xml with two pulsed nodes; the file
validates, a reduced run works, and no makespan is below the lower bound printed beside it."""

import csv
import importlib.util
from pathlib import Path

import pytest

from dlbkit.balancers import registry
from dlbkit.face import experiments
from dlbkit.face.cli import find_experiment, main
from dlbkit.families.graph.model.wfcommons_recipes import APPS
from dlbkit.model.availability import Pulse
from dlbkit.model.platform import load_toml

pytestmark = pytest.mark.skipif(importlib.util.find_spec("wfcommons") is None,
                                reason="the wfcommons extra is not installed")


def _reduced(monkeypatch, apps=None, tasks=None):
    """`dlbkit simulate workflows` on one repetition, with fewer apps or tasks."""
    path = find_experiment("workflows")
    d = load_toml(path)
    d["repetitions"] = 1
    if apps is not None:
        d["grid"]["workload.app"] = apps
        d["workload"]["app"] = apps[0]  # the base is checked too
    if tasks is not None:
        d["workload"]["tasks"] = tasks
    monkeypatch.setattr(experiments, "load_experiment", lambda p: experiments.Experiment.from_dict(
        d, base_dir=Path(p).parent, default_name=Path(p).stem, path=Path(p)))


def _rows(out: Path) -> list[dict]:
    with open(out / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_the_file_validates_with_its_platform_balancers_and_apps():
    """The platform is the XML's eight hosts (speeds 1, 1, 1, 1, 2, 2, 4, 4 at speed_unit 1 Gf; two links
    of 100 us and 2 MBps a pair), fast0 and mid0 pulsed by the file's availability."""
    exp = experiments.load_experiment(find_experiment("workflows"))
    assert exp.platform_source.endswith("workflows8.xml")
    nodes = exp.platform.nodes
    assert [n.speed for n in nodes] == pytest.approx([1, 1, 1, 1, 2, 2, 4, 4])
    assert exp.platform.network.latency == pytest.approx(200e-6) and exp.platform.network.bandwidth == 2e6
    pulsed = {n.name: n.availability for n in nodes if isinstance(n.availability, Pulse)}
    assert set(pulsed) == {"fast0", "mid0"}
    assert (pulsed["fast0"].start, pulsed["fast0"].duration, pulsed["fast0"].level) == (100.0, 300.0, 0.2)
    names = {b.name for b in exp.balancers}
    assert names == (set(registry.names("mapping")) - {"milp"}) | {"pd", "heft-replan"}
    apps = exp.grid["workload.app"]
    assert len(apps) >= 4 and set(apps) <= set(APPS)


def test_a_reduced_run_prints_the_lower_bound_beside_every_makespan(tmp_path, monkeypatch, capsys):
    """Two apps (srasearch and epigenomics, at most 45 tasks), one repetition, the 14 balancers: every run
    ends, and its makespan is at least its lower bound (the longest path at the fastest speed, or the
    fastest times' total over the processors: no schedule beats either). The bound differs between the
    apps, so the table gives it a column (one equal everywhere is stated once below the table)."""
    _reduced(monkeypatch, apps=["srasearch", "epigenomics"], tasks=45)
    out = tmp_path / "out"
    assert main(["simulate", "workflows", "--out", str(out), "--no-progress", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    head = next(ln for ln in printed.splitlines() if ln.startswith("balancer "))
    cols = head.split()
    assert cols[cols.index("makespan") + 1] == "lower_bound"
    rows = _rows(out)
    assert len(rows) == 28 and {r["status"] for r in rows} == {"ok"}
    for r in rows:
        assert 0 < float(r["lower_bound"]) <= float(r["makespan"]), r["label"]


@pytest.mark.full  # every app of the shipped grid, 70 runs: about 10 s
def test_every_app_runs_and_no_makespan_is_below_its_lower_bound(tmp_path, monkeypatch):
    _reduced(monkeypatch, tasks=80)
    out = tmp_path / "out"
    assert main(["simulate", "workflows", "--out", str(out), "--no-progress", "--jobs", "1"]) == 0
    rows = _rows(out)
    assert len(rows) == 14 * 5 and {r["status"] for r in rows} == {"ok"}
    for r in rows:
        assert 0 < float(r["lower_bound"]) <= float(r["makespan"]), (r["label"], r["workload.app"])
    assert (out / "report.html").is_file()


def test_the_wfcommons_version_is_part_of_every_runs_fingerprint(monkeypatch):
    """Another wfcommons release may draw another workflow from the same seed: its version is in the runs'
    fingerprints (a resumed sweep then refuses the old rows), and the same version gives the same ones."""
    from dlbkit.families.graph.model import wfcommons_recipes

    d = {"platform": {"nodes": [{"name": "a", "speed": 1.0}, {"name": "b", "speed": 2.0}]},
         "workload": {"kind": "graph", "generator": "wfcommons", "app": "montage", "tasks": 60, "seed": 1},
         "balancers": [{"name": "heft"}]}
    before = [s.fingerprint for s in experiments.Experiment.from_dict(d).expand()]
    assert before == [s.fingerprint for s in experiments.Experiment.from_dict(d).expand()]
    monkeypatch.setattr(wfcommons_recipes, "version", lambda: "99.0")
    after = [s.fingerprint for s in experiments.Experiment.from_dict(d).expand()]
    assert len(after) == len(before) == 1 and after != before
