"""Mutated platform files as ``--emulate``: :mod:`face/experiments/test_bad_input_fuzz` mutates
platform files and checks the loader alone; here a platform file the loader accepts is then RUN as
an emulation, by :func:`dlbkit.run_map` (``emulate=path``, with or without a *master* node),
``dlbkit run --emulate`` and ``dlbkit cluster --emulate``. Small platforms (shipped ones cut to a
few nodes, and one with every availability kind) are mutated as experiment files are (a value made
weird, a key deleted or added, :func:`face/experiments/test_accepted_input_fuzz.edged`'s edge values), then shrunk as
:func:`face/experiments/test_accepted_input_fuzz.shrink` shrinks an experiment (at most 4 nodes of a kind, at most 2 cores a
node, speeds and availability levels and sojourns not finer than 0.1 / 0.05 s: a slower emulation of
a valid platform is legitimately long, not a defect).

The rule: a platform the loader refuses is a ConfigError naming a field (CLI: exit 2, one line); one
it accepts runs every item once to the right results (CLI: exit 0), never a ConfigError the loader
should have given, another exception, a non-finite time or a hang. Derandomized; the default run
takes some seconds (real worker processes), the full tier runs it at its full count.
"""

import json
import math
import tomllib
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import Platform
from dlbkit.face.cli import main
from dlbkit.errors import ConfigError

from support.fuzz import DATA, FUZZ, deadline, mutated, to_toml
from support.fuzz_emulate import _event, square
from support.fuzz_runs import edged, shrink
from support.profiles import examples

RUN_S = 60  # a run of a few items on at most 8 emulated workers takes a second or two
MAX_WORKERS = 8  # emulated workers (processes) a run may start here: 2 cores are shared


def bases() -> dict[str, dict]:
    out = {}
    for name in ("demo16", "sanchez2002", "hetero32"):
        d = tomllib.loads((DATA / "platforms" / f"{name}.toml").read_text())
        for n in d["nodes"]:
            if isinstance(n.get("count"), int):
                n["count"] = min(n["count"], 2)
            n.pop("availability", None) if isinstance(n.get("availability"), dict) and "file" in n["availability"] else None
        d["nodes"] = d["nodes"][:3]
        net = d.get("network", {})
        if not isinstance(net.get("topology", "complete"), str) or net.get("topology") not in (None, "complete", "star",
                                                                                              "chain"):
            net["topology"] = "complete"
        out[name] = d
    out["kinds"] = {
        "name": "kinds",
        "network": {"latency": 1e-4, "bandwidth": 1e8, "topology": {"kind": "edges", "edges": [[0, 1], [1, 2], [2, 3]]}},
        "nodes": [{"name": "m", "speed": 1.0},
                  {"name": "a", "speed": 0.5, "cores": 2, "availability": {"kind": "step", "at": 0.01, "level": 0.5}},
                  {"name": "b", "speed": 1.0, "availability": {"kind": "pulse", "start": 0.0, "duration": 0.01,
                                                                "level": 0.5, "period": 0.05}},
                  {"name": "c", "speed": 0.8, "availability": {"kind": "markov", "mean_free": 0.1,
                                                                "mean_busy": 0.1, "low": 0.5}}],
    }
    out["trace"] = {"nodes": [{"name": "m", "speed": 1.0},
                              {"name": "t", "speed": 1.0, "availability": {"kind": "trace", "times": [0.0, 0.01],
                                                                           "levels": [1.0, 0.5]}}]}
    return out


BASES = bases()


def _small(d) -> dict:
    """*d* shrunk, and each node's cores capped at 2 (every core is an emulated worker process)."""
    d = shrink(json.loads(json.dumps(d)))
    for n in d.get("nodes", []) if isinstance(d.get("nodes"), list) else []:
        if isinstance(n, dict) and isinstance(n.get("cores"), int) and not isinstance(n["cores"], bool) and n["cores"] > 2:
            n["cores"] = 2
    return d


def _accepted(path) -> Platform | None:
    try:
        with deadline():
            return Platform.from_toml(path)
    except ConfigError as e:
        assert e.field and "\n" not in str(e), str(e)
        return None


def _workers(p: Platform, master) -> int:
    return sum(n.cores for k, n in enumerate(p.nodes) if k != master)


def _emulated_platform_runs(d: dict, tmp_path, capsys, how: str) -> str:
    path = tmp_path / "p.toml"
    d = _small(d)
    path.write_text(to_toml(d))
    p = _accepted(path)
    if p is None:
        if how == "cli run":  # the CLI says so in one line, exit 2
            code = main(["run", "support.fuzz_emulate:square", "--items", "3", "--emulate", str(path)])
            err = capsys.readouterr().err.strip("\n").splitlines()
            assert code == 2 and len(err) == 1 and err[0].startswith("dlbkit: error: --emulate"), err
        _event("refused")
        return "refused"
    master = 0 if how == "api master" and p.n_nodes > 1 else None
    if _workers(p, master) > MAX_WORKERS:
        _event("too many workers for this machine")
        return "skipped"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # emulated speeds above 1 (DlbkitWarning), documented
        warnings.simplefilter("error", RuntimeWarning)
        try:
            with deadline(RUN_S, wall=True):
                if how.startswith("api"):
                    r = dlbkit.run_map(square, range(12), emulate=str(path), master=master, seed=1, progress=False)
                    assert r.results == [x * x for x in range(12)]
                    assert math.isfinite(r.trace.makespan) and r.trace.makespan >= 0, r.trace.makespan
                    assert sorted(zip(r.table()["first"], r.table()["count"]))[0][0] == 0
                    assert sum(r.table()["count"]) == 12
                else:
                    argv = (["run", "support.fuzz_emulate:square", "--items", "6", "--no-progress"]
                            if how == "cli run" else
                            ["cluster", "support.fuzz_emulate:square", "--jobs", "4", "--rate", "1000"])
                    code = main(argv + ["--emulate", str(path), "--seed", "1"])
                    err = capsys.readouterr().err
                    assert code == 0, (argv, err, to_toml(d))
        except ConfigError as e:
            pytest.fail(f"{how}: the loader accepted a platform the run refused: {e}\n{to_toml(d)}")
    _event(f"ran: {how}")
    return "ran"


HOWS = st.sampled_from(["api", "api master", "cli run", "cli cluster"])


@pytest.mark.parametrize("name", sorted(BASES))
def test_the_bases_run_as_emulations(name, here, capsys):
    assert _emulated_platform_runs(BASES[name], here, capsys, "api") == "ran"


def _mutated_platform_runs(data, name, edge, how, here, capsys):
    d = data.draw(edged(BASES[name]) if edge else mutated(BASES[name]))
    _emulated_platform_runs(d, here, capsys, how)


@settings(FUZZ, max_examples=examples(200))
@given(data=st.data(), name=st.sampled_from(sorted(BASES)), edge=st.booleans(), how=HOWS)
def test_accepted_mutated_platforms_run_as_emulations(data, name, edge, how, here, capsys):
    _mutated_platform_runs(data, name, edge, how, here, capsys)
