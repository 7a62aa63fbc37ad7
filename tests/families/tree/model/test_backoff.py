"""An idle node's back-off after failed requests: the rule exactly and without
overflow, the option checked where it is read, the simulated tree engine pacing its thieves by it, and
the docs' tree example finishing with a bounded number of messages (counts, never times)."""

import math
import tomllib

import pytest

import dlbkit
from dlbkit import ConfigError, FlatTasks, Network, Node, Platform, TaskTree
from dlbkit.families.tree.balancers import WorkStealing
from dlbkit.face.experiments import Experiment
from dlbkit.families.tree.model.backoff import NO_BACKOFF, backoff_delay, check_backoff
from dlbkit.families.tree.runtime.coordinator import STEAL_BACKOFF_S
from dlbkit.families.tree.sim.engine import simulate_tree_async
from dlbkit.face.bench import M2_TICKS_PER_SECOND, m2_platform
from dlbkit.families.tree.sim.engine import AUTO_LONGEST_TASKS


# --- the rule ------------------------------------------------------------------------------------------
def test_the_delay_doubles_from_first_and_stops_at_longest_exactly():
    assert [backoff_delay(k, 1.0, 8.0) for k in range(7)] == [0.0, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert [backoff_delay(k, 0.375, 5.0) for k in range(1, 6)] == [0.375, 0.75, 1.5, 3.0, 5.0]
    lo, hi = STEAL_BACKOFF_S  # the runtime's parameters: the same values as its own formula gives
    for k in range(1, 80):
        assert backoff_delay(k, lo, hi) == min(lo * 2.0 ** (k - 1), hi)


@pytest.mark.parametrize("k", [1025, 1026, 1100, 2000, 10**6, 10**30])
def test_any_number_of_failures_gives_longest_without_overflow(k):
    with pytest.raises(OverflowError):
        1e-4 * 2.0 ** (k - 1)  # the formula taken literally
    assert backoff_delay(k, 1e-4, 5e-3) == 5e-3
    # the smallest first and the largest longest: exact powers of two until longest, then longest
    assert backoff_delay(k, 5e-324, 1.7e308) == (math.ldexp(1.0, k - 1075) if k <= 2098 else 1.7e308)


def test_no_failure_or_no_first_means_no_wait_and_first_above_longest_is_longest():
    assert backoff_delay(0, 1e-4, 5e-3) == backoff_delay(-3, 1e-4, 5e-3) == 0.0
    assert backoff_delay(5, 0.0, 0.0) == 0.0
    assert backoff_delay(1, 2.0, 1.0) == 1.0
    assert backoff_delay(1075, 5e-324, math.inf) == math.ldexp(5e-324, 1074)  # exact powers of two


@pytest.mark.parametrize("value, expected", [("auto", "auto"), ("off", NO_BACKOFF), ([0, 0], NO_BACKOFF),
                                             ((1e-4, 5e-3), (1e-4, 5e-3)), ([2, 2], (2.0, 2.0))])
def test_the_option_accepts_auto_off_and_pairs(value, expected):
    assert check_backoff(value) == expected


@pytest.mark.parametrize("value", ["fast", "", [1], [1, 2, 3], [2, 1], [0, 1], [-1, 1], [1, math.inf],
                                   [math.nan, 1], [True, 2], 5, None, {"first": 1}])
def test_a_bad_backoff_names_the_field_and_what_is_allowed(value):
    with pytest.raises(ConfigError) as e:
        check_backoff(value, "engine.backoff")
    text = str(e.value)
    assert "engine.backoff" in text and "0 < first <= longest" in text and "'off'" in text


def test_the_experiment_file_and_the_python_api_check_backoff():
    exp = tomllib.loads(TREE_TOML.replace("# ENGINE", 'backoff = [0.5, 0.1]'))
    with pytest.raises(ConfigError, match=r"engine\.backoff"):
        Experiment.from_dict(exp)
    Experiment.from_dict(tomllib.loads(TREE_TOML.replace("# ENGINE", 'backoff = "off"')))
    with pytest.raises(ConfigError, match="backoff"):
        dlbkit.simulate(docs_platform(), TaskTree("imbalance", depth=4, imbalance=0.2), "steal", backoff=[-1, 1])


# --- the engine -------------------------------------------------------------------------------------------
def test_a_thief_waits_first_then_twice_as_long_up_to_longest_after_each_empty_reply():
    """M2's worked example (P = 2, N = 3; docs/reference-models.md) in exact ticks: worker 1's first steal
    succeeds (k reset), then it fails until the end, and its requests reach worker 0 every round trip plus
    the back-off."""
    L = 8400  # ticks
    for fast in (True, False):
        tr = simulate_tree_async(m2_platform(2), FlatTasks([1.0, 2.9, 4.8]), WorkStealing(), seed=1,
                                 ticks_per_second=M2_TICKS_PER_SECOND, control_bytes=0, task_bytes=0,
                                 backoff=(0.001, 0.008), fast_path=fast, log_events=True)
        arrivals = [e[0] for e in tr.meta["event_log"] if e[4] == "on_request"]
        gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
        # the first request succeeds at L; the next asks after the task (0.5 s) ends
        assert gaps[1:6] == [2 * L + L, 2 * L + 2 * L, 2 * L + 4 * L, 2 * L + 8 * L, 2 * L + 8 * L]
        assert set(gaps[5:]) == {10 * L}
        assert tr.end_time == pytest.approx(7.7, rel=1e-12)  # the work is the same: only the polling thins
        assert tr.meta["backoff"] == [0.001, 0.008] and tr.meta["steals"] == 1
        assert tr.messages < 2 * (7.7 / 0.010) + 20  # M2 sends 7,200


def test_off_is_m2_and_auto_derives_from_the_round_trip_and_the_task_time():
    kw = dict(seed=1, ticks_per_second=M2_TICKS_PER_SECOND, control_bytes=0, task_bytes=0)
    off = simulate_tree_async(m2_platform(2), FlatTasks([1.0, 2.9, 4.8]), WorkStealing(), backoff="off", **kw)
    assert (off.events, off.messages, off.meta["backoff"]) == (7202, 7200, [0.0, 0.0])
    auto = simulate_tree_async(m2_platform(2), FlatTasks([1.0, 2.9, 4.8]), WorkStealing(), **kw)
    mean_task = (1.0 + 2.9 + 4.8) / 3 / 1.5  # mean cost at the mean speed (1 and 2)
    assert auto.meta["backoff"] == pytest.approx([0.002, AUTO_LONGEST_TASKS * mean_task], rel=1e-12)
    # at most one request and reply per (round trip + longest) of idle time, plus the doubling steps
    longest = auto.meta["backoff"][1]
    assert auto.end_time == off.end_time and auto.messages <= 2 * (7.7 / (0.002 + longest) + 10)


# --- the docs' tree example (docs/experiments.md's tree on 4 nodes of speeds 1-4, 0.2 ms latency) ----------
def docs_platform():
    return Platform([Node(f"n{i}", speed=float(i + 1)) for i in range(4)], Network(latency=2e-4, bandwidth=125e6))


TREE_TOML = """
name = "docs-tree"
repetitions = 1
[platform]
nodes = [{name = "a", speed = 1.0}, {name = "b", speed = 2.0}, {name = "c", speed = 3.0}, {name = "d", speed = 4.0}]
network = {latency = 2e-4, bandwidth = 125e6}
[workload]
kind = "tree"
shape = "imbalance"
imbalance = 0.2
depth = 16
fanout = 2
grain = 1000
seed = 0
[engine]
# ENGINE
[[balancers]]
name = "steal"
"""


@pytest.mark.parametrize("depth, grain, seed, tasks, max_messages", [(10, 100.0, 3, 573, 5_000),
                                                                   (16, 1000.0, 0, 6147, 10_000)])
def test_the_docs_tree_example_sends_a_bounded_number_of_messages(depth, grain, seed, tasks, max_messages):
    """Without a back-off, steal sent 5.2 million messages for the 573 tasks (every idle node asking
    every 0.4 ms for the whole 6,000 s) and did not finish the 6,147-task tree in 15 minutes."""
    tree = TaskTree("imbalance", depth=depth, fanout=2, grain=grain, imbalance=0.2, seed=seed)
    r = dlbkit.simulate(docs_platform(), tree, "steal", seed=1)
    assert r.trace.meta["tasks"] == tasks
    assert r.trace.messages < max_messages and r.trace.events < tasks + max_messages
    assert r.metrics["efficiency"] > 0.9
