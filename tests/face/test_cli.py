"""The dlbkit command line: simulate, balancers, bench, reproduce, and one-line errors with status 2."""

import csv
import json
import math
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

import dlbkit
from dlbkit.face.cli import main
from dlbkit.face.experiments import run_seed
from dlbkit.face.reproduce import Claim

from support.experiment_files import TINY

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write(tmp_path, text, name="exp.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# --- simulate ----------------------------------------------------------------------------------------
def test_simulate_writes_results_summary_plots_and_report(tmp_path, capsys):
    exp = write(tmp_path, TINY)
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "simulate", exp, "--out", out_dir)
    assert code == 0, err

    rows = list(csv.DictReader(open(out_dir / "results.csv", newline="")))
    assert sorted((r["label"], int(r["repetition"])) for r in rows) == \
        sorted((lbl, k) for lbl in ("ss", "STATIC") for k in range(3))
    means = {lbl: statistics.mean(float(r["makespan"]) for r in rows if r["label"] == lbl) for lbl in ("ss", "STATIC")}
    best = min(means, key=means.get)  # the table is followed by the verdict on the family's main metric
    verdict = next(ln for ln in out.splitlines() if ln.startswith("best makespan (lower is better): "))
    assert verdict.startswith(f"best makespan (lower is better): {best} ") and "runner-up" in verdict
    assert all(r["status"] == "ok" and r["experiment"] == "tiny" for r in rows)
    assert {int(r["seed"]) for r in rows} == {run_seed(7, k) for k in range(3)}
    assert all(float(r["chunks"]) == 120 for r in rows if r["label"] == "ss")
    # a row's numbers are those of the same run through the Python API
    platform = dlbkit.Platform.from_dict({"nodes": [{"name": "m", "speed": 1.0}, {"name": "a", "speed": 1.0},
                                                    {"name": "b", "speed": 2.0, "availability": {
                                                        "kind": "pulse", "start": 5.0, "duration": 10.0,
                                                        "level": 0.5}}],
                                          "network": {"latency": 1e-3, "bandwidth": 1e8}})
    res = dlbkit.simulate(platform, dlbkit.Divisible(120, dlbkit.CostModel("uniform", low=0.5, high=1.5)),
                          "static", seed=run_seed(7, 2), master="m")
    row = next(r for r in rows if r["label"] == "STATIC" and r["repetition"] == "2")
    assert float(row["makespan"]) == pytest.approx(res.makespan, rel=1e-12)

    summary = list(csv.DictReader(open(out_dir / "summary.csv", newline="")))
    ms = {r["label"]: r for r in summary if r["metric"] == "makespan"}
    assert set(ms) == {"ss", "STATIC"}
    for label in ("ss", "STATIC"):
        vals = [float(r["makespan"]) for r in rows if r["label"] == label]
        assert int(ms[label]["n"]) == 3
        assert float(ms[label]["mean"]) == pytest.approx(statistics.mean(vals), rel=1e-12)
        assert float(ms[label]["ci95"]) == pytest.approx(4.302653 * statistics.stdev(vals) / math.sqrt(3), rel=1e-6)

    for png in ("makespan.png", "efficiency.png", "gantt_ss.png", "gantt_STATIC.png", "work_ss.png",
                "work_STATIC.png"):
        data = (out_dir / png).read_bytes()
        assert data[:8] == PNG_MAGIC and len(data) > 5000, png

    html = (out_dir / "report.html").read_text()
    assert "<h1>tiny</h1>" in html and "two balancers on a three-node platform" in html
    assert "<img src='gantt_ss.png'" in html and "<img src='makespan.png'" in html
    assert "pulse: 0.5 from 5 s for 10 s" in html
    assert f"{float(ms['ss']['mean']):.2f}" in html or f"{float(ms['ss']['mean']):.1f}" in html
    assert "base seed <code>7</code>" in html and f"dlbkit simulate {exp}" in html

    # the printed table: a row per balancer with mean ± CI
    line = next(ln for ln in out.splitlines() if ln.startswith("STATIC"))
    assert "±" in line and line.split()[1] == "3"
    assert "makespan" in out and "efficiency" in out


