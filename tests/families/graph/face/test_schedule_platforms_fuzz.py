"""Fuzzing the platform files ``dlbkit schedule --platform`` reads: the thesis
simulator's ``.ntp`` network files (:func:`dlbkit.families.graph.model.costs.platform_from_ntp`) and platform
TOMLs, which the schedule fuzzer of :mod:`test_entry_points_fuzz` gives one fixed, valid file. Valid
``.ntp`` files (bus, ring, hypercube, chain, written by :func:`write_ntp`) are mutated as text
(:func:`test_entry_points_fuzz.mutated_text`: characters deleted, tokens such as ``nan``, ``1e400``,
``-1`` inserted, slices repeated); platform TOMLs (few nodes, several cores, an availability, a
ring, mesh or ``edges`` topology, latency and bandwidth) are mutated as tables
(:func:`face/experiments/test_bad_input_fuzz.mutated`, :func:`face/experiments/test_accepted_input_fuzz.edged`) or as text. Each is given to
``dlbkit schedule GRAPH --platform FILE`` with a cheap mapping balancer, both cost models and
contention. The rule of the other CLI fuzzers (:func:`test_entry_points_fuzz._schedule_is_a_plan_or_one_line`):
exit 0 with nothing on stderr and a finite makespan, or exit 2 with one ``dlbkit: error:`` line;
never a traceback, a RuntimeWarning or a hang.

Derandomized; the default run takes a few seconds, the full tier runs it at its full count. Below, one
regression test per defect the fuzzing found.
"""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.costs import platform_from_ntp, write_ntp
from dlbkit.model.platform import Network, Node, Platform

from support.fuzz import FUZZ, mutated, to_toml
from support.fuzz_entries import (
    _schedule_is_a_plan_or_one_line,
    graphs,  # noqa: F401 (fixtures)
    mutated_text,
)
from support.fuzz_runs import edged
from support.profiles import examples

#: the mappers without a search (milp, annealing, tabu run up to their limits: test_entry_points_fuzz)
CHEAP = ["cpop", "elastic-force", "heft", "hlf", "linear-clustering", "max-k1-sum", "metis", "peft", "random-map",
         "round-robin"]

NTP = {"bus3": ("complete", [1.0, 2.0, 0.5]), "ring4": ("ring", [1.0, 2.0, 1.0, 1.0]),
       "cube8": ("hypercube", [1.0, 1.5, 2.0, 0.5, 1.0, 1.0, 3.0, 1.0]), "chain2": ("chain", [1.0, 0.25])}

TOMLS = {
    "two": {"name": "two", "nodes": [{"name": "a", "speed": 1.0}, {"name": "b", "speed": 2.0}]},
    "cores": {"name": "cores", "nodes": [{"name": "m", "speed": 1.0}, {"name": "c", "speed": 2.0, "cores": 2}],
              "network": {"latency": 0.001, "bandwidth": 10.0}},
    "ring": {"name": "ring", "nodes": [{"name": "r", "count": 4, "speed": 1.5},
                                       {"name": "slow", "speed": 0.5,
                                        "availability": {"kind": "pulse", "start": 1.0, "duration": 2.0,
                                                         "level": 0.5}}],
             "network": {"latency": 0.01, "bandwidth": 100.0, "topology": "ring"}},
    "mesh": {"name": "mesh", "nodes": [{"name": "x", "count": 6, "speed": 1.0}],
             "network": {"topology": {"kind": "mesh", "rows": 2}}},
    "edges": {"name": "edges", "nodes": [{"name": "a", "speed": 1.0}, {"name": "b", "speed": 2.0},
                                         {"name": "c", "speed": 3.0}],
              "network": {"latency": 0.5, "bandwidth": 2.0, "topology": {"kind": "edges", "edges": [[0, 1], [1, 2]]}}},
}


def ntp_text(name: str) -> str:
    topology, speeds = NTP[name]
    return _written(Platform([Node(f"n{i}", speed=s) for i, s in enumerate(speeds)],
                             Network(latency=0.0, bandwidth=1.0, topology=topology)))


def _written(platform) -> str:
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        write_ntp(platform, Path(d) / "p.ntp")
        return (Path(d) / "p.ntp").read_text()


NTP_TEXT = {name: ntp_text(name) for name in NTP}


@st.composite
def platform_argv(draw, graphs):
    """``schedule GRAPH --platform FILE`` with FILE a valid or mutated .ntp or platform TOML."""
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(NTP_TEXT)))
        text, suffix = NTP_TEXT[name], ".ntp"
        if draw(st.integers(0, 4)):
            text = draw(mutated_text(text))
    else:
        name = draw(st.sampled_from(sorted(TOMLS)))
        how = draw(st.sampled_from(["as is", "mutated", "mutated", "edged", "edged", "text"]))
        d = TOMLS[name]
        if how == "mutated":
            d = draw(mutated(d))
        elif how == "edged":
            d = draw(edged(d))
        text, suffix = to_toml(d), ".toml"
        if how == "text":
            text = draw(mutated_text(text))
    path = graphs / f"plat{suffix}"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    argv = ["schedule", str(graphs / draw(st.sampled_from(["l10.json", "s.stg", "l10.adg"]))), "--platform", str(path),
            "-b", draw(st.sampled_from(CHEAP))]
    argv += draw(st.sampled_from([[], [], ["--cost-model", "thesis"], ["--contention"], ["--contention", "link"]]))
    return argv + ["--json"]


