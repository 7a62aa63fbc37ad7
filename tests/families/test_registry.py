"""The family registry: every family declared once, and the face layer dispatching through it only."""

import json
import math
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest

import dlbkit
from dlbkit import ConfigError, Divisible, FlatTasks, Spmd, TaskTree, families
from dlbkit.balancers.registry import names as balancer_names
from dlbkit.face.cli import main
from dlbkit.face.experiments import Experiment, run_sweep, save_all, summarise
from dlbkit.families import Engine, Family
from dlbkit.model.metrics import METRICS, compute
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.view import LoopView


def _declared_families() -> set[str]:
    """The families the package's subpackages declare (each family package's ``face/family.py`` builds one
    ``FAMILY``), found without the registry, to check the registry (and its PACKAGES list) against."""
    import importlib
    import pkgutil
    packages = [m.name for m in pkgutil.iter_modules(families.__path__) if m.ispkg]
    return {importlib.import_module(f"dlbkit.families.{m}.face.family").FAMILY.name for m in packages}


def test_every_family_module_is_registered_once_by_importing_dlbkit():
    """In a fresh interpreter (so that this test's own imports register nothing): the registry holds
    exactly the families the package's modules declare, and ``dlbkit families --json`` lists them."""
    code = "import json, dlbkit; from dlbkit import families; print(json.dumps(families.names()))"
    registered = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                           check=True).stdout)
    assert len(registered) == len(set(registered)) and set(registered) == _declared_families()
    assert registered == list(families.PACKAGES)  # the listing's order: the package list's, not import order


def test_dlbkit_families_json_lists_every_registered_family_and_its_engines(capsys):
    assert main(["families", "--json"]) == 0
    infos = {f["name"]: f for f in json.loads(capsys.readouterr().out)}
    assert list(infos) == families.names()
    assert [e["name"] for e in infos["tree"]["engines"]] == ["async", "superstep"]
    assert [e["default"] for e in infos["tree"]["engines"]] == [True, False]
    assert infos["divisible"]["balancer_kind"] == "chunking" and infos["divisible"]["workload"] == [
        "dlbkit.families.divisible.model.workload.Divisible"]
    assert infos["tree"]["balancer_kind"] == "migration" and infos["spmd"]["balancer_kind"] == "repartition"
    assert infos["spmd"]["no_balancing_reference"] is True and infos["tree"]["no_balancing_reference"] is False
    assert infos["divisible"]["runtime"] == "dlbkit.map, dlbkit.run_map"
    assert "steps_to_balance" in infos["spmd"]["metrics"] and "tasks_moved" in infos["tree"]["metrics"]


def test_the_plain_listing_names_each_family_and_engine(capsys):
    assert main(["families"]) == 0
    out = capsys.readouterr().out
    for text in ("dlbkit.families.tree.sim.engine.simulate_tree_async", "dlbkit.families.tree.sim.superstep.simulate_superstep", "options: window",
                 "real runs: dlbkit.tree"):
        assert text in out
    for fam in families.FAMILIES.values():
        assert f"\n{fam.name} " in "\n" + out and fam.engine.entry in out
        assert f"real runs: {fam.runtime or 'none yet'}" in out


def test_the_graph_family_names_its_real_run(capsys):
    """(A family without one prints "none yet": the listing test above checks every family's line.)"""
    assert families.get("graph").as_dict()["runtime"] == "dlbkit.graph, dlbkit.run_graph, dlbkit.run_workflow"
    assert main(["families"]) == 0
    out = capsys.readouterr().out
    assert "real runs: dlbkit.graph, dlbkit.run_graph, dlbkit.run_workflow" in out[out.index("\ngraph "):]


@pytest.mark.parametrize("fam", list(families.FAMILIES.values()), ids=lambda f: f.name)
def test_a_familys_declaration_is_consistent(fam):
    """Options an experiment may set are keywords of the engine function; metrics are known ones; the
    balancer kind has registered balancers; each workload type maps back to its family."""
    for e in fam.engines:
        assert set(e.options) <= set(e.api_options), e.name
        assert e.on_platform == (e.run is not None)
    assert set(fam.metric_names) <= set(METRICS) | set(fam.own_metrics)
    assert set(fam.own_metrics) <= set(families.metrics_table())
    assert set(fam.bar_metrics) <= set(fam.metric_names)
    assert balancer_names(fam.kind)
    for t in fam.workloads:
        assert issubclass(t, fam.workloads)


@pytest.mark.parametrize("workload, name", [(Divisible(10), "divisible"), (TaskTree("balanced", depth=3), "tree"),
                                            (FlatTasks([1.0, 2.0]), "tree"), (Spmd(loops=3, points=10), "spmd")])
