"""Resuming a sweep after its experiment file changed (`dlbkit simulate EXP --out DIR` again): the
directory ends as a fresh run of the current file would leave it. Plots the file no longer has are
removed, but only what dlbkit wrote (PNGs named as its figures and carrying its digest), and the rows
of runs it no longer has move to results-removed.csv (no finished run is lost); a grid written in
another key order is the same sweep."""

import csv
import dataclasses
import math

import pytest

from dlbkit.face.cli import main
from dlbkit.face.experiments import load_experiment, run_sweep, save_all, summarise

from support.experiment_files import TINY

GRID = '\n[grid]\n"workload.items" = [40, 7]\n"platform.nodes[1].speed" = [1.0, 0.5]\n'
SWAPPED = '\n[grid]\n"platform.nodes[1].speed" = [1.0, 0.5]\n"workload.items" = [40, 7]\n'
ONLY_SS = TINY[:TINY.index('[[balancers]]\nname = "static"')]
SHRUNK = ONLY_SS + '\n[grid]\n"workload.items" = [40]\n"platform.nodes[1].speed" = [1.0, 0.5]\n'


def simulate(tmp_path, capsys, text, out, name="exp.toml"):
    p = tmp_path / name
    p.write_text(text)
    code = main(["simulate", str(p), "--out", str(out), "--no-progress"])
    o, err = capsys.readouterr()
    return code, o, err


def rows(out, name="results.csv"):
    """results.csv (or *name*): its header and its rows by run key, without wall_s."""
    with open(out / name, newline="") as fh:
        reader = csv.DictReader(fh)
        body = list(reader)
    keyed = {(r["label"], r["point"], r["repetition"]): {k: v for k, v in r.items() if k != "wall_s"} for r in body}
    assert len(keyed) == len(body)
    return reader.fieldnames, keyed


def pngs(out):
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.png"))}


def test_a_resume_after_balancers_and_grid_values_are_removed_leaves_only_the_current_runs(tmp_path, capsys):
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert simulate(tmp_path, capsys, TINY + GRID, out)[0] == 0
    assert len(pngs(out)) == 18  # bars, and gantt and work of 2 balancers at 4 points
    first = rows(out)
    # what the user put there: a note, a picture of their own, one under a dlbkit figure's name
    # (no digest: dlbkit cannot tell it drew it), a copy of a dlbkit figure under a name of their own
    (out / "notes.txt").write_text("keep me")
    (out / "mine.png").write_bytes(b"\x89PNG\r\n\x1a\nmine")
    (out / "gantt_by-hand.png").write_bytes(b"\x89PNG\r\n\x1a\nby hand")
    drawn = out / "gantt_STATIC__workload.items-7-platform.nodes-1-.speed-0.5.png"
    (out / "favourite.png").write_bytes(drawn.read_bytes())
    mine = {n: (out / n).read_bytes() for n in ("notes.txt", "mine.png", "gantt_by-hand.png", "favourite.png")}

    code, text, _ = simulate(tmp_path, capsys, SHRUNK, out)
    assert code == 0 and "0 runs done, 6 reused" in text
    assert text.endswith(f"PNG plots and report.html in {out}\nmoved 18 row(s) of runs the experiment no longer "
                         "has from results.csv to results-removed.csv, and removed the plots dlbkit drew for them\n")
    assert simulate(tmp_path, capsys, SHRUNK, fresh, "fresh.toml")[0] == 0
    assert rows(out) == rows(fresh)  # the removed runs' rows are out of results.csv, the kept ones as they were
    assert len(rows(out)[1]) == 6
    # ... and in results-removed.csv, as they were: with the kept ones, the first sweep's rows
    aside = rows(out, "results-removed.csv")
    assert aside[0] == first[0] and len(aside[1]) == 18
    assert {**aside[1], **rows(out)[1]} == first[1]
    current = pngs(fresh)
    assert len(current) == 6  # makespan, efficiency; gantt and work of ss at 2 points
    assert pngs(out) == {**current, **{n: b for n, b in mine.items() if n.endswith(".png")}}
    assert (out / "notes.txt").read_bytes() == mine["notes.txt"]
    assert (out / "summary.csv").read_bytes() == (fresh / "summary.csv").read_bytes()
    report = (out / "report.html").read_text()
    assert "STATIC" not in report and "items=7" not in report