@settings(FUZZ, max_examples=examples(3000))
@given(data=st.data())
def test_schedule_on_a_mutated_platform_file_gives_a_plan_or_one_line(graphs, capsys, data):
    _schedule_is_a_plan_or_one_line(capsys, data.draw(platform_argv(graphs)))


def test_the_platform_bases_give_a_plan(graphs, capsys):
    for name in NTP_TEXT:
        (graphs / f"{name}.ntp").write_text(NTP_TEXT[name])
        assert main(["schedule", str(graphs / "l10.json"), "--platform", str(graphs / f"{name}.ntp"), "--json"]) == 0
        assert math.isfinite(json.loads(capsys.readouterr().out)["makespan"])
    for name, d in TOMLS.items():
        (graphs / f"{name}.toml").write_text(to_toml(d))
        assert main(["schedule", str(graphs / "l10.json"), "--platform", str(graphs / f"{name}.toml"), "--json"]) == 0
        assert math.isfinite(json.loads(capsys.readouterr().out)["makespan"])


# --- regressions --------------------------------------------------------------------------------------
RING4 = "4\n1 2 1 1\n0 1 {d} 1\n1 0 1 2\n{d} 1 0 1\n1 2 1 0\n"


@pytest.mark.parametrize("d", ["nan", "inf", "1e400", "2.7", "-2"])
def test_an_ntp_distance_that_is_not_a_hop_count_is_one_line_naming_it(graphs, capsys, d):
    """A distance of nan was a ValueError traceback (int(nan)), inf and 1e400 an OverflowError, and
    2.7 was truncated to the hop count 2 and accepted; now each is refused by its line and place in the matrix."""
    path = graphs / "d.ntp"
    path.write_text(RING4.format(d=d))
    assert main(["schedule", str(graphs / "l10.json"), "--platform", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"dlbkit: error: {path}:3 distances[0][2] must be a whole number "
                                                   "of hops in [0, 3] (the hop counts of a connected graph of 4 "
                                                   "nodes); got "), err
    path.write_text(RING4.format(d="2"))  # the ring's own hop count
    assert platform_from_ntp(path).hops.tolist() == [[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]]


@pytest.mark.parametrize("speed, allowed", [("0", "a number > 0"), ("nan", "a finite number > 0"),
                                            ("1e308", "a number in [1e-30, 1e30]")])
def test_an_ntp_speed_out_of_range_is_named_by_the_file(graphs, speed, allowed):
    """A bad speed was named ``node 'n0'.speed``: a node name the reader made up, in no file. Now the
    error names the file, the line and the speed's place in it."""
    path = graphs / "s.ntp"
    path.write_text(f"2\n1\n{speed}\n0 1\n1 0\n")
    with pytest.raises(ConfigError) as e:
        platform_from_ntp(path)
    assert e.value.field == f"{path}:3 speeds[1]" and allowed in str(e.value)


def test_an_ntp_file_named_in_capitals_is_read_as_an_ntp_file(graphs, capsys):
    """``--platform R.NTP`` was read as a platform TOML by the command's check ("TOML syntax in R.NTP
    must be valid TOML") while dlbkit.schedule() reads any case of ``.ntp`` as a thesis file; now the
    command reads it as schedule() does."""
    path = graphs / "R.NTP"
    path.write_text(NTP_TEXT["ring4"])
    assert main(["schedule", str(graphs / "l10.json"), "--platform", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] > 0


def test_schedule_json_with_metis_on_more_nodes_than_tasks_is_json_alone(graphs):
    """METIS's C code printed "***Cannot bisect a graph with 0 vertices!" and "***You are trying to
    partition a graph into too many parts!" on standard output (5 tasks on 8 nodes), ahead of the
    plan: ``schedule --json`` was not JSON. (Seen in the fuzzer's captured output: capsys does not
    catch C's printf, so this runs the command as a process.) The plan is unchanged."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "dlbkit", "schedule", str(graphs / "s.stg"), "--nodes", "8", "-b", "metis",
                           "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    plan = json.loads(done.stdout)
    assert plan["makespan"] == 6.0 and len(plan["assignment"]) == 5


def test_metis_runs_in_a_process_started_without_standard_output():
    """Started with descriptor 1 closed (a daemon), Python's sys.stdout is None: the C-stdout guard
    flushed it first (AttributeError: 'NoneType' object has no attribute 'flush'), so every METIS
    mapping failed there, where it had run before the guard. It skips what it cannot flush."""
    import subprocess
    import sys
    code = ("import sys; from dlbkit import schedule; from dlbkit.families.graph.model.generate import layered; "
            "s = schedule(layered(12, width=3, density=0.4, seed=1), 3, 'metis'); "
            "sys.stderr.write(f'{sys.stdout!r} {s.makespan > 0}')")
    done = subprocess.run([sys.executable, "-c", code], stdout=None, stderr=subprocess.PIPE, text=True, timeout=120,
                          check=False, preexec_fn=lambda: __import__("os").close(1))
    assert done.returncode == 0 and done.stderr == "None True", done.stderr[-2000:]
