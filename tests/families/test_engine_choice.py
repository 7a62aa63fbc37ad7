"""Choosing a family's engine per run (``dlbkit.simulate(..., engine_name=)``, an experiment's
``[engine] name``, a balancer's own ``engine = { name = ... }``) and the balancer kinds each engine runs."""

import csv
import json
import tomllib

import pytest

import dlbkit
from dlbkit import ConfigError, families
from dlbkit.balancers.registry import names
from dlbkit.face.cli import main, shipped_experiments
from dlbkit.face.experiments import Experiment
from dlbkit.families.graph.model.generate import topcuoglu10
from dlbkit.model.platform import Node, Platform

from support import REPO
from support.experiment_files import TINY

PLATFORM = Platform([Node("a", speed=1.0), Node("b", speed=2.0), Node("c", speed=1.0)])
GRAPH_EXP = {
    "platform": {"nodes": [{"name": "a", "speed": 1.0}, {"name": "b", "speed": 2.0,
                            "availability": {"kind": "pulse", "start": 5.0, "duration": 20.0, "level": 0.3}}]},
    "workload": {"kind": "graph", "generator": "layered", "n": 30, "width": 4, "seed": 3},
    "balancers": [{"name": "heft"}],
}


def test_no_engine_option_is_called_engine_name():
    """``engine_name`` cannot clash with the options ``dlbkit.simulate`` passes to an engine."""
    for fam in families.FAMILIES.values():
        for eng in fam.engines:
            assert "engine_name" not in eng.api_options and "name" not in eng.options, (fam.name, eng.name)


def test_the_default_engine_named_is_the_run_without_a_name():
    g = topcuoglu10()
    a, b = dlbkit.simulate(PLATFORM, g, "heft"), dlbkit.simulate(PLATFORM, g, "heft", engine_name="static")
    assert a.metrics == b.metrics and a.trace.meta["assignment"] == b.trace.meta["assignment"]


def test_the_dynamic_engine_runs_a_static_plan_and_the_online_pd():
    g = topcuoglu10()
    plan = dlbkit.simulate(PLATFORM, g, "heft", engine_name="dynamic")
    assert plan.makespan == pytest.approx(dlbkit.simulate(PLATFORM, g, "heft").makespan)  # dedicated: the evaluator
    pd = dlbkit.simulate(PLATFORM, g, "pd", engine_name="dynamic", seed=2)
    assert pd.trace.meta["engine"] == "dynamic" and pd.makespan > 0 and len(pd.trace.meta["assignment"]) == g.n_tasks


@pytest.mark.parametrize("kwargs, field, words", [
    ({"balancer": "heft", "engine_name": "nope"}, "engine_name", ["static, dynamic"]),
    ({"balancer": "pd"}, "balancer", ["static engine", "'dynamic'", "graph-online"]),
    ({"balancer": "pd", "engine_name": "static"}, "balancer", ["'dynamic'"]),
    ({"balancer": "gss", "engine_name": "dynamic"}, "balancer", ["mapping"]),
    ({"balancer": "heft", "engine_name": "dynamic", "contention": True}, "engine.contention", ["cost_model"]),
])
def test_a_wrong_engine_or_a_balancer_it_does_not_run_is_one_config_error(kwargs, field, words):
    with pytest.raises(ConfigError) as e:
        dlbkit.simulate(PLATFORM, topcuoglu10(), **kwargs)
    msg = str(e.value)
    assert e.value.field == field and "\n" not in msg and all(w in msg for w in words), msg


def test_an_engine_outside_simulate_cannot_be_chosen():
    with pytest.raises(ConfigError, match="async") as e:
        dlbkit.simulate(PLATFORM, dlbkit.TaskTree(depth=4), "rid", engine_name="superstep")
    assert e.value.field == "engine_name"


def test_online_mappers_are_their_own_kind_run_by_the_dynamic_engine_only():
    graph = families.get("graph")
    assert "pd" in names("graph-online") and "pd" not in names("mapping")
    assert graph.kinds == ("mapping", "graph-online")
    assert [graph.kinds_of(e) for e in graph.engines] == [("mapping",), ("mapping", "graph-online")]
    assert all(f.kinds == (f.kind,) for f in families.FAMILIES.values() if f is not graph)


def test_families_lists_each_engines_balancer_kinds(capsys):
    assert main(["families", "--json"]) == 0
    graph = next(f for f in json.loads(capsys.readouterr().out) if f["name"] == "graph")
    assert graph["balancer_kinds"] == ["mapping", "graph-online"]
    assert {e["name"]: e["balancer_kinds"] for e in graph["engines"]} == {
        "static": ["mapping"], "dynamic": ["mapping", "graph-online"]}
    assert main(["families"]) == 0
    assert "dynamic: dlbkit.families.graph.sim.dynamic.simulate_graph_dynamic; balancers: mapping, graph-online" in \
        capsys.readouterr().out


# --- experiment files ------------------------------------------------------------------------------
def test_an_experiment_names_its_engine_and_a_balancer_may_name_another():
    d = {**GRAPH_EXP, "engine": {"name": "dynamic"},
         "balancers": [{"name": "heft", "label": "plan", "engine": {"name": "static"}}, {"name": "heft"},
                       {"name": "pd"}]}
    specs = Experiment.from_dict(d).expand()
    assert [(s.label, s.engine_name, s.engine) for s in specs] == [
        ("plan", None, {}), ("heft", "dynamic", {}), ("pd", "dynamic", {})]
    assert specs[0].fingerprint == Experiment.from_dict(GRAPH_EXP).expand()[0].fingerprint  # the default named