def test_simulate_resumes(tmp_path, capsys):
    exp = write(tmp_path, TINY)
    out_dir = tmp_path / "out"
    assert run(capsys, "simulate", exp, "--out", out_dir)[0] == 0
    code, out, _ = run(capsys, "simulate", exp, "--out", out_dir, "--jobs", "2")
    assert code == 0
    assert "0 runs done, 6 reused" in out
    assert len(list(csv.DictReader(open(out_dir / "results.csv")))) == 6


def test_simulate_finds_shipped_experiments():
    from dlbkit.face.cli import find_experiment, shipped_experiments

    assert "demo" in shipped_experiments()
    p = find_experiment("demo")
    assert p.name == "demo.toml" and p.is_file()
    assert find_experiment("demo.toml") == p


def test_shipped_demo_platform_is_heterogeneous_and_non_dedicated():
    from dlbkit.face.cli import shipped_experiments

    plat = dlbkit.Platform.from_toml(shipped_experiments()["demo"].parent.parent / "platforms" / "demo16.toml")
    workers = [n for n in plat.nodes if n.name != "master"]
    assert len(workers) == 16
    speeds = [n.speed for n in workers]
    assert (min(speeds), max(speeds)) == (1.0, 8.0)
    kinds = [type(n.availability).__name__ for n in workers]
    assert kinds.count("Pulse") == 2 and kinds.count("Markov") == 1
    assert (plat.network.latency, plat.network.bandwidth) == (1e-4, 125e6)


# --- bad input: one line on stderr, status 2, no traceback -----------------------------------------------
BAD = {
    "malformed TOML": (TINY.replace('name = "tiny"', 'name = "tiny'), "TOML syntax"),
    "unknown balancer": (TINY.replace('name = "static"', 'name = "nosuch"'), "balancers[1].name"),
    # a typo is answered as a balancer of another kind is: the names of the family's kind, not all 60
    "balancer typo lists the family's kind": (TINY.replace('name = "static"', 'name = "statics"'),
                                              "balancers[1].name must be a chunking balancer for a divisible "
                                              "workload: af, auto, awf,"),
    "balancer of another kind": (TINY.replace('name = "static"', 'name = "heft"'),
                                 "balancers[1].name must be a chunking balancer for a divisible workload: af,"),
    "unknown parameter": (TINY.replace('name = "ss"', 'name = "ss"\nparams = {bogus = 3}'),
                          "balancers[0].params.bogus"),
    "bad parameter value": (TINY.replace('name = "ss"', 'name = "ss"\nparams = {size = 0}'), "balancers[0].params"),
    "negative speed": (TINY.replace('{name = "a", speed = 1.0}', '{name = "a", speed = -1.0}'),
                       "platform.nodes[1].speed"),
    "zero bandwidth": (TINY.replace("bandwidth = 1e8", "bandwidth = 0"), "platform.network.bandwidth"),
    "availability above 1": (TINY.replace("level = 0.5", "level = 1.5"), "platform.nodes[2].availability.level"),
    "availability zero": (TINY.replace('{name = "a", speed = 1.0}', '{name = "a", speed = 1.0, availability = 0}'),
                          "platform.nodes[1].availability"),
    "missing speed": (TINY.replace('{name = "a", speed = 1.0}', '{name = "a"}'), "platform.nodes[1].speed"),
    "missing workload items": (TINY.replace("items = 120\n", ""), "workload.items"),
    "missing balancers": (TINY.split("[[balancers]]")[0], "balancers"),
    "no nodes": (re.sub(r"nodes = \[.*?\n\]\n", "nodes = []\n", TINY, flags=re.S), "platform.nodes"),
    "unknown top-level key": ("colour = 'red'\n" + TINY, "colour"),
    "zero repetitions": (TINY.replace("repetitions = 3", "repetitions = 0"), "repetitions"),
    "non-positive items": (TINY.replace("items = 120", "items = 0"), "workload.items"),
    "unknown master": (TINY.replace('master = "m"', 'master = "boss"'), "engine.master"),
    "unknown engine option": (TINY.replace('master = "m"', 'master = "m"\nspeedup = 2'), "engine.speedup"),
    "bad grid key": (TINY + '\n[grid]\n"workload.itemz" = [1, 2]\n', "grid.workload.itemz"),
    "missing platform file": (TINY.split("[platform]")[0] + '[platform]\nfile = "nowhere.toml"\n[workload]'
                              + TINY.split("[workload]")[1], "platform.file"),
}