def test_a_workload_finds_its_family(workload, name):
    assert families.of(workload).name == name


@pytest.mark.parametrize("fam, kind", [(f, t) for f in families.FAMILIES.values() for t in f.workloads],
                         ids=lambda x: getattr(x, "name", getattr(x, "__name__", "")))
def test_every_declared_workload_type_finds_its_own_family(fam, kind):
    """No two families claim one workload type (an instance made without its constructor: only its type counts)."""
    assert families.of(object.__new__(kind)) is fam


def test_a_family_name_typo_is_one_clear_error():
    listed = re.escape(", ".join(families.names()))
    with pytest.raises(ConfigError, match=rf"family must be a workload family: {listed}; got 'tre'"):
        families.get("tre")
    with pytest.raises(ConfigError, match=r"workload must be a workload of a registered family"):
        families.of(3.0)


def test_an_experiment_with_an_unknown_workload_kind_exits_2_with_one_line(tmp_path, capsys):
    p = tmp_path / "e.toml"
    p.write_text('[platform]\nnodes = [{name = "a", speed = 1.0}, {name = "b", speed = 1.0}]\n[workload]\nkind = "graf"\n'
                 '[[balancers]]\nname = "gss"\n')
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "workload.kind" in err and ", ".join(families.names()) in err


def test_simulate_names_the_engine_options_allowed_for_the_family(platform):
    with pytest.raises(ConfigError, match=r"engine.windw .* an option of the divisible family's master-worker engine"):
        dlbkit.simulate(platform, Divisible(10), "gss", windw=3)


