"""``[grid]`` sweeps run in parallel and resumed: an accepted sweep run with ``dlbkit simulate --jobs 2``,
with :func:`dlbkit.run_experiment` on a ``ThreadPoolExecutor`` or a ``ProcessPoolExecutor``, or
resumed (run on a smaller grid then the whole one; or run, then some results.csv rows and PNG plots
deleted or the last row cut short, then run again) writes results.csv with exactly one row per run
key, each equal to the fresh serial sweep's row but for ``wall_s``, and the resumed directory holds
the plots the first whole run wrote.

The grids are :func:`face/experiments/test_grid_fuzz.gridded`'s mild ones (one or two of the experiment's own keys, its
own value and an edge value) over the tiny divisible sweep, an inline graph and the heterogeneous
streams. Each example runs two to four sweeps (seconds): the default run is a few fixed examples,
the drawn ones run at their full count in the full tier.
"""

import copy
import csv
import json
import math
import random
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.face.cli import main

from support.fuzz import FUZZ, deadline, to_toml
from support.fuzz_grid import BASES, capped, gridded
from support.fuzz_runs import (
    _load,
    workdir,  # noqa: F401 (fixtures)
)
from support.profiles import examples

MODES = ["jobs 2", "threads", "processes", "grown", "rows and plots deleted", "last row cut"]


def _rows(out: Path) -> dict[tuple, dict]:
    """results.csv by run key (label, point, repetition), without wall_s; a key twice fails."""
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    keyed = {}
    for r in rows:
        key = (r["label"], r["point"], r["repetition"])
        assert key not in keyed, f"run key {key} has two rows in {out / 'results.csv'}"
        keyed[key] = {c: v for c, v in r.items() if c != "wall_s"}
    return keyed