def test_a_bar_chart_no_longer_drawn_is_removed(tmp_path):
    """A bar chart is drawn for a metric some balancer has a finite, non-zero mean of; when none has
    any more (here: efficiency made NaN), its PNG from before must go with it."""
    p = tmp_path / "exp.toml"
    p.write_text(TINY)
    exp = load_experiment(p)
    sweep = run_sweep(exp, tmp_path / "out")
    summary = summarise(sweep.rows)
    first = save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    assert [q.name for q in first["bars"]] == ["makespan.png", "efficiency.png"]
    gone = [dataclasses.replace(s, mean=math.nan) if s.metric == "efficiency" else s for s in summary]
    again = save_all(sweep.out_dir, gone, sweep.traces, family=exp.family, remove_stale=True)
    assert [q.name for q in again["bars"]] == ["makespan.png"]
    assert set(pngs(sweep.out_dir)) == {q.name for paths in again.values() for q in paths}
    assert not (sweep.out_dir / "efficiency.png").exists() and len(pngs(sweep.out_dir)) == 5


def test_results_of_another_experiment_are_refused_and_nothing_removed(tmp_path, capsys):
    out = tmp_path / "out"
    assert simulate(tmp_path, capsys, TINY, out)[0] == 0
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    other = TINY.replace('name = "tiny"', 'name = "other"').replace('[[balancers]]\nname = "ss"',
                                                                     '[[balancers]]\nname = "gss"')
    code, text, err = simulate(tmp_path, capsys, other, out, "other.toml")
    assert code == 2
    assert err == (f"dlbkit: error: --out {out} must be a fresh directory or one holding results of experiment "
                   "'other' (use another --out, or remove results.csv); got \"results.csv with rows of experiment "
                   "'tiny'\"\n")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


@pytest.mark.full  # the resume matrix: grids reordered (a resume after removals is the fast tier's)
def test_a_grid_written_in_another_key_order_resumes(tmp_path, capsys):
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert simulate(tmp_path, capsys, TINY + GRID, out)[0] == 0
    code, text, err = simulate(tmp_path, capsys, TINY + SWAPPED, out)
    assert code == 0, err
    assert "0 runs done, 24 reused from an earlier sweep, 0 failed" in text and "removed" not in text
    assert simulate(tmp_path, capsys, TINY + SWAPPED, fresh, "fresh.toml")[0] == 0
    header, keyed = rows(out)
    assert header.index("platform.nodes[1].speed") < header.index("workload.items")
    assert (header, keyed) == rows(fresh)  # the header and points in the file's order now
    assert set(pngs(out)) == set(pngs(fresh))  # figures named by the points in the new order, the old gone
    assert (out / "summary.csv").read_bytes() == (fresh / "summary.csv").read_bytes()


@pytest.mark.full  # the resume matrix: grids reordered
def test_a_grid_in_another_order_with_a_run_missing_runs_it_alone(tmp_path, capsys):
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert simulate(tmp_path, capsys, TINY + GRID, out)[0] == 0
    lines = (out / "results.csv").read_text().splitlines(keepends=True)
    (out / "results.csv").write_text("".join(lines[:-1]) + lines[-1][:30])  # the last row cut short
    code, text, err = simulate(tmp_path, capsys, TINY + SWAPPED, out)
    assert code == 0 and "1 runs done, 23 reused" in text, err
    assert simulate(tmp_path, capsys, TINY + SWAPPED, fresh, "fresh.toml")[0] == 0
    assert rows(out) == rows(fresh)


