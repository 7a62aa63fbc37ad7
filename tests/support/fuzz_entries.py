"""The entry-point fuzzers' common parts: graph files for ``dlbkit schedule``, text mutations, and
the superstep engine's cases.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import event
from hypothesis import strategies as st

import dlbkit
from dlbkit import FlatTasks, TaskTree
from dlbkit.face.cli import main
from dlbkit.families.graph.model.generate import layered, topcuoglu10
from dlbkit.families.tree.sim.superstep import TOPOLOGIES, simulate_superstep

from support.fuzz import deadline

# --- dlbkit schedule ----------------------------------------------------------------------------------
STG = "3\n0 0 0\n1 3 1 0\n2 4 1 0\n3 2 2 1 2\n4 0 1 3\n"


PLATFORM = '[[nodes]]\nname = "m"\nspeed = 1\n[[nodes]]\nname = "a"\nspeed = 2\n[[nodes]]\nname = "b"\nspeed = 0.5\n'


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    """A folder with small graph files of each format and a platform file."""
    root = tmp_path_factory.mktemp("sched")
    topcuoglu10().write(root / "t10.json")  # a 3-column cost table
    g = layered(10, width=3, seed=1)
    g.write(root / "l10.json")
    g.write(root / "l10.adg")
    (root / "s.stg").write_text(STG)
    (root / "p.toml").write_text(PLATFORM)
    (root / "dir").mkdir()
    return root


@st.composite
def mutated_text(draw, text: str) -> str:
    """*text* with one to three edits: a few characters deleted, a token inserted, a slice repeated."""
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "repeat"]))
        if op == "delete":
            text = text[:k] + text[k + draw(st.integers(1, 4)):]
        elif op == "insert":
            tok = draw(st.sampled_from(["-", "0", "9", "1e400", "1e308", "nan", "-1", " ", "\n", ",", "(", ")", "x",
                                        "999999999", '"', "]", "}", "1e30", "\xff"]))
            text = text[:k] + tok + text[k:]
        else:
            j = draw(st.integers(0, len(text)))
            text = text[:k] + text[j:j + draw(st.integers(1, 12))] + text[k:]
    return text


def _schedule_is_a_plan_or_one_line(capsys, argv):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning on stderr (inf - inf, 0/0) is a defect too
        with deadline():
            code = main(argv)
    out, err = capsys.readouterr()
    event(f"exit {code}" + (" " + err.split(" must")[0][:60] if code == 2 else ""))
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err + out, (argv, err)
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert len(lines) == 1 and lines[0].startswith("dlbkit: error: "), (argv, err)
    else:
        assert err == "", (argv, err)
        if "--json" in argv:
            plan = json.loads(out)
            assert math.isfinite(plan["makespan"]) and plan["makespan"] >= 0, (argv, plan["makespan"])
            assert all(math.isfinite(v) for v in plan["finish"].values())


# --- the superstep (BSP) tree engine ------------------------------------------------------------------
MIGRATION = sorted(n for n, c in dlbkit.REGISTRY.items() if c.kind == "migration")


@st.composite
def superstep_case(draw):
    order = draw(st.sampled_from(["df", "bf"]))
    if draw(st.booleans()):
        costs = draw(st.lists(st.floats(0, 100), min_size=1, max_size=30))
        w = FlatTasks(costs, order=order)
        expected = len(costs)
    else:
        w = TaskTree(kind=draw(st.sampled_from(["balanced", "random", "imbalance"])), depth=draw(st.integers(1, 5)),
                     fanout=draw(st.integers(1, 3)), grain=draw(st.floats(0.0, 10)), seed=draw(st.integers(0, 5)),
                     order=order)
        expected = None
    balancer = draw(st.sampled_from(MIGRATION + [None, "none"]))
    p = draw(st.integers(2 if balancer == "ldsv" else 1, 9))
    topo = draw(st.sampled_from([t for t in TOPOLOGIES if t != "hypercube"] + ["hypercube"] * (p & (p - 1) == 0)))
    interval = draw(st.one_of(st.none(), st.sampled_from([0, 0.5, 1, 2, 7, math.inf])))
    return w, expected, balancer, p, topo, interval, draw(st.integers(0, 3))


def _superstep_runs(case):
    w, expected, balancer, p, topo, interval, seed = case
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with deadline(20):
            r = simulate_superstep(w, balancer, p=p, topology=topo, interval=interval, seed=seed)
    assert math.isfinite(r.total) and r.total >= 0
    assert int(r.executed.sum()) == r.nodes and r.n_series[-1] == 0
    if expected is not None:
        assert r.nodes == expected
    elif w.kind == "balanced":
        assert r.nodes == sum(w.fanout ** d for d in range(w.depth + 1)) or r.nodes == w.depth + 1 or r.nodes > 0
    again = simulate_superstep(w, balancer, p=p, topology=topo, interval=interval, seed=seed)
    assert again.total == r.total and np.array_equal(again.executed, r.executed)  # same seed, same run
