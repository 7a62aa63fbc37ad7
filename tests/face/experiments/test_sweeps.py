"""Experiments layer: spec expansion, common random numbers, confidence intervals, resumable sweeps,
failures that keep finished runs, plots."""

import csv
import math

import numpy as np
import pytest

import dlbkit
from dlbkit import ConfigError
from dlbkit.face.experiments import (
    Experiment,
    format_table,
    format_verdict,
    gantt,
    load_experiment,
    mean_ci,
    run_seed,
    run_sweep,
    summarise,
    work_over_time,
    write_outputs,
)
from dlbkit.face.experiments import runner as runner_mod
from dlbkit.face.experiments.summary import Stat

from support.experiment_files import TINY


def tiny(tmp_path, text=TINY, name="tiny.toml") -> Experiment:
    p = tmp_path / name
    p.write_text(text)
    return load_experiment(p)


def csv_rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# --- confidence intervals ---------------------------------------------------------------------------
def test_ci_matches_hand_computation():
    """n = 8, mean 5, s = sqrt(32/7); t_{0.975, 7} = 2.364624 (table value) -> h = 1.787488."""
    n, mean, s, h = mean_ci([2, 4, 4, 4, 5, 5, 7, 9])
    assert n == 8
    assert mean == pytest.approx(5.0, abs=1e-12)
    assert s == pytest.approx(math.sqrt(32 / 7), rel=1e-12)
    assert h == pytest.approx(2.364624 * math.sqrt(32 / 7) / math.sqrt(8), rel=1e-6)
    assert h == pytest.approx(1.787488, abs=1e-6)


def test_ci_is_zero_for_one_value_or_no_spread_and_ignores_nan():
    n, mean, s, h = mean_ci([3.5])  # one value: no spread, no interval
    assert (n, mean) == (1, 3.5) and math.isnan(s) and math.isnan(h)
    assert mean_ci([2.0, 2.0, 2.0]) == (3, 2.0, 0.0, 0.0)
    n, mean, _s, h = mean_ci([1.0, float("nan"), 3.0])
    assert (n, mean) == (2, 2.0)
    assert h == pytest.approx(12.706205 * math.sqrt(2) / math.sqrt(2), rel=1e-6)  # t_{0.975,1} = 12.706205
    n, mean, _s, _h = mean_ci([float("nan")])
    assert n == 0 and math.isnan(mean)


def test_summary_groups_by_label_and_point():
    rows = [{"label": "A", "balancer": "ss", "point": "", "status": "ok", "makespan": v} for v in (1.0, 2.0, 3.0)]
    rows += [{"label": "B", "balancer": "gss", "point": "", "status": "ok", "makespan": 10.0},
             {"label": "B", "balancer": "gss", "point": "", "status": "error", "makespan": float("nan")}]
    stats = {s.label: s for s in summarise(rows, ["makespan"])}
    assert (stats["A"].n, stats["A"].mean, stats["A"].std) == (3, 2.0, 1.0)
    assert stats["A"].ci95 == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert (stats["B"].n, stats["B"].mean) == (1, 10.0) and math.isnan(stats["B"].ci95)
    text = format_table(list(stats.values()), ["makespan"])
    assert "2.000 ± 2.484 *" in text  # A is best (lower makespan)
    row_b = next(ln for ln in text.splitlines() if ln.startswith("B "))
    assert row_b.split()[-1] == "10" and "±" not in row_b  # one repetition: the mean alone


