"""Recorded in the trace and drawn: a time-stepping experiment under ``balancer = "auto"``
draws auto's choice and its predicted against measured makespan per step (``auto_<label>.png``, linked
in the report), a Loop's Result offers the same figure, and a run without auto draws nothing new."""

from __future__ import annotations

import csv

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from dlbkit.balancers.registry import resolve
from dlbkit.face.cli import main
from dlbkit.face.experiments import load_experiment
from dlbkit.face.experiments.runner import run_experiment
from dlbkit.families import get
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.plots import slug
from dlbkit.families.result import Result
from dlbkit.families.divisible.sim.engine import simulate_divisible

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

EXPERIMENT = """
name = "steps_auto"
repetitions = 2
seed = 1

[platform]
nodes = [{{ name = "m", speed = 1.0 }}, {{ name = "a", speed = 1.0 }}, {{ name = "b", speed = 0.5 }}]

[workload]
kind = "divisible"
items = 200
cost = {{ dist = "linear", first = 0.1, last = 2.0 }}

[engine]
steps = {steps}
{balancers}
"""

AUTO = '\n[[balancers]]\nname = "auto"\nparams = { every = 1 }\n'
FAC2 = '\n[[balancers]]\nname = "fac2"\n'


def _write(tmp_path, steps: int, balancers: str):
    path = tmp_path / "exp.toml"
    path.write_text(EXPERIMENT.format(steps=steps, balancers=balancers))
    return path


def _pngs(out) -> set[str]:
    return {p.name for p in out.glob("*.png")}


def test_an_auto_experiment_draws_auto_per_step_and_the_report_links_it(tmp_path):
    out = tmp_path / "out"
    assert main(["simulate", str(_write(tmp_path, 3, AUTO + FAC2)), "--out", str(out), "--jobs", "1",
                 "--no-progress"]) == 0
    name = f"auto_{slug('auto(every=1)')}.png"  # the run label, as the other run figures are named
    assert name == "auto_auto-every-1.png"
    pngs = _pngs(out)
    assert name in pngs and (out / name).read_bytes()[:8] == PNG_MAGIC
    assert [p for p in pngs if p.startswith("auto_")] == [name]  # fac2 draws no auto figure
    report = (out / "report.html").read_text()
    assert report.count(f"src='{name}'") == 1 and 'balancer = "auto"</code> (repetition 0' in report


def test_without_auto_the_figures_are_those_of_before(tmp_path):
    """The same experiment with fac2 only: gantt, work and the bars, no auto figure."""
    out = tmp_path / "out"
    assert main(["simulate", str(_write(tmp_path, 3, FAC2)), "--out", str(out), "--jobs", "1",
                 "--no-progress"]) == 0
    assert _pngs(out) == {"makespan.png", "efficiency.png", "gantt_fac2.png", "work_fac2.png"}
    report = (out / "report.html").read_text()
    assert "src='auto_" not in report and 'balancer = "auto"' not in report


def test_the_figure_has_one_point_per_step_from_repetition_0(tmp_path):
    """The sweep's kept trace is repetition 0's; its figure has one measured makespan per step, equal
    to the recorded ones, and one cross per step with a prediction."""
    exp = load_experiment(_write(tmp_path, 3, AUTO))
    sweep = run_experiment(exp, tmp_path / "out", jobs=1)
    (label, _), tr = next(iter(sweep.traces.items()))
    assert label == "auto(every=1)"
    autos = [s["auto"] for s in tr.meta["time_steps"]]
    assert len(autos) == 3
    fig = get("divisible").figures(tr, "auto, repetition 0")["auto"]
    lines = fig.axes[0].get_lines()
    dots = [ln for ln in lines if ln.get_marker() == "o"]
    xs = sorted(x for ln in dots for x in ln.get_xdata())
    assert xs == [0, 1, 2]
    measured = sorted((x, y) for ln in dots for x, y in zip(ln.get_xdata(), ln.get_ydata()))
    assert [y for _, y in measured] == pytest.approx([a["measured"] for a in autos], rel=1e-12)
    crosses = [ln for ln in lines if ln.get_marker() == "x"]
    n_pred = sum(1 for a in autos if a["predicted"] is not None)
    assert sum(len(ln.get_xdata()) for ln in crosses) == n_pred
    assert "repetition 0" in fig.axes[0].get_title() and f"(seed {tr.seed})" in fig.axes[0].get_title()
    plt.close("all")