def test_importing_the_plots_never_changes_the_matplotlib_backend():
    code = ("import matplotlib; matplotlib.use('pdf'); import dlbkit.plots, dlbkit.face.experiments; "
            "print(matplotlib.get_backend())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "pdf"


# --- a new family is its modules plus one registration: nothing in the face layer changes --------------
@dataclass(frozen=True)
class Ticks:
    """A toy workload: n unit items on every node, no balancing possible (tests only)."""

    n: int


def _toy_engine(platform, workload, balancer, *, seed=0, scale: float = 1.0):
    # the trace's family left unnamed: dlbkit.simulate names the family it ran for
    tr = Trace(n_nodes=platform.n_nodes, node_of=list(range(platform.n_nodes)), seed=seed)
    for w, node in enumerate(platform.nodes):
        tr.add_interval(w, w * workload.n, workload.n, 0.0, 0.0, scale * workload.n / node.speed)
    tr.speeds = [n.speed for n in platform.nodes]
    tr.availability = [n.availability.realise(np.random.default_rng(seed)) for n in platform.nodes]
    tr.total_work = float(workload.n * platform.n_nodes)
    tr.max_item = 1.0
    return tr


def _parse(d, path):
    return Ticks(int(d["n"]))


@pytest.fixture
def toy_family():
    fam = Family(name="ticks", summary="toy", source="tests", workloads=(Ticks,), view=LoopView, kind="chunking",
                 engines=(Engine("toy", "closed form", "tests._toy_engine", _toy_engine, {"scale": "time factor"}),),
                 runtime="(none)", metrics=compute, metric_names=("makespan", "efficiency"),
                 figures=lambda trace, run: {}, figure_kinds=(), bar_metrics=("makespan",), parse=_parse,
                 describe=lambda w: f"{w.n} ticks")
    families.register(fam)
    yield fam
    del families.FAMILIES["ticks"]


def test_a_registered_family_runs_through_simulate_and_experiment_files(toy_family, platform, tmp_path):
    r = dlbkit.simulate(platform, Ticks(8), "static", scale=2.0)
    assert r.trace.family == "ticks"
    assert r.makespan == pytest.approx(2.0 * 8 / 1.0)  # the slowest node: speed 1 (the master node's default)
    exp = Experiment.from_dict({"platform": {"nodes": [{"name": "a", "speed": 2.0}, {"name": "b", "speed": 1.0}]},
                                "workload": {"kind": "ticks", "n": 4}, "engine": {"scale": 3.0},
                                "balancers": [{"name": "gss"}], "repetitions": 2})
    assert exp.family is toy_family
    sweep = run_sweep(exp, tmp_path)
    assert [row["makespan"] for row in sweep.rows] == [12.0, 12.0]
    assert math.isclose(sweep.rows[0]["efficiency"], (8 / 3) / 12.0)
    written = save_all(tmp_path / "img", summarise(sweep.rows), sweep.traces, family="ticks")
    assert [p.name for p in written["bars"]] == ["makespan.png"]
    with pytest.raises(ConfigError, match=r"engine.scal"):
        Experiment.from_dict({"platform": {"nodes": [{"name": "a", "speed": 1.0}]}, "workload": {"kind": "ticks", "n": 4},
                              "engine": {"scal": 3.0}, "balancers": [{"name": "gss"}]})
    with pytest.raises(ConfigError, match=r"a chunking balancer for a ticks workload"):
        Experiment.from_dict({"platform": {"nodes": [{"name": "a", "speed": 1.0}]}, "workload": {"kind": "ticks", "n": 4},
                              "balancers": [{"name": "steal"}]})


def test_registering_a_family_twice_is_refused(toy_family):
    with pytest.raises(TypeError, match="registered twice"):
        families.register(toy_family)


def _legend(fig) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


def test_a_family_labels_its_gantt_legend_as_its_trace_means_it(platform):
    """The graph family's orange stretch is a ready task waiting for its processor and a blank is a
    processor waiting for inputs; the divisible family keeps the labels of a request for work."""
    import matplotlib
    matplotlib.use("Agg")
    from dlbkit.families.graph.model.generate import topcuoglu10
    from dlbkit.plots import GANTT_LEGEND
    s = dlbkit.schedule(topcuoglu10(), 3, "heft")
    for fig in (s.plot_gantt(), s.figures()["gantt"]):
        assert _legend(fig) == ["computing (tasks alternate shades)", "ready, waiting for its turn on the processor",
                                "idle (waiting for inputs)"]
    r = dlbkit.simulate(platform, Divisible(50), "gss")
    assert _legend(r.plot_gantt())[:3] == _legend(r.figures()["gantt"])[:3] == list(GANTT_LEGEND.values())
    assert families.get("divisible").gantt_legend == {}
    assert _legend(s.plot_gantt(legend={"idle": "free"}))[2] == "free"  # a caller's labels win


def test_a_gantt_legend_key_outside_the_charts_parts_is_refused():
    with pytest.raises(TypeError, match=r"gantt_legend keys \['waiting'\]"):
        Family(name="x", summary="", source="", workloads=(Ticks,), view=LoopView, kind="chunking", engines=(),
               runtime=None, metrics=compute, metric_names=(), figures=lambda t, r: {}, figure_kinds=(),
               bar_metrics=(), parse=_parse, describe=str, gantt_legend={"waiting": "?"})


def test_a_real_run_is_reached_through_the_registry():
    """``Family.run`` is the real-run entry the listing names (``runtime``): every family with one declares it, and
    calling it through the registry runs the user's function as the public entry does."""
    for fam in families.FAMILIES.values():
        assert (fam.run is None) == (fam.runtime is None), fam.name
    out = families.get("divisible").run(lambda x: x * x, range(6), workers=2, balancer="ss", seed=3)
    assert list(out) == [0, 1, 4, 9, 16, 25]


def test_a_figure_caption_of_a_kind_the_family_does_not_draw_is_refused():
    """The report captions a family's own plots with its ``figure_captions`` (the stream's heat map), kind by kind."""
    assert set(families.get("stream").figure_captions) == {"queues", "response_cdf"}
    with pytest.raises(TypeError, match=r"figure_captions names \['heat'\]"):
        Family(name="x", summary="", source="", workloads=(Ticks,), view=LoopView, kind="chunking", engines=(),
               runtime=None, metrics=compute, metric_names=(), figures=lambda t, r: {}, figure_kinds=("gantt",),
               bar_metrics=(), parse=_parse, describe=str, figure_captions={"heat": ("heat", "?")})
    with pytest.raises(TypeError, match=r"figure_captions of \['gantt'\] must each be a \(label, caption\) pair"):
        Family(name="x", summary="", source="", workloads=(Ticks,), view=LoopView, kind="chunking", engines=(),
               runtime=None, metrics=compute, metric_names=(), figures=lambda t, r: {}, figure_kinds=("gantt",),
               bar_metrics=(), parse=_parse, describe=str, figure_captions={"gantt": "a caption alone"})


def test_a_familys_files_must_be_file_kinds():
    """``Family.files`` holds FileKind objects (what ``dlbkit describe`` dispatches to), checked when declared."""
    import dataclasses

    fam = families.get("graph")
    assert fam.files and fam.as_dict()["files"][0] == "task graph (dlbkit JSON or WfCommons WfFormat) (.json)"
    with pytest.raises(TypeError, match="files must be FileKind objects"):
        dataclasses.replace(fam, files=(".json",))