@pytest.mark.full  # the resume matrix: grids changed
@pytest.mark.parametrize("grid", [
    '\n[grid]\n"workload.items" = [40, 7]\n"platform.nodes[2].speed" = [1.0, 0.5]\n',  # another key
    '\n[grid]\n"workload.items" = [40, 7]\n',  # a key fewer
])
def test_a_grid_of_other_keys_is_still_refused_in_one_line(tmp_path, capsys, grid):
    out = tmp_path / "out"
    assert simulate(tmp_path, capsys, TINY + GRID, out)[0] == 0
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    code, text, err = simulate(tmp_path, capsys, TINY + grid, out)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"dlbkit: error: --out {out} must be a fresh directory or one holding results of this "
                          "same experiment, whose columns are ")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


@pytest.mark.full  # the resume matrix: grids changed
def test_a_grid_in_another_order_from_a_different_configuration_is_refused_and_the_file_untouched(tmp_path, capsys):
    """The grid's keys reordered and the workload changed: the rows are of another configuration, so
    the sweep is refused as before, and results.csv is not rewritten in the new order either."""
    out = tmp_path / "out"
    assert simulate(tmp_path, capsys, TINY + GRID, out)[0] == 0
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    changed = (TINY + SWAPPED).replace("high = 1.5", "high = 1.6")
    code, text, err = simulate(tmp_path, capsys, changed, out)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"dlbkit: error: --out {out} must be a fresh directory or one holding results of this "
                          "same experiment (use another --out, or remove results.csv); got \"results.csv row 'ss' "
                          "platform.nodes[1].speed=1.0, workload.items=40 repetition 0 from a different configuration\"")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files


def test_rows_set_aside_are_appended_and_another_header_gets_its_own_file(tmp_path):
    """The rows of removed runs accumulate in results-removed.csv; rows of other columns (an earlier
    grid) go to results-removed-1.csv, so no file ever mixes two headers and no row is lost."""
    from dlbkit.face.experiments.runner import _compact

    def write(header, recs):
        with open(tmp_path / "results.csv", "w", newline="") as fh:
            csv.writer(fh).writerows([header, *recs])

    def read(name):
        with open(tmp_path / name, newline="") as fh:
            return list(csv.reader(fh))

    h = ["label", "point", "repetition", "makespan"]
    write(h, [["a", "p", "0", "1.5"], ["b", "p", "0", "2"], ["b", "p", "0", "2.5"], ["c", "p", "0"]])
    assert _compact(tmp_path / "results.csv", {("b", "p", "0")}) == tmp_path / "results-removed.csv"
    assert read("results.csv") == [h, ["a", "p", "0", "1.5"]]  # the cut-short row of c dropped as before
    assert read("results-removed.csv") == [h, ["b", "p", "0", "2.5"]]  # the latest row of b
    write(h, [["a", "p", "0", "1.5"]])
    assert _compact(tmp_path / "results.csv", {("a", "p", "0")}) == tmp_path / "results-removed.csv"
    assert read("results-removed.csv") == [h, ["b", "p", "0", "2.5"], ["a", "p", "0", "1.5"]]
    g = ["label", "point", "repetition", "x", "makespan"]
    write(g, [["a", "x=1", "0", "1", "3"]])
    assert _compact(tmp_path / "results.csv", {("a", "x=1", "0")}) == tmp_path / "results-removed-1.csv"
    assert read("results-removed-1.csv") == [g, ["a", "x=1", "0", "1", "3"]]
    assert read("results.csv") == [g]
    assert _compact(tmp_path / "results.csv", set()) is None
    # killed after setting a row aside but before results.csv lost it: the next sweep does not write it twice
    write(h, [["b", "p", "0", "2.5"], ["d", "p", "0", "4"]])
    _compact(tmp_path / "results.csv", {("b", "p", "0"), ("d", "p", "0")})
    assert read("results-removed.csv") == [h, ["b", "p", "0", "2.5"], ["a", "p", "0", "1.5"], ["d", "p", "0", "4"]]