def test_the_verdict_names_the_winner_its_lead_and_whether_the_intervals_part():
    def stat(label, point, metric, mean, ci):
        return Stat(label, label, point, metric, 3, mean, 1.0, ci)

    summary = [stat("gss", "", "makespan", 956.1, 64.9), stat("fac2", "", "makespan", 500.4, 31.9),
               stat("mine", "", "makespan", 483.7, 84.0)]
    assert format_verdict(summary, "makespan") == [
        "best makespan (lower is better): mine 483.7 s; runner-up fac2 500.4 s (+3.5%, 95% intervals overlap: "
        "not a clear win); last gss 956.1 s (+97.7%)"]
    apart = [stat("a", "n=1", "efficiency", 0.9, 0.01), stat("b", "n=1", "efficiency", 0.5, 0.01),
             stat("a", "n=2", "efficiency", 0.7, 0.01), stat("b", "n=2", "efficiency", 0.7, 0.01)]
    assert format_verdict(apart, "efficiency") == [  # higher is better; a point where both agree says so
        "at n=1: best efficiency (higher is better): a 0.9000; runner-up b 0.5000 (-44.4%, 95% intervals apart)",
        "at n=2: all balancers alike on efficiency: 0.7000"]
    assert format_verdict(summary[:1], "makespan") == ["only gss ran: makespan 956.1 s"]
    lone = [stat("a", "", "makespan", 10.0, float("nan")), stat("b", "", "makespan", 12.0, 0.5)]
    assert format_verdict(lone, "makespan") == [  # only the winner ran once: the runner-up has its interval
        "best makespan (lower is better): a 10 s; runner-up b 12 s (+20.0%, no interval for a: one repetition)"]
    both = [stat("a", "", "makespan", 10.0, float("nan")), stat("b", "", "makespan", 12.0, float("nan"))]
    assert format_verdict(both, "makespan")[0].endswith("(+20.0%, no interval for a or b: one repetition)")
    alike = [stat("a", "", "makespan", 50.00002, float("nan")), stat("b", "", "makespan", 50.000024, float("nan"))]
    # cells that print alike are not ranked: one line says so (the table: "same for every balancer")
    assert format_verdict(alike, "makespan") == ["all balancers alike on makespan: 50.00 s"]

# --- specification ------------------------------------------------------------------------------------
def test_common_random_numbers_same_seed_for_every_balancer(tmp_path):
    exp = tiny(tmp_path)
    specs = exp.expand()
    assert len(specs) == 2 * 3 == exp.n_runs
    by_rep = {}
    for s in specs:
        by_rep.setdefault(s.repetition, set()).add(s.seed)
    assert all(len(seeds) == 1 for seeds in by_rep.values())  # both balancers share repetition r's seed
    expected = [int(np.random.SeedSequence([7, r]).generate_state(1)[0]) for r in range(3)]
    assert [by_rep[r].pop() for r in range(3)] == expected == [run_seed(7, r) for r in range(3)]
    assert len(set(expected)) == 3


def test_common_random_numbers_give_identical_draws(tmp_path):
    """Same seed -> same item costs and background load: the lower bound (a function of those only)
    is identical across balancers within a repetition and differs between repetitions."""
    sweep = run_sweep(tiny(tmp_path), tmp_path / "out")
    lb = {}
    for r in sweep.rows:
        lb.setdefault(r["repetition"], set()).add(r["lower_bound"])
    assert all(len(v) == 1 for v in lb.values())
    assert len({next(iter(v)) for v in lb.values()}) == 3


def test_rows_are_the_api_result_of_the_same_run(tmp_path):
    exp = tiny(tmp_path)
    sweep = run_sweep(exp, tmp_path / "out")
    row = next(r for r in sweep.rows if r["label"] == "ss" and r["repetition"] == 1)
    res = dlbkit.simulate(exp.platform, exp.workload, "ss", seed=run_seed(7, 1), master="m")
    assert row["makespan"] == pytest.approx(res.makespan, rel=1e-12)
    assert row["chunks"] == 120  # SS: one chunk per item
    static = [r for r in sweep.rows if r["label"] == "STATIC"]
    assert [r["chunks"] for r in static] == [2, 2, 2]  # one block per worker


def test_grid_expands_cartesian_product_and_applies_values(tmp_path):
    text = TINY.replace("repetitions = 3", "repetitions = 2") + """
[grid]
"workload.items" = [40, 80]
"engine.master_overhead" = [0.0, 0.01]
"""
    exp = tiny(tmp_path, text)
    assert len(exp.points) == 4
    assert exp.n_runs == 4 * 2 * 2
    sweep = run_sweep(exp, tmp_path / "out")
    assert len(sweep.rows) == 16 and not sweep.failures
    for r in sweep.rows:
        if r["label"] == "ss":
            assert r["chunks"] == r["workload.items"]
    header = next(csv.reader(open(tmp_path / "out" / "results.csv")))
    assert "workload.items" in header and "engine.master_overhead" in header
    # overhead only delays: for SS with 80 items, 10 ms per decision costs time
    ms = {(r["point"], r["repetition"]): r["makespan"] for r in sweep.rows if r["label"] == "ss"}
    p0 = 'workload.items=80, engine.master_overhead=0.0'
    p1 = 'workload.items=80, engine.master_overhead=0.01'
    assert all(ms[(p1, k)] > ms[(p0, k)] for k in range(2))


