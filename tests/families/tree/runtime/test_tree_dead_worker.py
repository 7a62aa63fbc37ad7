"""A tree worker that dies is survived on the local backend: its share (what came to it and did not leave)
is expanded again by another worker, skipping what it had given away, so every task is expanded exactly once
by the workers that finish, and the value equals serial.

The tree has distinct tasks (depth, index), so ``result.tasks`` (the tasks the finishing workers expanded)
equal to the tree's size is the exactly-once check; the kills are at tasks drawn by hypothesis, one or two
(the second may hit the heir while it redoes the first's share), under every migration balancer.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError, DlbkitError

from support.profiles import examples

DEPTH = 8
SIZE = 2 ** (DEPTH + 1) - 1
BALANCERS = ["steal", "rid", "sid", "gdem", "greedy", "ldsv", "random", "refine", "phase-adaptive"]


def expand(task, kills=(), marks=""):
    """A binary tree of depth DEPTH, each leaf worth its index; the process expanding a task of *kills*
    dies (os._exit), once per task (a marker file in *marks*)."""
    depth, k = task
    if task in kills:
        mark = os.path.join(marks, f"{depth}-{k}")
        if not os.path.exists(mark):
            open(mark, "w").close()
            os._exit(9)
    time.sleep(0.0002)  # long enough for tasks to move between workers (steals, transfers) before a death
    if depth == DEPTH:
        return [], k
    return [(depth + 1, 2 * k), (depth + 1, 2 * k + 1)], None


def _kills(tmp_path, *tasks):
    import functools
    return functools.partial(expand, kills=frozenset(tasks), marks=str(tmp_path))


tasks = st.integers(0, DEPTH).flatmap(lambda d: st.tuples(st.just(d), st.integers(0, 2 ** d - 1)))


@settings(max_examples=examples(60))
@given(kills=st.lists(tasks, min_size=1, max_size=2, unique=True), balancer=st.sampled_from(BALANCERS),
       workers=st.sampled_from([2, 3]))
def test_every_task_once_and_the_value_of_serial_after_one_or_two_deaths(tmp_path_factory, kills, balancer, workers):
    if len(kills) >= workers:
        kills = kills[:workers - 1]  # a worker must be left
    d = tmp_path_factory.mktemp("marks")
    r = dlbkit.run_tree(_kills(d, *kills), (0, 0), workers=workers, balancer=balancer)
    assert r.value == sum(range(2 ** DEPTH))
    assert r.tasks == SIZE  # each task expanded once by the workers that finished
    dead = r.trace.meta["dead"]
    assert len(dead) == len(kills) == len(os.listdir(d))  # every kill hit, each a worker of its own
    recovery = r.trace.meta["recovery"]
    assert sorted(x["worker"] for x in recovery) == dead
    # each heir was alive when it was chosen (not one that had died before it)
    assert all(x["to"] not in [y["worker"] for y in recovery[:i + 1]] for i, x in enumerate(recovery))
    assert all(r.trace.meta["expanded"][w] == 0 for w in dead)


def knapsack(state, bound, kill=None, marks=""):
    """Branch and bound on a 0/1 knapsack (capacity 10, optimum 90); the task *kill* kills its process once."""
    if state == kill and not os.path.exists(os.path.join(marks, "k")):
        open(os.path.join(marks, "k"), "w").close()
        os._exit(9)
    weights, values = (5, 4, 6, 3), (10, 40, 30, 50)
    i, w, v = state
    if i == len(weights):
        return [], None, v
    if v + sum(values[i:]) <= bound:  # cannot beat the bound: pruned
        return [], None, None
    kids = [(i + 1, w, v)]
    if w + weights[i] <= 10:
        kids.append((i + 1, w + weights[i], v + values[i]))
    return kids, None, None


@pytest.mark.parametrize("kill", [(0, 0, 0), (1, 0, 0), (2, 4, 40)])
def test_branch_and_bound_finds_the_optimum_after_a_death(tmp_path, kill):
    import functools
    r = dlbkit.run_tree(functools.partial(knapsack, kill=kill, marks=str(tmp_path)), (0, 0, 0), bound=0,
                        workers=2, balancer="steal")
    assert r.bound == 90 and len(r.trace.meta["dead"]) == 1


def test_every_worker_dead_is_an_error_naming_the_last(tmp_path):
    with pytest.raises(DlbkitError, match=r"worker \d died \(exit code 9\) and no worker is left; \d+ tasks were "
                                          r"not completed"):
        dlbkit.tree(_kills(tmp_path, (1, 0), (1, 1)), (0, 0), workers=2, balancer="steal")


def test_a_recording_with_a_death_is_refused_by_replay(tmp_path):
    rec = tmp_path / "run.json"
    r = dlbkit.run_tree(_kills(tmp_path, (3, 2)), (0, 0), workers=2, balancer="steal")
    r.save(rec)
    assert dlbkit.load_trace(rec).meta["dead"] == r.trace.meta["dead"] != []  # the death is recorded
    with pytest.raises(ConfigError, match=r"trace meta.dead must be \[\] \(a run in which no worker died"):
        dlbkit.replay(rec, "steal")
