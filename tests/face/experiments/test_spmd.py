"""Experiments over the pipelined-SPMD family (Osman 2003, 000): ``kind = "spmd"`` with repartition
balancers runs end to end into results.csv, plots and a report; misfits are clear errors."""

import math
import tomllib

import pytest

from dlbkit import ConfigError, Spmd, families, simulate
from dlbkit.face.experiments import Experiment, run_sweep, save_all, summarise, write_report

SPMD = """
name = "spmd"
repetitions = 2
seed = 4
[platform]
nodes = [
  {name = "slow", speed = 1000, availability = {kind = "pulse", start = 10, duration = 30, level = 0.25}},
  {name = "ws", count = 3, speed = 1000},
]
network = {latency = 0.001, bandwidth = 1e6, topology = "ring"}
[workload]
kind = "spmd"
points = 1000
boundary = 10
loops = 60
[engine]
window = 5
[[balancers]]
name = "dlah"
[[balancers]]
name = "optimal-chain"
"""


def load(text: str = SPMD) -> Experiment:
    return Experiment.from_dict(tomllib.loads(text))


def test_an_spmd_experiment_runs_end_to_end_with_a_report(tmp_path):
    exp = load()
    assert isinstance(exp.workload, Spmd) and exp.family is families.get("spmd")
    assert exp.family.kind == "repartition"
    sweep = run_sweep(exp, tmp_path)
    assert [r["status"] for r in sweep.rows] == ["ok"] * 4
    for r in sweep.rows:  # each row is simulate() with the run's seed and engine options
        direct = simulate(exp.platform, exp.workload, r["balancer"], seed=r["seed"], window=5)
        for m in ("makespan", "dp_moved", "steps_to_balance", "imbalance", "idle_share"):
            assert r[m] == pytest.approx(direct.metrics[m], rel=1e-12), m
        assert r["dp_moved"] > 0 and math.isnan(r["efficiency"]) and math.isnan(r["chunks"])
    for trace in sweep.traces.values():
        assert (trace.series["points"].sum(axis=1) == 4000).all() and trace.meta["window"] == 5
    summary = summarise(sweep.rows)
    images = save_all(tmp_path, summary, sweep.traces, family=exp.family)
    assert sorted(p.name for p in images["looptime"]) == ["looptime_dlah.png", "looptime_optimal-chain.png"]
    assert sorted(p.name for p in images["points"]) == ["points_dlah.png", "points_optimal-chain.png"]
    assert [p.name for p in images["bars"]] == ["makespan.png", "dp_moved.png", "steps_to_balance.png"]
    assert images["gantt"] == [] and all(p.stat().st_size > 0 for v in images.values() for p in v)
    html = write_report(tmp_path / "report.html", sweep, summary, images).read_text()
    assert "pipelined SPMD loop (Osman 2003): 60 loops, 1,000 DP per node" in html
    assert "looptime_dlah.png" in html and "points_optimal-chain.png" in html and "workstation" in html
    assert "steps_to_balance" in html and "class=fail" not in html


def test_none_is_the_unbalanced_reference_of_an_spmd_experiment(tmp_path):
    exp = load(SPMD + '[[balancers]]\nname = "none"\n')
    assert [(b.label, b.name, b.params) for b in exp.balancers][-1] == ("none", "none", {})
    rows = run_sweep(exp, tmp_path, keep_traces=False).rows
    none = [r for r in rows if r["label"] == "none"]
    assert len(none) == 2 and all(r["status"] == "ok" for r in none)
    assert all(r["dp_moved"] == 0.0 and r["steps_to_balance"] == 0.0 for r in none)
    # the slow node sets the pace without balancing: DLAH's makespan is shorter in every repetition
    by_rep = {(r["label"], r["repetition"]): r["makespan"] for r in rows}
    assert all(by_rep[("dlah", k)] < by_rep[("none", k)] for k in (0, 1))
    with pytest.raises(ConfigError) as e:
        load(SPMD + '[[balancers]]\nname = "none"\nparams = {c = 0.3}\n')
    assert e.value.field == "balancers[2].params"
    with pytest.raises(ConfigError) as e:  # only the SPMD family has an unbalanced reference
        load(SPMD.replace('kind = "spmd"\npoints = 1000\nboundary = 10\nloops = 60', 'items = 100')
             .replace("[engine]\nwindow = 5\n", "").replace('"dlah"', '"none"'))
    assert e.value.field == "balancers[0].name"


def test_spmd_engine_keys_agree():
    """Every [engine] key an experiment may set is a keyword of the engine function it goes to."""
    eng = families.get("spmd").engine
    assert set(eng.options) == {"window"} and set(eng.options) <= set(eng.api_options)


@pytest.mark.parametrize("edit, field", [
    (lambda t: t.replace('name = "dlah"', 'name = "gss"'), "balancers[0].name"),
    (lambda t: t.replace('name = "dlah"', 'name = "steal"'), "balancers[0].name"),
    (lambda t: t.replace("window = 5", "window = 0"), "engine.window"),
    (lambda t: t.replace("window = 5", 'mechanism = "rounds"'), "engine.mechanism"),
    (lambda t: t.replace("points = 1000", "points = 0"), "workload.points"),
    (lambda t: t.replace("points = 1000", "points = [1, 2]"), "workload.points"),
    (lambda t: t.replace("loops = 60", "loops = 0"), "workload.loops"),
    (lambda t: t.replace("loops = 60", 'loops = 60\nlayout = "star"'), "workload.layout"),
    (lambda t: t.replace("loops = 60", 'loops = 60\nlayout = "line"'), "workload.layout"),
    (lambda t: t.replace("loops = 60", "loops = 60\nitems = 3"), "workload.items"),
    (lambda t: t.replace('topology = "ring"', 'topology = "star"'), "platform.network.topology"),
    (lambda t: t.replace("count = 3, speed", "count = 3, cores = 2, speed"), "platform.nodes[1].cores"),
    (lambda t: t + '[grid]\n"workload.loops" = [10, 0]\n', "grid.workload.loops[1]"),
])
def test_bad_spmd_experiments_name_the_field(edit, field):
    with pytest.raises(ConfigError) as e:
        load(edit(SPMD))
    assert e.value.field.startswith(field)


def test_shipped_osman_ring10_experiment_loads():
    from dlbkit.face.cli import find_experiment
    from dlbkit.face.experiments import load_experiment
    exp = load_experiment(find_experiment("osman_ring10"))
    assert [b.name for b in exp.balancers] == ["dlah", "homogeneous-diffusion", "processor-only", "optimal-chain",
                                              "none"]
    assert exp.workload == Spmd(points=9_800_000, loops=700, boundary=200_000, noise=0.1)
    assert exp.platform.nodes[0].availability.start == 100 and exp.platform.nodes[0].availability.level == 0.2