@pytest.mark.parametrize("extra, field", [
    ('\n[grid]\n"workload.items" = [10, 0]\n', "grid.workload.items[1] (workload.items)"),
    ('\n[grid]\n"colour.x" = [1]\n', "grid.colour.x"),
    ('\n[grid]\n"workload.items" = []\n', "grid.workload.items"),
])
def test_bad_grid_names_key_and_index(tmp_path, extra, field):
    with pytest.raises(ConfigError) as e:
        tiny(tmp_path, TINY + extra)
    assert e.value.field == field


def test_balancer_engine_override_and_default_label(tmp_path):
    text = TINY + '\n[[balancers]]\nname = "ss"\nparams = {size = 4}\nengine = {master_overhead = 0.5}\n'
    exp = tiny(tmp_path, text)
    assert [b.label for b in exp.balancers] == ["ss", "STATIC", "ss(size=4)"]
    spec = [s for s in exp.expand() if s.label == "ss(size=4)"][0]
    assert spec.engine == {"master": "m", "master_overhead": 0.5}
    with pytest.raises(ConfigError) as e:
        tiny(tmp_path, TINY + '\n[[balancers]]\nname = "ss"\n')
    assert e.value.field == "balancers[2].label"


def test_labels_that_are_one_file_name_are_refused(tmp_path):
    """A run's figures are saved as ``<kind>_<slug of its label>.png``: "fac 2" and "fac-2" were both
    gantt_fac-2.png, one balancer's picture overwriting the other's (and, with the figure digests,
    both redrawn on every resume)."""
    with pytest.raises(ConfigError, match=r"balancers\[3\].label must be unique across balancers as a file name too "
                                          r"\(balancers\[2\]'s 'fac 2' is saved as 'fac-2' too\); got 'fac-2'"):
        tiny(tmp_path, TINY + '\n[[balancers]]\nname = "fac2"\nlabel = "fac 2"\n'
                              '\n[[balancers]]\nname = "fac2"\nlabel = "fac-2"\n')
    assert [b.label for b in tiny(tmp_path, TINY + '\n[[balancers]]\nname = "fac2"\nlabel = "fac 2"\n').balancers][-1] \
        == "fac 2"

# --- resumability and failures ------------------------------------------------------------------------
def test_second_run_skips_finished_rows(tmp_path):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    first = run_sweep(exp, out)
    assert (first.ran, first.skipped) == (6, 0)
    before = (out / "results.csv").read_text()
    again = run_sweep(tiny(tmp_path), out)
    assert (again.ran, again.skipped) == (0, 6)
    assert (out / "results.csv").read_text() == before
    assert [r["makespan"] for r in again.rows] == [r["makespan"] for r in first.rows]
    assert set(again.traces) == {("ss", ""), ("STATIC", "")}  # repetition 0 replayed for the plots
    assert max(again.traces[("ss", "")].t_end) == pytest.approx(
        next(r["makespan"] for r in first.rows if r["label"] == "ss" and r["repetition"] == 0), rel=1e-12)


def test_rerun_after_partial_results_runs_only_the_missing(tmp_path):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    full = run_sweep(exp, out)
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    (out / "results.csv").write_text("".join(lines[:3]) + lines[3][:25])  # header, 2 rows, a cut-off row
    again = run_sweep(exp, out)
    assert (again.ran, again.skipped) == (4, 2)
    rows = csv_rows(out / "results.csv")
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)  # the cut-off row was dropped
    assert sorted(r["makespan"] for r in again.rows) == sorted(r["makespan"] for r in full.rows)