def test_an_experiment_without_an_engine_name_keeps_its_fingerprints(tmp_path):
    """Naming the default engine is the run of before: same fingerprint, so a resumed sweep reuses it."""
    plain = Experiment.from_dict(tomllib.loads(TINY))
    named = tomllib.loads(TINY)
    named["engine"]["name"] = "master-worker"
    assert [s.fingerprint for s in plain.expand()] == [s.fingerprint for s in Experiment.from_dict(named).expand()]
    assert all(s.engine_name is None for s in plain.expand())


@pytest.mark.parametrize("change, field, words", [
    ({"engine": {"name": "fast"}}, "engine.name", ["static, dynamic"]),
    ({"balancers": [{"name": "pd"}]}, "balancers[0].name", ["'dynamic'"]),
    ({"engine": {"name": "dynamic"}, "balancers": [{"name": "pd", "engine": {"name": "static"}}]},
     "balancers[0].name", ["static engine"]),
    ({"balancers": [{"name": "heft", "engine": {"name": "dynamic", "contention": True}}]},
     "balancers[0].engine.contention", ["cost_model"]),
    ({"balancers": [{"name": "gss"}]}, "balancers[0].name", ["mapping or graph-online", "pd"]),
    ({"engine": {"name": "dynamic"}, "balancers": [{"name": "pd"}], "grid": {"engine.name": ["dynamic", "static"]}},
     "grid.engine.name[1] (balancers[0].name)", ["static engine"]),
])
def test_an_experiments_engine_choice_is_checked_before_anything_runs(change, field, words):
    with pytest.raises(ConfigError) as e:
        Experiment.from_dict({**GRAPH_EXP, **change})
    msg = str(e.value)
    assert e.value.field == field and "\n" not in msg and all(w in msg for w in words), msg


def test_an_unknown_engine_in_a_file_exits_2_with_one_line(tmp_path, capsys):
    p = tmp_path / "e.toml"
    p.write_text(TINY.replace('[engine]\nmaster = "m"', '[engine]\nname = "rounds"\nmaster = "m"'))
    assert main(["simulate", str(p), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "engine.name" in err and "master-worker" in err


def test_the_shipped_pd_versus_heft_experiment_runs_and_reports(tmp_path, capsys):
    text = shipped_experiments()["graph_pd_vs_heft"].read_text()
    assert "repetitions = 5" in text
    p = tmp_path / "graph_pd_vs_heft.toml"
    p.write_text(text.replace("repetitions = 5", "repetitions = 1"))  # its platform is inline
    assert main(["simulate", str(p), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    rows = {r["label"]: r for r in csv.DictReader((tmp_path / "out" / "results.csv").open())}
    assert set(rows) == {"HEFT (static engine)", "HEFT (plan replayed)", "HEFT (replanned)", "PD (online)"}
    assert all(r["status"] == "ok" for r in rows.values())
    # the static plan meets the same availability on both engines: the replay is the evaluator's
    assert float(rows["HEFT (plan replayed)"]["makespan"]) == pytest.approx(
        float(rows["HEFT (static engine)"]["makespan"]), rel=1e-9)
    assert float(rows["PD (online)"]["makespan"]) > float(rows["PD (online)"]["lower_bound"]) > 0
    # the fast node's slowdown is measured and the unplaced tasks replanned around it
    assert float(rows["HEFT (replanned)"]["makespan"]) < float(rows["HEFT (plan replayed)"]["makespan"])
    report = (tmp_path / "out" / "report.html").read_text()
    assert "PD (online)" in report and "dynamic" in report
    # every run's Gantt chart is in the report, though the graph family draws no work plot beside it
    assert len(list((tmp_path / "out").glob("gantt_*.png"))) == 4
    assert all(f"Gantt {name}" in report for name in ("HEFT-static-engine", "HEFT-plan-replayed", "HEFT-replanned",
                                                     "PD-online"))


def test_graph_pd_vs_heft_prints_the_figures_docs_graphs_md_states(tmp_path):
    """docs/graphs.md quotes the shipped sweep's makespans (mean ± 95% CI, 5 repetitions); the full sweep
    takes about a second, so the quoted figures are checked at their printed precision."""
    import re

    from dlbkit.face.experiments import load_experiment, run_sweep, summarise

    doc = (REPO / "docs" / "graphs.md").read_text()
    quoted = dict(re.findall(r"(HEFT \(static engine\)|HEFT's plan replayed on this\s+engine|replanning HEFT|PD) "
                             r"(\d+\.\d\d ± \d+\.\d\d)", doc))
    assert len(quoted) == 4, quoted
    sweep = run_sweep(load_experiment(shipped_experiments()["graph_pd_vs_heft"]), tmp_path, keep_traces=False)
    ms = {st.label: st for st in summarise(sweep.rows) if st.metric == "makespan"}
    labels = {"HEFT (static engine)": "HEFT (static engine)", "HEFT (plan replayed)": "HEFT's plan replayed on this",
              "HEFT (replanned)": "replanning HEFT", "PD (online)": "PD"}
    for label, words in labels.items():
        text = next(v for k, v in quoted.items() if k.startswith(words))
        assert f"{ms[label].mean:.2f} ± {ms[label].ci95:.2f}" == text, label
