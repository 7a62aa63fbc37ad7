"""One View base: every family's view names the common things the same way."""

import math
from collections.abc import Sequence

import pytest

from dlbkit import LoopView, TreeView
from dlbkit.families.spmd.model.view import SpmdView
from dlbkit.model.view import View

COMMON = ("n_nodes", "time", "node", "speeds", "updated_at", "neighbours")


def views():
    return {"loop": LoopView(100, 3, [1.0, 2.0, 4.0]), "tree": TreeView(3),
            "spmd": SpmdView(3, [10, 20, 30], [1.0] * 3, [5.0, 6.0, 7.0], [0.0] * 3, [0.0] * 3, [1e6] * 3)}


@pytest.mark.parametrize("name", ["loop", "tree", "spmd"])
def test_every_view_has_the_common_fields(name):
    v = views()[name]
    assert isinstance(v, View)
    for f in COMMON:
        assert hasattr(v, f), f
    assert v.n_nodes == 3 and v.node == -1 and len(v.updated_at) == 3
    assert all(isinstance(nb, Sequence) and all(type(j) is int for j in nb) for nb in v.neighbours)
    assert len(v.neighbours) == (0 if name == "loop" else 3)  # a loop's master serves every worker


def test_age_is_time_since_a_nodes_entries_were_measured():
    for v in views().values():
        v.time, v.updated_at = 5.0, [5.0, 2.5, 0.0]
        assert [v.age(i) for i in range(3)] == [0.0, 2.5, 5.0]


def test_neighbours_default_to_everyone_else_and_follow_the_spmd_layout():
    # a loop's view has no topology: P² entries made a 20 000-worker M1 take 100 s instead of 0.1 s
    assert views()["loop"].neighbours == []
    assert views()["tree"].neighbours == [[1, 2], [0, 2], [0, 1]]
    assert views()["spmd"].neighbours == [[1], [0, 2], [1]]  # a line
    ring = SpmdView(4, [1] * 4, [1.0] * 4, [1.0] * 4, [0.0] * 4, [0.0] * 4, [1.0] * 4, layout="ring")
    assert ring.neighbours == [[3, 1], [0, 2], [1, 3], [2, 0]]


def test_measured_speed_per_family():
    loop = views()["loop"]
    assert math.isnan(loop.measured_speed(0))
    loop.items_done[0], loop.compute_time[0] = 30, 1.5
    assert loop.measured_speed(0) == 20.0  # items per second
    assert math.isnan(views()["tree"].measured_speed(1))
    assert views()["spmd"].measured_speed(2) == 7.0  # F, DP per second