def test_failing_run_is_recorded_and_finished_runs_are_kept(tmp_path, monkeypatch):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    real = runner_mod.simulate

    def flaky(platform, workload, balancer, **kw):
        if balancer == "static" and kw["seed"] == run_seed(7, 1):
            raise RuntimeError("boom in repetition 1")
        return real(platform, workload, balancer, **kw)

    monkeypatch.setattr(runner_mod, "simulate", flaky)
    sweep = run_sweep(exp, out)
    assert len(sweep.rows) == 6
    assert [(f["label"], f["repetition"]) for f in sweep.failures] == [("STATIC", 1)]
    assert "RuntimeError: boom in repetition 1" in sweep.failures[0]["error"]
    rows = csv_rows(out / "results.csv")
    assert len(rows) == 6 and sum(r["status"] == "ok" for r in rows) == 5
    stats = {(s.label, s.metric): s for s in summarise(sweep.rows)}
    assert stats[("STATIC", "makespan")].n == 2 and stats[("ss", "makespan")].n == 3

    monkeypatch.setattr(runner_mod, "simulate", real)
    again = run_sweep(exp, out)  # the failed run is retried; the finished ones are not
    assert (again.ran, again.skipped) == (1, 5)
    rows = csv_rows(out / "results.csv")
    assert len(rows) == 6 and all(r["status"] == "ok" for r in rows)  # the newer row replaced the error


def test_interrupted_sweep_keeps_finished_rows(tmp_path, monkeypatch):
    exp = tiny(tmp_path)
    out = tmp_path / "out"
    real = runner_mod.simulate
    calls = []

    def interrupt_fourth(*a, **kw):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(runner_mod, "simulate", interrupt_fourth)
    with pytest.raises(KeyboardInterrupt):
        run_sweep(exp, out)
    assert len(csv_rows(out / "results.csv")) == 3
    monkeypatch.setattr(runner_mod, "simulate", real)
    again = run_sweep(exp, out)
    assert (again.ran, again.skipped) == (3, 3)


def test_changed_configuration_is_not_mixed_into_old_results(tmp_path):
    out = tmp_path / "out"
    run_sweep(tiny(tmp_path), out)
    changed = tiny(tmp_path, TINY.replace("items = 120", "items = 130"))
    with pytest.raises(ConfigError) as e:
        run_sweep(changed, out)
    assert "different configuration" in str(e.value)


def test_parallel_sweep_gives_the_same_rows(tmp_path):
    exp = tiny(tmp_path)
    serial = run_sweep(exp, tmp_path / "s", jobs=1)
    parallel = run_sweep(exp, tmp_path / "p", jobs=2)
    key = lambda r: (r["label"], r["repetition"])  # noqa: E731
    assert sorted((key(r), r["makespan"], r["chunks"]) for r in serial.rows) == \
        sorted((key(r), r["makespan"], r["chunks"]) for r in parallel.rows)
    assert set(parallel.traces) == {("ss", ""), ("STATIC", "")}


# --- plots --------------------------------------------------------------------------------------------
def test_gantt_draws_one_bar_per_chunk_and_work_reaches_items_done(tmp_path):
    exp = tiny(tmp_path)
    res = dlbkit.simulate(exp.platform, exp.workload, "ss", seed=1, master="m")
    tr = res.trace
    fig = gantt(tr, show_load=False)
    ct = tr.intervals()
    n_waits = int(np.sum(ct["t_start"] > ct["t_ask"]))
    ax = fig.axes[0]
    # one rectangle (a unit square's map) per chunk and per wait
    assert sum(len(c.get_transforms()) for c in ax.collections) == tr.n_intervals + n_waits
    fig2 = work_over_time(tr)
    finals = sorted(line.get_ydata()[-1] for line in fig2.axes[0].lines)
    assert finals == sorted(np.bincount(ct["node"], weights=ct["count"]).tolist())
    assert sum(finals) == 120


def test_write_outputs_after_run_experiment_writes_what_dlbkit_simulate_writes(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY)
    sweep = dlbkit.run_experiment(tmp_path / "tiny.toml", tmp_path / "all")
    assert sorted(p.name for p in (tmp_path / "all").iterdir()) == ["results.csv"]
    write_outputs(sweep)
    names = sorted(p.name for p in (tmp_path / "all").iterdir())
    assert names == ["efficiency.png", "gantt_STATIC.png", "gantt_ss.png", "makespan.png", "report.html",
                     "results.csv", "summary.csv", "work_STATIC.png", "work_ss.png"]
    summary = csv_rows(tmp_path / "all" / "summary.csv")
    ss = next(r for r in summary if r["label"] == "ss" and r["metric"] == "makespan")
    assert float(ss["mean"]) == pytest.approx(np.mean([r["makespan"] for r in sweep.rows if r["label"] == "ss"]),
                                              rel=1e-12)
