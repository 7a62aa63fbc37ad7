"""A resumed sweep redraws exactly the figures whose inputs changed (experiments.figures, .digests)."""

import dataclasses
import os
from pathlib import Path

import pytest

import dlbkit
from dlbkit.face.cli import main
from dlbkit.face.experiments import load_experiment, run_sweep, save_all, summarise
from dlbkit.face.experiments.digests import DIGEST_KEY, digest, png_text

from support.experiment_files import TINY

OLD = 1_000_000_000 * 10**9  # an mtime (ns, 2001) no drawing today can leave


def _sweep(tmp_path, text=TINY):
    p = tmp_path / "exp.toml"
    p.write_text(text)
    exp = load_experiment(p)
    sweep = run_sweep(exp, tmp_path / "out")
    return exp, sweep, summarise(sweep.rows)


def _age(out: Path) -> dict[str, bytes]:
    """Set every PNG's mtime to OLD; return the bytes of each."""
    pngs = {}
    for p in sorted(out.glob("*.png")):
        os.utime(p, ns=(OLD, OLD))
        pngs[p.name] = p.read_bytes()
    return pngs


def _touched(out: Path) -> set[str]:
    return {p.name for p in out.glob("*.png") if p.stat().st_mtime_ns != OLD}


@pytest.mark.parametrize("jobs", [1, 2])
def test_nothing_changed_nothing_redrawn(tmp_path, jobs):
    exp, sweep, summary = _sweep(tmp_path)
    first = save_all(sweep.out_dir, summary, sweep.traces, family=exp.family, jobs=jobs)
    before = _age(sweep.out_dir)
    assert len(before) == 6  # makespan, efficiency; gantt and work of ss and STATIC
    again = save_all(sweep.out_dir, summary, sweep.traces, family=exp.family, jobs=jobs)
    assert again == first  # the same paths by kind, in the same order, for the report
    assert _touched(sweep.out_dir) == set()
    assert {p.name: p.read_bytes() for p in sorted(sweep.out_dir.glob("*.png"))} == before


def test_a_changed_trace_redraws_that_runs_figures_only(tmp_path):
    exp, sweep, summary = _sweep(tmp_path)
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    _age(sweep.out_dir)
    traces = dict(sweep.traces)
    key = next(k for k in traces if k[0] == "ss")
    tr = traces[key]
    traces[key] = dataclasses.replace(tr, t_end=[t * 1.5 for t in tr.t_end])
    save_all(sweep.out_dir, summary, traces, family=exp.family)
    assert _touched(sweep.out_dir) == {"gantt_ss.png", "work_ss.png"}


def test_a_deleted_plot_is_redrawn_alone_and_as_before(tmp_path):
    exp, sweep, summary = _sweep(tmp_path)
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    before = _age(sweep.out_dir)
    (sweep.out_dir / "gantt_STATIC.png").unlink()
    (sweep.out_dir / "makespan.png").unlink()
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    assert _touched(sweep.out_dir) == {"gantt_STATIC.png", "makespan.png"}
    assert (sweep.out_dir / "gantt_STATIC.png").read_bytes() == before["gantt_STATIC.png"]
    assert (sweep.out_dir / "makespan.png").read_bytes() == before["makespan.png"]


def test_a_plot_without_a_digest_or_of_another_version_is_redrawn(tmp_path, monkeypatch):
    exp, sweep, summary = _sweep(tmp_path)
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    before = _age(sweep.out_dir)
    (sweep.out_dir / "work_ss.png").write_bytes(b"\x89PNG\r\n\x1a\nnot a figure")  # no digest: drawn by whom?
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    assert _touched(sweep.out_dir) == {"work_ss.png"}
    assert (sweep.out_dir / "work_ss.png").read_bytes() == before["work_ss.png"]
    _age(sweep.out_dir)
    monkeypatch.setattr(dlbkit, "__version__", dlbkit.__version__ + "+other")
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    assert _touched(sweep.out_dir) == set(before)


def test_a_resumed_sweep_with_an_added_run_redraws_its_figures_and_the_bars(tmp_path, capsys):
    p = tmp_path / "exp.toml"
    p.write_text(TINY)
    out = tmp_path / "out"
    assert main(["simulate", str(p), "--out", str(out)]) == 0
    before = _age(out)
    results = (out / "results.csv").read_bytes()
    assert main(["simulate", str(p), "--out", str(out)]) == 0
    assert _touched(out) == set() and (out / "results.csv").read_bytes() == results
    p.write_text(TINY + '\n[[balancers]]\nname = "gss"\nlabel = "GSS"\n')
    assert main(["simulate", str(p), "--out", str(out)]) == 0
    assert "3 runs done, 6 reused" in capsys.readouterr().out
    # the new run's figures, and the bars (they now have a third balancer); ss's and STATIC's stay
    assert _touched(out) == {"gantt_GSS.png", "work_GSS.png", "makespan.png", "efficiency.png"}
    assert all((out / n).read_bytes() == b for n, b in before.items() if n.startswith(("gantt_", "work_")))


def test_digest_reads_values_not_identity():
    a = {"x": [1.0, 2.5], "y": (3, "z")}
    b = {"x": [float("1.0"), 2.5], "y": (3, "z")}
    assert digest(a) == digest(b)
    assert digest(a) != digest({"x": [1.0, 2.5], "y": [3, "z"]})  # a tuple is not a list
    assert digest(1.0) != digest(1)
    assert png_text(Path("/nonexistent.png")) == {} and DIGEST_KEY == "dlbkit-digest"


@pytest.mark.parametrize("family", ["divisible", "tree"])
def test_every_dlbkit_module_that_draws_a_run_is_in_its_digest(tmp_path, monkeypatch, family):
    """The code part of a run figure's digest covered dlbkit.plots, this module and the family's own
    figures module; but the tree family's Gantt and work plots are drawn (titled) by the divisible
    family's figures, and the plots read a Trace's derived values: an edited divisible.py left a
    tree sweep's plots stale on resume. Every dlbkit module whose code runs while the figures are
    drawn must be digested."""
    import sys

    from dlbkit import families
    from dlbkit.face.experiments import figures
    from dlbkit.families.tree.model.workload import FlatTasks
    from dlbkit.families.tree.sim.superstep import simulate_superstep

    if family == "tree":
        trace = simulate_superstep(FlatTasks([1.0] * 20), "gdem", p=4).trace
    else:
        exp, sweep, _ = _sweep(tmp_path)
        trace = next(iter(sweep.traces.values()))
    digested: list[tuple] = []
    real = figures.code_digest
    monkeypatch.setattr(figures, "code_digest", lambda mods: (digested.append(tuple(mods)), real(mods))[1])
    save_all(tmp_path / "figs", [], {("x", ""): trace}, family=family)
    ran: set[str] = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_globals.get("__name__", "").startswith("dlbkit"):
            ran.add(frame.f_globals["__name__"])

    sys.setprofile(profile)
    try:
        figs = families.get(family).figures(trace, "x, repetition 0")
    finally:
        sys.setprofile(None)
    import matplotlib.pyplot as plt
    for f in figs.values():
        plt.close(f)
    assert ran and ran <= set(digested[-1]), ran - set(digested[-1])