def assert_one_line_error(code, err, field):
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("dlbkit: error: ")
    assert field in lines[0], (field, lines[0])


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_experiment_is_one_line_naming_the_field(tmp_path, capsys, case):
    text, field = BAD[case]
    exp = write(tmp_path, text)
    code, _out, err = run(capsys, "simulate", exp, "--out", tmp_path / "out")
    assert_one_line_error(code, err, field)
    assert not (tmp_path / "out" / "results.csv").exists()


def test_no_nodes_case_really_has_an_empty_node_list():
    assert "nodes = []\nnetwork" in BAD["no nodes"][0] and "speed" not in BAD["no nodes"][0]


@pytest.mark.parametrize("argv, field", [
    (["simulate", "no-such-experiment"], "EXPERIMENT"),
    (["bench", "m1", "--workers", "0", "--tasks", "10"], "--workers"),
    (["bench", "m1", "--workers", "4", "--tasks", "-1"], "--tasks"),
    (["bench", "m9", "--workers", "4", "--tasks", "10"], "model"),
    (["bench", "m1", "--workers", "four", "--tasks", "10"], "--workers"),
    (["bench", "m2", "--workers", "4", "--tasks", "10", "--seed", "-1"], "--seed must be an integer >= 0; got -1"),
    # an option of another model is an error, not silently ignored
    (["bench", "m1", "--workers", "4", "--tasks", "10", "--servers", "9"],
     "--servers must be used with the supermarket model (m1 and m2 take --workers, --tasks); got 9"),
    (["bench", "m2", "--workers", "4", "--tasks", "10", "--replace"], "--replace must be used with the supermarket"),
    # sizes bounded before anything is built (a trillion tasks was a MemoryError traceback, a billion
    # workers a long hang)
    (["bench", "m2", "--workers", "4", "--tasks", str(10**12)], "--tasks must be an integer in [1, 100,000,000]"),
    (["bench", "m1", "--workers", str(10**9), "--tasks", "10"], "--workers must be an integer in [1, 99,999]"),
    (["bench", "supermarket", "--servers", str(10**12), "--load", "0.5"], "--servers must be an integer in "
                                                                           "[1, 1,000,000]"),
    (["bench", "supermarket", "--servers", "10", "--load", "0.5", "--jobs", str(10**12)],
     "--jobs must be an integer in [10, 50,000,000]"),
    (["bench", "supermarket", "--servers", "10", "--load", "0.5", "--jobs", "100", "--workers", "3"],
     "--workers must be used with models m1 and m2"),
    # a bad value is named before a flag missing (the user got --workers wrong, not --tasks)
    (["bench", "m1", "--workers", "0"], "--workers must be an integer in [1, 99,999] (dlbkit's limit on nodes); got 0"),
    (["bench", "m2", "--workers", "1"], "--workers must be an integer in [2, 100,000] (M2 needs a victim"),
    (["bench", "m2", "--tasks", "0"], "--tasks must be an integer >= 1; got 0"),
    (["bench", "m1", "--tasks", "10"], "--workers must be given for model m1; got None"),
    (["bench", "supermarket", "--servers", "0"], "--servers must be an integer >= 1; got 0"),
    (["bench", "supermarket", "--load", "2"], "--load must be a number in (0, 1)"),
    (["bench", "supermarket", "--choices", "0"], "--choices must be an integer >= 1; got 0"),
    (["bench", "supermarket", "--load", "0.5"], "--servers must be given for the supermarket model; got None"),
    # 0 is given, not absent (0 in (None, False) is true: --choices 0 with m1 was silently ignored)
    (["bench", "m1", "--workers", "3", "--tasks", "5", "--choices", "0"],
     "--choices must be used with the supermarket"),
    (["bench", "supermarket", "--servers", "4", "--load", "0.5", "--workers", "0"],
     "--workers must be used with models m1 and m2"),
    (["balancers", "--kind", "wizardry"], "--kind"),
    (["reproduce", "nosuchpaper"], "reproduction"),
    (["frobnicate"], "frobnicate"),
])
def test_bad_command_line_is_one_line_with_status_2(tmp_path, capsys, argv, field):
    code, _out, err = run(capsys, *argv)
    assert_one_line_error(code, err, field)


