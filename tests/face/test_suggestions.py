"""A mistyped name in bad input is answered with the closest allowed one: ``(did you mean 'gss'?)`` at
the end of the ConfigError, from Python, from an experiment file and from the CLI (one line, exit 2)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dlbkit
from dlbkit import ConfigError, Divisible, Node, Platform, TaskTree
from dlbkit.errors import closest

P = Platform([Node("a"), Node("b")])


def test_closest_is_difflibs_nearest_case_ignored_or_none():
    assert closest("gsss", ["gss", "tss", "fac2"]) == "gss"
    assert closest("AWFC", ["awf-b", "awf-c"]) == "awf-c"
    assert closest("xyz", ["gss", "tss"]) is None
    assert closest(3, ["gss"]) is None and closest("", ["gss"]) is None


@pytest.mark.parametrize("call, tail", [
    (lambda: dlbkit.simulate(P, Divisible(10), "gsss"), "got 'gsss' (did you mean 'gss'?)"),
    (lambda: dlbkit.make("stael"), "got 'stael' (did you mean 'steal'?)"),
    (lambda: dlbkit.simulate(P, Divisible(10), "ss", params={"sise": 2}),
     "got '<unknown parameter>' (did you mean 'size'?)"),
    (lambda: dlbkit.simulate(P, Divisible(10), mastr="a"), "got '<unknown option>' (did you mean 'master'?)"),
    (lambda: dlbkit.simulate(P, Divisible(10), engine_name="master_worker"),
     "got 'master_worker' (did you mean 'master-worker'?)"),
    (lambda: dlbkit.simulate(P, TaskTree(depth=3), "steal", info="gosip"), "got 'gosip' (did you mean 'gossip'?)"),
    (lambda: Platform.from_dict({"nodes": [{"name": "a", "sped": 2}]}), "got '<unknown field>' (did you mean 'speed'?)"),
])
def test_a_typo_names_the_closest_allowed(call, tail):
    with pytest.raises(ConfigError) as e:
        call()
    assert str(e.value).endswith(tail), str(e.value)


def test_nothing_close_adds_nothing():
    with pytest.raises(ConfigError) as e:
        dlbkit.simulate(P, Divisible(10), "xyz")
    assert str(e.value).endswith("got 'xyz'") and e.value.suggest is None


def test_a_re_raise_under_another_field_keeps_the_suggestion():
    try:
        try:
            dlbkit.make("gsss")
        except ConfigError as e:
            raise ConfigError(f"balancers[0] ({e.field})", e.value, e.allowed) from None
    except ConfigError as outer:
        assert outer.field == "balancers[0] (balancer)" and outer.suggest == "gss"
    # a different value is another error: no suggestion carried over
    try:
        try:
            dlbkit.make("gsss")
        except ConfigError as e:
            raise ConfigError("x", "other", e.allowed) from None
    except ConfigError as outer:
        assert outer.suggest is None


def _cli(tmp_path, *args):
    return subprocess.run([sys.executable, "-m", "dlbkit", *args], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)


EXPERIMENT = """
name = "typo"
repetitions = 1
[platform]
nodes = [{ name = "m", speed = 1.0 }, { name = "w", speed = 2.0 }]
[workload]
kind = "divisable"
items = 10
[[balancers]]
name = "gss"
"""


@pytest.mark.parametrize("edit, tail", [
    ((), "workload.kind must be a workload family: divisible, tree, spmd, graph, stream; got 'divisable' "
         "(did you mean 'divisible'?)"),
    (("divisable", "divisible", 'name = "gss"', 'name = "gsss"'), "got 'gsss' (did you mean 'gss'?)"),
    (("divisable", "divisible", "repetitions", "repetition"), "got '<unknown field>' (did you mean 'repetitions'?)"),
])
def test_an_experiment_files_typo_one_line_exit_2(tmp_path, edit, tail):
    text = EXPERIMENT
    for old, new in zip(edit[::2], edit[1::2]):
        text = text.replace(old, new)
    (tmp_path / "e.toml").write_text(text)
    p = _cli(tmp_path, "simulate", "e.toml", "--out", "o")
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.rstrip().endswith(tail), p.stderr


@pytest.mark.parametrize("args, tail", [
    (("simulate", "dmeo"), "got 'dmeo' (did you mean 'demo'?)"),
    (("reproduce", "sanches2002"), "got 'sanches2002' (did you mean 'sanchez2002'?)"),
    (("balancers", "--kind", "chunk"), "got 'chunk' (did you mean 'chunking'?)"),
    (("run", "builtins:abs", "--items", "3", "-b", "gsss"), "got 'gsss' (did you mean 'gss'?)"),
    (("run", "builtins:abs", "--items", "3", "-p", "min_chunks=2"), "got 'min_chunks' (did you mean 'min_chunk'?)"),
])
def test_cli_names_the_closest_one_line_exit_2(tmp_path, args, tail):
    p = _cli(tmp_path, *args)
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
    assert p.stderr.rstrip().endswith(tail), p.stderr
