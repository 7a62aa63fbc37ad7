"""The shipped job-stream experiment `streams_hetero`: it runs through `dlbkit simulate`, writes the CSVs,
the report and the stream family's plots, and nezha avoids the nodes that lost their CPU."""

import csv
import re
from pathlib import Path

import pytest

import dlbkit.face.experiments as experiments
from dlbkit.face.cli import find_experiment, main
from dlbkit.model.platform import load_toml

from support import REPO

README = REPO / "README.md"
#: the reduced run: one repetition of 7,000 jobs (arrivals end near t = 109 s, after the pulse of
#: 40 s – 100 s on hot0 and hot1), every balancer row of the shipped file
JOBS = 7000


def _hot_tasks(trace, names, start, end) -> int:
    """Tasks that reached hot0 or hot1 while their CPU was taken (t_ask in [start, end))."""
    hot = {names.index("hot0"), names.index("hot1")}
    return sum(1 for j, t in zip(trace.node, trace.t_ask) if j in hot and start <= t < end)


@pytest.mark.full  # end to end: the shipped streams_hetero experiment and its figures
def test_streams_hetero_reduced_runs_and_nezha_avoids_the_overloaded_nodes(tmp_path, monkeypatch, capsys):
    """Criterion, stated before the first run: during the pulse (40 s ≤ arrival at the node < 100 s) the
    two over-loaded nodes receive fewer tasks under nezha than under random-place, with exact information
    and with gossip alike (random-place sends each node 1/32 of the tasks whatever its load)."""
    path = find_experiment("streams_hetero")
    d = load_toml(path)
    d["repetitions"] = 1
    d["workload"]["jobs"] = JOBS
    monkeypatch.setattr(experiments, "load_experiment", lambda p: experiments.Experiment.from_dict(
        d, base_dir=Path(p).parent, default_name=Path(p).stem, path=Path(p)))
    kept = {}
    run_sweep = experiments.run_sweep

    def keep(*args, **kw):
        kept["sweep"] = run_sweep(*args, **kw)
        return kept["sweep"]

    monkeypatch.setattr(experiments, "run_sweep", keep)
    out = tmp_path / "out"
    assert main(["simulate", "streams_hetero", "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "22 runs (22 balancers × 1 grid point(s) × 1 repetitions)" in printed

    sweep = kept["sweep"]
    names = [n.name for n in sweep.experiment.platform.nodes]
    labels = [b.label for b in sweep.experiment.balancers]
    from dlbkit.balancers import registry
    assert {b.name for b in sweep.experiment.balancers} == set(registry.names("placement"))
    assert all(f"{b} / {i}" in labels for b in registry.names("placement") for i in ("exact", "gossip"))

    rows = list(csv.DictReader(open(out / "results.csv", newline="")))
    assert len(rows) == 22 and {r["status"] for r in rows} == {"ok"}
    assert (out / "summary.csv").stat().st_size > 0
    html = (out / "report.html").read_text()
    for label in ("nezha-exact", "random-place-gossip"):
        assert f"<img src='queues_{label}.png'" in html and f"<img src='response_cdf_{label}.png'" in html
        assert (out / f"queues_{label}.png").stat().st_size > 5000

    pulse = sweep.experiment.platform.nodes[names.index("hot0")].availability
    start, end = pulse.start, pulse.start + pulse.duration
    counts = {lbl: _hot_tasks(tr, names, start, end) for (lbl, _), tr in sweep.traces.items()}
    print(counts)
    for info in ("exact", "gossip"):
        assert counts[f"nezha / {info}"] < counts[f"random-place / {info}"], (info, counts)


@pytest.mark.full
def test_readme_figures_are_what_the_command_prints(tmp_path, capsys):
    """The README's streams_hetero figures (mean and p99 response per balancer) are the printed table's."""
    assert main(["simulate", "streams_hetero", "--out", str(tmp_path), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    head = next(ln for ln in printed if ln.startswith("balancer "))
    cols = re.split(r"\s{2,}", head.strip())
    table = {}
    for ln in printed[printed.index(head) + 2:]:
        if not ln.strip() or ln.startswith("mean ±"):
            break
        cells = re.split(r"\s{2,}", ln.strip())
        table[cells[0]] = dict(zip(cols, cells))
    text = README.read_text()
    para = text[text.index("`dlbkit simulate streams_hetero`"):]
    para = para[:para.index("\n\n")]
    quoted = re.findall(r"`([a-z-]+ / (?:exact|gossip))`\s+([0-9.]+)\s+s\s+\(p99\s+([0-9.]+)\s+s\)", para)
    assert len(quoted) == 8
    for label, mean, p99 in quoted:
        assert table[label]["response_mean"].split(" ±")[0].rstrip(" *") == mean, label
        assert table[label]["response_p99"].split(" ±")[0].rstrip(" *") == p99, label