def test_a_copy_of_a_figure_under_a_figure_like_name_is_kept(tmp_path, capsys):
    """``cp gantt_ss.png gantt_ss-before.png`` (a figure kept to compare with the next sweep): the copy
    carries the figure's digest and kinds and starts as a figure's name does, yet dlbkit did not
    write that file. A resume of the very same experiment deleted it; it must stay, while a figure
    dlbkit wrote for a run taken out of the file still goes."""
    out = tmp_path / "out"
    assert simulate(tmp_path, capsys, TINY, out)[0] == 0
    copies = {}
    for name in ("gantt_ss.png", "makespan.png"):
        stem = name[:-4]
        copies[f"{stem}-before.png"] = (out / name).read_bytes()
        (out / f"{stem}-before.png").write_bytes(copies[f"{stem}-before.png"])
    (out / "work_ss-before.png").write_bytes((out / "work_ss.png").read_bytes())
    copies["work_ss-before.png"] = (out / "work_ss.png").read_bytes()
    assert simulate(tmp_path, capsys, TINY, out)[0] == 0
    assert {n: (out / n).read_bytes() for n in copies if (out / n).exists()} == copies
    assert simulate(tmp_path, capsys, ONLY_SS, out)[0] == 0  # STATIC taken out: its figures go, the copies stay
    assert not list(out.glob("*STATIC*")) and all((out / n).exists() for n in copies)


def test_save_all_on_some_runs_leaves_the_other_figures_unless_asked_to_remove_them(tmp_path):
    """``save_all`` is public: redrawing one run's figures into a sweep's directory must not delete
    every other figure there; removing what the sweep no longer draws is the CLI's choice
    (``remove_stale=True``, what ``dlbkit simulate`` passes)."""
    p = tmp_path / "exp.toml"
    p.write_text(TINY)
    exp = load_experiment(p)
    sweep = run_sweep(exp, tmp_path / "out")
    summary = summarise(sweep.rows)
    save_all(sweep.out_dir, summary, sweep.traces, family=exp.family)
    before = pngs(sweep.out_dir)
    assert len(before) == 6
    one = dict(list(sweep.traces.items())[:1])
    save_all(sweep.out_dir, summary, one, family=exp.family)
    assert pngs(sweep.out_dir) == before
    # the sweep's runs named but one trace lost (a replay lost on an executor): nothing of theirs goes
    runs = [(r["label"], r["point"]) for r in sweep.rows if r["repetition"] == 0]
    assert len(runs) == 2 and sorted(runs) == sorted(sweep.traces)
    save_all(sweep.out_dir, summary, one, family=exp.family, remove_stale=True, runs=runs)
    assert pngs(sweep.out_dir) == before
    written = save_all(sweep.out_dir, summary, one, family=exp.family, remove_stale=True)
    assert set(pngs(sweep.out_dir)) == {q.name for paths in written.values() for q in paths} and len(pngs(sweep.out_dir)) == 4


def test_a_workload_file_edited_in_place_is_not_taken_for_the_same_runs(tmp_path, capsys):
    """A workload file named by the experiment (a stream's arrivals CSV) is part of its runs' fingerprint by
    its bytes, not its name: edited in place, the sweep's rows are from a different configuration, which
    resuming refuses as it does for an edited experiment file (one line, exit 2; before, the old rows were
    reused as if nothing had changed); the same bytes again resume the sweep. One job of demand 2 on one
    node of speed 1 ends at 2 s (exact)."""
    arrivals = tmp_path / "jobs.csv"
    arrivals.write_text("time,origin,demand\n0.0,a,2.0\n")
    text = ('name = "s"\n[platform]\nnodes = [{name = "a", speed = 1.0}]\n[workload]\nkind = "stream"\n'
            'trace = "jobs.csv"\n[[balancers]]\nname = "local"\n')
    out = tmp_path / "o"
    assert simulate(tmp_path, capsys, text, out)[0] == 0
    before = rows(out)
    (_, first), = before[1].items()
    assert float(first["makespan"]) == 2.0
    arrivals.write_text("time,origin,demand\n0.0,a,3.0\n")
    code, _, err = simulate(tmp_path, capsys, text, out)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "from a different configuration" in err, err
    assert rows(out) == before  # nothing lost
    arrivals.write_text("time,origin,demand\n0.0,a,2.0\n")  # the same bytes again: the sweep resumes
    code, o, _ = simulate(tmp_path, capsys, text, out)
    assert code == 0 and "1 reused" in o and rows(out) == before
