"""The shipped experiment `swf_stream`: every placement balancer, exact and gossiped, on the synthetic SWF log
(src/dlbkit/data/logs/synthetic64.swf) replayed on a heterogeneous 64-slot platform. The file loads (the
log's jobs fit the platform's slots), its header comment's load is the file's, and a reduced run writes the
CSVs and the report with each run's makespan beside the stream's lower bound, never below it."""

import csv
import re
from pathlib import Path

import pytest
from support import REPO

from dlbkit.balancers import registry
from dlbkit.face import experiments
from dlbkit.face.cli import find_experiment, main
from dlbkit.model.platform import load_toml

README = REPO / "README.md"
#: the reduced run: one repetition of the log's first two days (submit times [0, 172 800) s)
END = 172_800.0


def test_the_shipped_file_loads_with_every_placement_balancer_exact_and_gossiped():
    """22 rows: each placement balancer under exact information and under gossip; the platform's 64 slots
    equal the log's MaxProcs (the loader's width check passed)."""
    exp = experiments.load_experiment(find_experiment("swf_stream"))
    names = registry.names("placement")
    assert sorted(b.name for b in exp.balancers) == sorted(names * 2)
    assert {b.label for b in exp.balancers} == {f"{n} / {i}" for n in names for i in ("exact", "gossip")}
    assert sum(nd.cores for nd in exp.platform.nodes) == exp.workload.source.max_procs == 64


def test_the_stated_utilisation_is_the_files():
    """The header comment: 9,584,490 work units arriving over 411,100 s / 2.4 = 171,291.7 s on 80 work units
    per second (16 nodes of 4 cores, four each of speed 0.5, 1, 1.5, 2): 9,584,490 / 171,291.7 / 80 = 0.6994,
    "0.70 at full availability"."""
    exp = experiments.load_experiment(find_experiment("swf_stream"))
    rows = exp.workload.trace
    work = sum(d * w for _, _, d, w in rows)
    capacity = sum(nd.speed * nd.cores for nd in exp.platform.nodes)
    assert work == 9_584_490.0 and capacity == 80.0 and rows[-1][0] == pytest.approx(411_100 / 2.4)
    assert work / rows[-1][0] / capacity == pytest.approx(0.6994, abs=5e-5)


@pytest.mark.full  # end to end: 22 simulations of the log's first two days, the plots and the report (about 10 s of CPU)
def test_a_reduced_run_shows_the_lower_bound_beside_every_makespan(tmp_path, monkeypatch, capsys):
    path = find_experiment("swf_stream")
    d = load_toml(path)
    d["repetitions"] = 1
    d["workload"]["end"] = END
    monkeypatch.setattr(experiments, "load_experiment", lambda p: experiments.Experiment.from_dict(
        d, base_dir=Path(p).parent, default_name=Path(p).stem, path=Path(p)))
    out = tmp_path / "out"
    assert main(["simulate", "swf_stream", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "22 runs (22 balancers × 1 grid point(s) × 1 repetitions)" in printed
    assert "same for every balancer: lower_bound " in printed  # the log and the platform fix it

    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 22 and {r["status"] for r in rows} == {"ok"}
    bounds = {float(r["lower_bound"]) for r in rows}
    assert len(bounds) == 1 and next(iter(bounds)) > 0
    for r in rows:  # no rule ends before the bound (rounding: a bound one task decides equals its makespan)
        lb, makespan = float(r["lower_bound"]), float(r["makespan"])
        assert lb <= makespan * (1 + 1e-9), r["label"]
        assert float(r["efficiency"]) == pytest.approx(lb / makespan, rel=1e-12)
    html = (out / "report.html").read_text()
    heads = re.findall(r"<th[^>]*>([^<]+)</th>", html)  # the comparison table's columns, in order
    k = heads.index("makespan")
    assert heads[k:k + 3] == ["makespan", "lower_bound", "efficiency"]


@pytest.mark.full  # the whole shipped experiment, 66 runs (about 25 s on one core)
def test_readme_figures_are_what_the_command_prints(tmp_path, capsys):
    """The README's swf_stream figures (the bound, makespans and efficiencies, the best mean response) are the
    printed table's."""
    assert main(["simulate", "swf_stream", "--out", str(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    head = next(ln for ln in printed if ln.startswith("balancer "))
    cols = re.split(r"\s{2,}", head.strip())
    table = {}
    for ln in printed[printed.index(head) + 2:]:
        if not ln.strip() or ln.startswith("same for every"):
            break
        cells = re.split(r"\s{2,}", ln.strip())
        table[cells[0]] = {c: v.split(" ±")[0] for c, v in zip(cols, cells)}
    text = README.read_text()
    para = text[text.index("`dlbkit simulate swf_stream`"):]
    para = para[:para.index("\n\n")]
    bound = re.search(r"lower bound \(.*?\), (\d+) s for every run", para, re.DOTALL).group(1)
    assert f"same for every balancer: lower_bound {bound} ± 0" in printed
    quoted = re.findall(r"`([a-z-]+ / (?:exact|gossip))`\s+(\d+)\s+s\s+\(efficiency\s+([0-9.]+)\)", para)
    assert len(quoted) == 5
    for label, makespan, efficiency in quoted:
        assert table[label]["makespan"] == makespan and table[label]["efficiency"] == efficiency, label
    best = re.search(r"the best mean response is `([a-z-]+ / exact)`'s (\d+) s", para)
    assert table[best.group(1)]["response_mean"].rstrip(" *") == best.group(2)
