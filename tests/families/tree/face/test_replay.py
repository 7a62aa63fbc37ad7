"""A real task-tree run recorded (its tasks: ids, measured costs, children) and replayed in the asynchronous tree
engine under its own migration rule and others (:mod:`dlbkit.families.tree.face.replay`)."""

from __future__ import annotations

import json
import time

import pytest

import dlbkit
from dlbkit.errors import ConfigError
from dlbkit.face.cli import main
from dlbkit.face.replay import compare
from dlbkit.families.tree.face.replay import recorded_tree

DEPTH = 6  # a binary tree of 2^7 - 1 = 127 tasks
COST = 0.001  # seconds of busy loop per task


def expand(n):
    end = time.perf_counter() + COST
    while time.perf_counter() < end:
        pass
    return ([n + 1, n + 1] if n < DEPTH else []), 1


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("tree") / "tree.json"
    r = dlbkit.run_tree(expand, 0, workers=2, balancer="steal")
    assert r.value == 2 ** (DEPTH + 1) - 1
    r.save(path)
    return path


def test_the_recording_keeps_the_tree_that_was_expanded(recorded):
    """The ids that travelled with the tasks give back the tree exactly: 127 tasks, the 63 internal ones with 2
    children each, every task's measured cost at least its busy loop."""
    tree, per_worker = recorded_tree(dlbkit.load_trace(recorded))
    assert tree.count() == (127, 63)
    assert sorted(len(tree.children(k)) for k in range(127)) == [0] * 64 + [2] * 63
    assert tree.estimate(0) == 127.0  # the root's subtree is the tree
    assert min(tree.costs) >= COST and sum(len(c) for c in per_worker) == 127


def test_replay_under_its_own_rule_and_another(recorded):
    """The replay's makespan is the real one's within a factor 1.5: the measured speeds fold each worker's costs
    between tasks into its speed, so the busy time is replayed; what differs is when steals land (the latency is
    one number, the real steals' waits vary on a machine shared with other processes)."""
    own = dlbkit.replay(recorded)
    assert own.balancer.name == "steal" and own.trace.source == "replay" and own.trace.family == "tree"
    assert len(own.trace.t_end) > 0 and 1 / 1.5 < own.ratio < 1.5
    again = dlbkit.replay(recorded)  # the same seed: the same replay
    assert again.makespan == own.makespan and list(again.trace.t_end) == list(own.trace.t_end)
    other = dlbkit.replay(recorded, "rid")
    assert other.balancer.name == "rid" and other.makespan > 0
    rows = compare(recorded, ["rid", "steal"])
    assert [r["balancer"] for r in rows] == ["steal", "rid"] and rows[0]["ratio"] == pytest.approx(own.ratio)


def test_a_balancer_of_another_kind_is_refused_naming_the_field(recorded):
    with pytest.raises(ConfigError) as e:
        dlbkit.replay(recorded, "gss")
    assert e.value.field == "balancer" and "migration" in str(e.value)
    with pytest.raises(ConfigError, match="^model must be absent for a task-tree recording"):
        dlbkit.replay(recorded, model="emulated")


def test_an_older_recording_without_its_tasks_says_what_it_lacks(recorded, tmp_path):
    d = json.loads(recorded.read_text())
    del d["meta"]["task_tree"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(d))
    with pytest.raises(ConfigError) as e:
        dlbkit.replay(old)
    assert e.value.field == "trace meta.task_tree" and "real tree run" in str(e.value)


def test_the_command_line_prints_the_table(recorded, capsys):
    assert main(["replay", str(recorded), "-b", "rid"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"replay of {recorded}: steal on 2 workers (local), 127 tasks; real makespan ")
    assert lines[1].startswith("model: measured speeds ")
    assert [ln.split()[0] for ln in lines[5:]] == ["steal", "rid", "real"]
    assert main(["replay", str(recorded), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["items"] == 127 and d["model"]["tasks"] == 127 and d["rows"][0]["recorded"]
    assert main(["replay", str(recorded), "--model", "emulated"]) == 2
    assert "--model must be used with a loop recording" in capsys.readouterr().err