def test_bad_jobs(tmp_path, capsys):
    code, _out, err = run(capsys, "simulate", write(tmp_path, TINY), "--out", tmp_path / "o", "--jobs", "0")
    assert_one_line_error(code, err, "--jobs must be an integer >= 1; got 0")


def test_more_jobs_than_processes_can_start_is_one_line(tmp_path, capsys):
    """--jobs 100000 went on to start that many processes (a hang); it is bounded as --workers is."""
    from dlbkit.runtime.backends.local import max_workers

    limit = max_workers()[0]
    code, _out, err = run(capsys, "simulate", write(tmp_path, TINY), "--out", tmp_path / "o", "--jobs", limit + 1)
    assert_one_line_error(code, err, f"--jobs must be a number of local worker processes at most {limit}")
    assert "for more, --executor mpi or dask" in err
    assert not (tmp_path / "o" / "results.csv").exists()
    with pytest.raises(dlbkit.ConfigError, match=r"^jobs must be a number of local worker processes"):
        dlbkit.run_experiment(write(tmp_path, TINY), tmp_path / "o2", jobs=limit + 1)


def test_console_script_and_module_exit_2_without_traceback(tmp_path):
    exp = write(tmp_path, TINY.replace("bandwidth = 1e8", "bandwidth = 0"))
    exe = Path(sys.executable).parent / "dlbkit"
    for cmd in ([str(exe)], [sys.executable, "-m", "dlbkit"]):
        p = subprocess.run(cmd + ["simulate", str(exp), "--out", str(tmp_path / "o")], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 2
        assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
        assert "platform.network.bandwidth must be a number > 0; got 0" in p.stderr


# --- balancers ---------------------------------------------------------------------------------------
def test_balancers_json_lists_ss_as_chunking(capsys):
    code, out, _ = run(capsys, "balancers", "--json")
    assert code == 0
    data = json.loads(out)
    by = {d["name"]: d for d in data}
    assert set(by) == set(dlbkit.REGISTRY)
    ss = by["ss"]
    assert set(ss) == {"name", "kind", "class", "parameters", "taxonomy", "source", "doc"}
    assert ss["kind"] == "chunking"
    assert ss["parameters"] == {"size": 1}
    assert ss["class"] == "dlbkit.families.divisible.balancers.selfsched.SelfScheduling"
    assert set(ss["taxonomy"]) == {"initiation", "location", "information", "transfer", "selection"}
    assert ss["doc"].startswith("SS, pure self-scheduling")
    assert by["static"]["parameters"] == {"size": None}


def test_balancers_text_and_kind_filter(capsys):
    code, out, _ = run(capsys, "balancers", "--kind", "chunking")
    assert code == 0
    assert "ss" in out and "parameters: size=1" in out and "taxonomy:" in out and "source:" in out
    code, out, _ = run(capsys, "balancers", "--kind", "migration", "--json")
    assert code == 0
    migration = json.loads(out)
    assert isinstance(migration, list) and all(d["kind"] == "migration" for d in migration)
    assert {d["name"] for d in migration} == {n for n, c in dlbkit.REGISTRY.items() if c.kind == "migration"}


def test_balancers_kind_offers_only_kinds_with_balancers(capsys):
    """--kind accepts, and its help lists, only the kinds that have registered balancers."""
    kinds = sorted({c.kind for c in dlbkit.REGISTRY.values()})
    assert "adaptive" not in kinds  # no adaptive balancer is registered (yet)
    code, out, err = run(capsys, "balancers", "--kind", "adaptive")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--kind must be one of chunking, placement, migration, repartition" in err
    code, out, _ = run(capsys, "balancers", "--help")
    assert "only balancers of this kind: chunking, placement, migration, repartition" in " ".join(out.split())


def test_balancers_print_plain_text_without_unshipped_files(capsys):
    """No Sphinx roles or literals, and no pointers to the repository's notes or MODELS.md."""
    for args in (("balancers",), ("balancers", "--json")):
        code, out, _ = run(capsys, *args)
        assert code == 0
        for mark in (":class:", ":func:", ":mod:", "``", "notes/", "MODELS.md", "DESIGN.md"):
            assert mark not in out, (args, mark)
    code, out, _ = run(capsys, "balancers", "--kind", "chunking")
    assert "(see BatchedFactoring)" in out


# --- bench -------------------------------------------------------------------------------------------
def test_bench_m1_reference_numbers(capsys):
    code, out, _ = run(capsys, "bench", "m1", "--workers", "16", "--tasks", "10000", "--json", "--seed", "5")
    assert code == 0
    res = json.loads(out)
    assert {"makespan", "events", "wall_s", "events_per_s", "model", "workers", "tasks"} <= set(res)
    assert res["makespan"] == pytest.approx(832.594, rel=1e-9)
    assert res["events"] == 30032
    assert (res["model"], res["workers"], res["tasks"]) == ("m1", 16, 10000)
    code, out, _ = run(capsys, "bench", "m1", "--workers", "16", "--tasks", "10000")
    assert code == 0 and "832.594000" in out and "30032" in out


# --- reproduce ---------------------------------------------------------------------------------------
def test_reproduce_table_and_exit_status(capsys, monkeypatch):
    import dlbkit.face.reproduce as rep

    claims = [Claim("speedup over no balancing", 6.0, 5.64, "in [4.5, 6.5]", True),
              Claim("rounds to balance", 2, 3, "<= 2", False)]
    monkeypatch.setattr(rep, "run", lambda name: claims)
    code, out, _ = run(capsys, "reproduce", "fake")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["claim", "paper", "ours", "tolerance", "result"]
    assert any("speedup over no balancing" in ln and "5.64" in ln and ln.rstrip().endswith("PASS") for ln in lines)
    assert any("rounds to balance" in ln and ln.rstrip().endswith("FAIL") for ln in lines)
    code, out, _ = run(capsys, "reproduce", "fake", "--json")
    assert code == 1
    assert json.loads(out) == [c.as_dict() for c in claims]
    monkeypatch.setattr(rep, "run", lambda name: claims[:1])
    assert run(capsys, "reproduce", "fake")[0] == 0


def test_reproduce_sanchez_json_is_consistent_with_exit_status(capsys):
    code, out, err = run(capsys, "reproduce", "sanchez2002", "--json")
    data = json.loads(out)
    assert data and all(list(d) == ["claim", "paper", "ours", "tolerance", "asserted", "ok"] for d in data)
    assert code == (0 if all(d["ok"] for d in data if d["asserted"]) else 1)


# --- failures and interruption -----------------------------------------------------------------------
def test_failed_runs_are_reported_and_exit_1(tmp_path, capsys, monkeypatch):
    from dlbkit.face.experiments import runner

    real = runner.simulate

    def flaky(platform, workload, balancer, **kw):
        if balancer == "static" and kw["seed"] == run_seed(7, 2):
            raise ValueError("engine exploded")
        return real(platform, workload, balancer, **kw)

    monkeypatch.setattr(runner, "simulate", flaky)
    out_dir = tmp_path / "out"
    code, out, err = run(capsys, "simulate", write(tmp_path, TINY), "--out", out_dir)
    assert code == 1 and "Traceback" not in err
    assert "1 run(s) failed" in out and "STATIC repetition 2: ValueError: engine exploded" in out
    rows = list(csv.DictReader(open(out_dir / "results.csv")))
    assert len(rows) == 6 and [r["label"] for r in rows if r["status"] != "ok"] == ["STATIC"]
    summary = [r for r in csv.DictReader(open(out_dir / "summary.csv")) if r["metric"] == "makespan"]
    assert {r["label"]: int(r["n"]) for r in summary} == {"ss": 3, "STATIC": 2}
    html = (out_dir / "report.html").read_text()
    assert "Failures (1)" in html and "engine exploded" in html


def test_interrupt_exits_130_and_keeps_finished_runs(tmp_path, capsys, monkeypatch):
    from dlbkit.face.experiments import runner

    real = runner.simulate
    calls = []

    def interrupt_third(*a, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(runner, "simulate", interrupt_third)
    out_dir = tmp_path / "out"
    code, _out, err = run(capsys, "simulate", write(tmp_path, TINY), "--out", out_dir)
    assert code == 130
    assert "interrupted" in err and "results.csv" in err and "Traceback" not in err
    assert len(list(csv.DictReader(open(out_dir / "results.csv")))) == 2
    monkeypatch.setattr(runner, "simulate", real)
    code, out, _ = run(capsys, "simulate", write(tmp_path, TINY), "--out", out_dir)
    assert code == 0 and "4 runs done, 2 reused" in out


# --- progress of a sweep --------------------------------------------------------------
def test_simulate_is_silent_on_stderr_that_is_not_a_terminal_and_draws_a_bar_when_asked(tmp_path, capsys):
    exp = write(tmp_path, TINY)
    code, out, err = run(capsys, "simulate", exp, "--out", tmp_path / "a")
    assert code == 0 and err == ""  # capsys's stderr is no terminal
    code, out, err = run(capsys, "simulate", exp, "--out", tmp_path / "b", "--progress")
    assert code == 0 and err.endswith("\n")
    assert re.search(r"100%\|.*\| 6/6 \[.*runs/s\]\n$", err)
    code, out, err = run(capsys, "simulate", exp, "--out", tmp_path / "c", "--no-progress")
    assert code == 0 and err == ""


def test_the_sweep_bar_is_a_bar_on_a_pseudo_terminal_and_lines_in_a_file(tmp_path):
    import os

    from dlbkit.face.cli import SweepBar
    master, slave = os.openpty()
    try:
        with os.fdopen(slave, "w") as tty:
            bar = SweepBar(tty)
            assert bar.enabled
            bar(1, 2)
            bar(2, 2)
        chunks = []  # every write the terminal got (one read may return only the first)
        while True:
            try:
                b = os.read(master, 4096)
            except OSError:  # EIO: the other end is closed and everything was read
                break
            if not b:
                break
            chunks.append(b)
        text = b"".join(chunks).decode()
    finally:
        os.close(master)
    assert "0/2" in text and "2/2 [" in text and "runs/s]" in text
    with open(tmp_path / "log", "w") as f:
        bar = SweepBar(f)
        bar(2, 2)
    # a file gets a line every LINE_S s (tests/face/cli/test_progress_lines.py): none for a sweep this short
    assert bar.mode == "lines" and (tmp_path / "log").read_text() == ""


def test_the_cli_module_runs_as_a_script():
    """``python -m dlbkit.face.cli`` builds every subcommand's parser (its __main__ guard once ran before the
    schedule and advise parsers were defined: a NameError)."""
    p = subprocess.run([sys.executable, "-m", "dlbkit.face.cli", "schedule", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: dlbkit schedule")


def test_every_command_spells_its_balancer_and_param_flags_alike():
    """--balancer is -b and --param is -p wherever a command takes them (schedule once had neither)."""
    import argparse

    from dlbkit.face.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    seen = {}
    for name, parser in sub.choices.items():
        flags = {o: a.option_strings for a in parser._actions for o in a.option_strings}
        for long, short in (("--balancer", "-b"), ("--param", "-p")):
            if long in flags:
                seen.setdefault(long, []).append(name)
                assert short in flags[long], (name, long)
    assert {"run", "replay", "cluster", "schedule"} <= set(seen["--param"])
    assert {"run", "replay", "cluster", "schedule", "advise"} <= set(seen["--balancer"])


def test_the_info_flags_help_lists_exactly_the_models_each_command_takes():
    """cluster --info said "gossip (default) or neighbour" and replay --info "exact, gossip, neighbour"
    while both take more (the scattering models; replay also monitored)."""
    import argparse

    from dlbkit.face.cli import build_parser
    from dlbkit.families.stream.face.cluster import NOT_IN_A_CLUSTER
    from dlbkit.info import names
    from dlbkit.families.stream.sim.engine import INFO_REFUSED

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))

    def listed(command):
        text = next(a.help for a in sub.choices[command]._actions if "--info" in a.option_strings)
        return {n for n in names() if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w.-])", text)}

    assert listed("cluster") == set(names()) - set(INFO_REFUSED) - set(NOT_IN_A_CLUSTER) - {"exact"}
    assert listed("replay") == set(names()) - set(INFO_REFUSED)


def test_reproduce_help_names_every_reproduction():
    import argparse

    from dlbkit.face.cli import build_parser
    from dlbkit.face.reproduce import REPRODUCTIONS

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = next(a.help for a in sub.choices["reproduce"]._actions if a.dest == "name")
    assert text == "reproduction name: " + ", ".join(sorted(REPRODUCTIONS))


@pytest.mark.parametrize("command, field, allowed", [
    (["bench", "supermarket", "--servers", "10", "--choices", "2", "--jobs", "100", "--load"], "--load",
     "a number in (0, 1) (the supermarket model is stable below 1)"),
    (["cluster", "operator:abs", "-N", "4", "--rate"], "--rate", "a finite number of jobs per second > 0"),
    (["run", "operator:abs", "-N", "4", "--emulate"], "--emulate[0]", "a finite number > 0"),
])
def test_minus_nan_after_an_option_is_a_value_not_the_short_option_n(command, field, allowed, capsys):
    """argparse tried -N (a prefix) before the negative-number test, so "-NaN" was -N with "aN" and the
    option before it had "expected one argument". Now it reaches dlbkit's check, as -nan did."""
    assert main(command + ["-NaN"]) == 2
    assert capsys.readouterr().err == f"dlbkit: error: {field} must be {allowed}; got nan\n"


def test_minus_nan_for_an_integer_option_is_argparses_one_line_naming_that_option(capsys):
    assert main(["bench", "m2", "-P", "-NaN", "-N", "1000"]) == 2
    assert capsys.readouterr().err == ("dlbkit: error: argument --workers/-P: invalid int value: '-NaN' "
                                       "(see 'dlbkit bench --help')\n")
    assert main(["bench", "m2", "-P", "2", "-N5", "--json"]) == 0  # a short option's attached value still is one
    assert json.loads(capsys.readouterr().out)["tasks"] == 5