def _simulate(path: Path, out: Path, jobs: int, capsys) -> None:
    code = main(["simulate", str(path), "--out", str(out), "--jobs", str(jobs), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err, err


def _smaller(d: dict) -> dict | None:
    """*d* with one grid key's last value left out (a sweep the whole grid then grows), or None."""
    for key, values in d["grid"].items():
        if len(values) > 1:
            d = copy.deepcopy(d)
            d["grid"][key] = values[:-1]
            return d
    return None


def sweep_again(d: dict, mode: str, workdir, tmp: Path, capsys, rng: random.Random) -> str:
    """Run *d*'s sweep fresh (serially) and by *mode*; the rows must be the fresh ones."""
    d = capped(d)
    exp = _load(d, workdir)
    if exp is None or exp.n_runs > 16:
        return "refused or long"
    path = workdir / "experiments" / "fuzz.toml"  # _load wrote d there
    fresh, out = tmp / "fresh", tmp / "out"
    with deadline(120):
        dlbkit.run_experiment(exp, fresh)
        if mode == "jobs 2":
            _simulate(path, out, 2, capsys)
        elif mode in ("threads", "processes"):
            pool = ThreadPoolExecutor if mode == "threads" else ProcessPoolExecutor
            with pool(max_workers=2) as ex:
                dlbkit.run_experiment(exp, out, executor=ex)
        elif mode == "grown":
            small = _smaller(d)
            if small is None or _load(small, workdir) is None:
                return "nothing to grow"
            _simulate(path, out, rng.choice([1, 2]), capsys)  # the smaller grid (_load wrote it)
            path.write_text(to_toml(d))
            _simulate(path, out, rng.choice([1, 2]), capsys)
        else:
            _simulate(path, out, 1, capsys)
            plots = sorted(p.name for p in out.glob("*.png"))
            csv_path = out / "results.csv"
            lines = csv_path.read_text().splitlines(keepends=True)
            if mode == "last row cut":
                csv_path.write_text("".join(lines)[:-rng.randint(1, len(lines[-1]) - 1)])
            else:
                gone = set(rng.sample(range(1, len(lines)), rng.randint(1, len(lines) - 1)))
                csv_path.write_text("".join(line for i, line in enumerate(lines) if i not in gone))
                for name in rng.sample(plots, rng.randint(0, len(plots))):
                    (out / name).unlink()
            _simulate(path, out, rng.choice([1, 2]), capsys)
            assert sorted(p.name for p in out.glob("*.png")) == plots
    want, got = _rows(fresh), _rows(out)
    assert len(want) == exp.n_runs and set(got) == set(want), (sorted(want), sorted(got))
    assert {k: v for k, v in got.items() if v != want[k]} == {}, [(want[k], got[k]) for k in got if got[k] != want[k]]
    return "same rows"


#: (base, grid, mode): the tiny sweep and a stream one, every mode once
FIXED = [("tiny", {"workload.items": [40, 7], "platform.nodes[1].speed": [1.0, 0.5]}, "jobs 2"),
         ("tiny", {"workload.items": [40, 7]}, "processes"),
         ("streams_hetero", None, "threads"),
         ("tiny", {"workload.items": [40, 7], "platform.nodes[2].speed": [2.0, 0.25]}, "grown"),
         ("tiny", {"platform.nodes[1].speed": [1.0, 0.5, 2.0]}, "rows and plots deleted"),
         ("graph_inline", None, "last row cut")]


@pytest.mark.parametrize("name, grid, mode", FIXED)
def test_a_sweep_run_in_parallel_or_resumed_has_the_fresh_rows_once(name, grid, mode, workdir, tmp_path, capsys):
    d = json.loads(json.dumps(BASES[name]))
    d["repetitions"], d["balancers"] = 2, d["balancers"][:3]  # a sweep of at most 16 runs
    if grid is None:  # the base's own first key, its value and another
        key = "platform.nodes[0].speed"
        grid = {key: [0.5, 1.0]}
    d["grid"] = grid
    assert sweep_again(d, mode, workdir, tmp_path, capsys, random.Random(7)) == "same rows"


@pytest.mark.full
@settings(FUZZ, max_examples=examples(75))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(data=st.data(), name=st.sampled_from(["tiny", "graph_inline", "streams_hetero"]), mode=st.sampled_from(MODES),
       reps=st.integers(1, 2), seed=st.integers(0, 2**16))
def test_drawn_sweeps_run_in_parallel_or_resumed_have_the_fresh_rows_once(data, name, mode, reps, seed, workdir,
                                                                          tmp_path_factory, capsys):
    d = data.draw(gridded(BASES[name], mild=True))
    d["repetitions"], d["balancers"] = reps, d["balancers"][:3]
    event(sweep_again(d, mode, workdir, tmp_path_factory.mktemp("grid"), capsys, random.Random(seed)))


# --- regressions --------------------------------------------------------------------------------------
def _cut_and_resume(d: dict, cut, workdir, tmp_path) -> tuple[dict, dict]:
    """*d*'s sweep fresh, and run again after ``cut(text, last_row)`` left results.csv cut short."""
    exp = _load(d, workdir)
    dlbkit.run_experiment(exp, tmp_path / "fresh")
    dlbkit.run_experiment(exp, tmp_path / "out")
    csv_path = tmp_path / "out" / "results.csv"
    with open(csv_path, newline="") as f:
        text = f.read()
    last = text[text.rstrip("\r\n").rfind("\n") + 1:]
    with open(csv_path, "w", newline="") as f:
        f.write(cut(text, last))
    dlbkit.run_experiment(exp, tmp_path / "out")
    return _rows(tmp_path / "fresh"), _rows(tmp_path / "out")


def test_a_last_row_cut_inside_a_quoted_point_is_run_again_and_kept(workdir, tmp_path):
    """The last row cut inside its point (a grid value's JSON, quoted): the resumed sweep began a new
    line, which the open quote took in, with every row written after it; compacting then dropped
    them all (results.csv lacked the rerun row, and the next resume ran it again)."""
    d = json.loads(json.dumps(BASES["tiny"]))
    d["grid"] = {"platform.nodes": [d["platform"]["nodes"]]}
    want, got = _cut_and_resume(d, lambda text, last: text[:len(text) - len(last) + last.index("speed")],
                                workdir, tmp_path)
    assert len(want) == 2 and got == want


def test_a_last_row_that_lost_its_last_digits_is_run_again(workdir, tmp_path):
    """A row cut short after a digit of its last number parsed as a complete row: it was kept, a
    resumed row unlike the fresh one (its utilisation 0.8123 read as 0.81)."""
    d = json.loads(json.dumps(BASES["streams_hetero"]))
    d["balancers"] = d["balancers"][:1]

    def cut(text, last):
        assert math.isfinite(float(last.rstrip("\r\n").rsplit(",", 1)[1]))  # a number with digits to lose
        return text[:-4]
    want, got = _cut_and_resume(d, cut, workdir, tmp_path)
    assert got == want