def _steps_trace(balancer: str):
    plat = Platform([Node("m")] + [Node(f"w{i}", s) for i, s in enumerate([1, 1, 0.5, 0.25])], Network(1e-3, 1e9))
    wl = Divisible(300, cost=CostModel("linear", first=0.1, last=2.0))
    return simulate_divisible(plat, wl, resolve(balancer, {"every": 2} if balancer == "auto" else {}), steps=4)


def test_a_result_under_auto_offers_the_figure_and_others_do_not():
    figs = Result(_steps_trace("auto"), None).figures()
    assert set(figs) == {"gantt", "work", "auto"}
    dots = [ln for ln in figs["auto"].axes[0].get_lines() if ln.get_marker() == "o"]
    assert sum(len(ln.get_xdata()) for ln in dots) == 4
    assert set(Result(_steps_trace("fac2"), None).figures()) == {"gantt", "work"}
    plt.close("all")


@pytest.mark.full  # end to end: the shipped loop_auto experiment and its figures
def test_the_shipped_loop_auto_draws_auto_and_auto_keeps_awf_c(tmp_path, capsys):
    """The shipped ``loop_auto`` as shipped. Stated before the run (BENCHMARKS.md, "auto against every
    fixed balancer", the same loop): auto's total is within 5% of the best fixed rule's, and auto keeps
    its default AWF-C throughout (no candidate predicted more than its margin better), so each of its
    runs is AWF-C's to the last digit."""
    out = tmp_path / "out"
    assert main(["simulate", "loop_auto", "--out", str(out), "--jobs", "1", "--no-progress"]) == 0
    assert "12 runs (4 balancers × 1 grid point(s) × 3 repetitions)" in capsys.readouterr().out
    assert (out / "auto_auto.png").read_bytes()[:8] == PNG_MAGIC
    assert "src='auto_auto.png'" in (out / "report.html").read_text()
    rows = list(csv.DictReader(open(out / "results.csv", newline="")))
    assert len(rows) == 12 and {r["status"] for r in rows} == {"ok"}
    span = {(r["label"], r["repetition"]): float(r["makespan"]) for r in rows}
    chunks = {(r["label"], r["repetition"]): r["chunks"] for r in rows}
    for rep in ("0", "1", "2"):
        assert span[("auto", rep)] <= 1.05 * min(span[(k, rep)] for k in ("AWF-C", "FAC2", "STATIC"))
        assert span[("auto", rep)] == span[("AWF-C", rep)] and chunks[("auto", rep)] == chunks[("AWF-C", rep)]


def _spin(x):
    return sum(i * i for i in range(200 + 50 * (x % 7)))


def test_a_loop_under_auto_offers_the_figure_from_its_result():
    """A real ``Loop`` (two worker processes, three steps): ``result().figures()`` has "auto", one
    measured makespan per step, those the steps recorded."""
    import dlbkit

    with dlbkit.Loop(_spin, workers=2, balancer="auto", params={"every": 1}) as loop:
        for _ in range(3):
            loop.map(range(60))
        res = loop.result()
    autos = [s["auto"] for s in res.trace.meta["time_steps"]]
    figs = res.figures()
    assert set(figs) == {"gantt", "work", "auto"}
    dots = [ln for ln in figs["auto"].axes[0].get_lines() if ln.get_marker() == "o"]
    pts = sorted((x, y) for ln in dots for x, y in zip(ln.get_xdata(), ln.get_ydata()))
    assert [x for x, _ in pts] == [0, 1, 2]
    assert [y for _, y in pts] == pytest.approx([a["measured"] for a in autos], rel=1e-12)
    plt.close("all")
