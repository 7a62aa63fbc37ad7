"""Placement balancers on hand-worked views: who gets the task, ties, with and without replacement,
Nezha's window (empty window → local), the hybrid batch, and the checks of decide.place."""

from collections import Counter

import numpy as np
import pytest

from dlbkit import ConfigError, make
from dlbkit.families.stream.balancers import decide
from dlbkit.families.stream.balancers.nezha import window
from dlbkit.families.stream.model.view import StreamView


def started(name, view, seed=0, **params):
    b = make(name, params)
    b.start(view, np.random.default_rng(seed))
    return b


def counts(name, view, n=4000, **params):
    b = started(name, view, **params)
    return Counter(b.place(view) for _ in range(n))


def test_local_keeps_the_task_at_its_origin():
    v = StreamView(4, queue=[9, 0, 0, 0], node=0)
    assert counts("local", v, 50) == {0: 50}


def test_random_place_draws_every_node_uniformly_whatever_the_loads():
    """5 nodes, 10,000 draws: each count is Binomial(10⁴, 1/5), sd 40; all within 4 sd of 2000."""
    v = StreamView(5, queue=[9, 0, 3, 0, 7], node=1)
    c = counts("random-place", v, 10_000)
    assert set(c) == set(range(5)) and all(abs(c[j] - 2000) < 160 for j in range(5))


def test_jsq_takes_the_shortest_queue_and_breaks_ties_at_random():
    v = StreamView(5, queue=[3, 1, 2, 1, 4], node=0)
    c = counts("jsq", v)
    assert set(c) == {1, 3} and abs(c[1] - c[3]) < 300  # two tied shortest queues, about half each


def test_power_of_d_picks_the_shorter_of_two_and_ties_uniformly():
    """Queues [0, 5]: a task goes to node 1 only if both picks are node 1 (prob 1/4 with replacement)."""
    v = StreamView(2, queue=[0, 5])
    c = counts("power-of-d", v, 8000)
    assert abs(c[1] / 8000 - 0.25) < 0.02
    # without replacement both nodes are always sampled: never node 1
    assert counts("power-of-d", v, 2000, replace=False) == {0: 2000}
    # equal queues: the tie is broken at random among the sampled
    c = counts("power-of-d", StreamView(3, queue=[1, 1, 1]), 9000)
    assert all(abs(c[j] / 9000 - 1 / 3) < 0.02 for j in range(3))


def test_power_of_d_general_path_matches_the_rule():
    """d = 3 without replacement on 4 nodes: the longest queue is never chosen, and the shortest
    (node 2) is chosen whenever sampled (prob 3/4)."""
    v = StreamView(4, queue=[2, 3, 0, 9])
    c = counts("power-of-d", v, 8000, d=3, replace=False)
    assert 3 not in c and abs(c[2] / 8000 - 0.75) < 0.02


def test_d_larger_than_n_without_replacement_is_refused_with_replacement_allowed():
    v = StreamView(3)
    with pytest.raises(ConfigError, match="parameter 'd' of power-of-d must be at most the 3 nodes"):
        started("power-of-d", v, d=4, replace=False)
    started("power-of-d", v, d=4, replace=True)
    with pytest.raises(ConfigError, match="parameter 'd'"):
        make("power-of-d", {"d": 0})


def test_speed_aware_d_compares_expected_completion():
    """Node 0: (4+1)/4 = 1.25; node 1: (1+1)/1 = 2: the fast node with the longer queue wins."""
    v = StreamView(2, queue=[4, 1], speeds=[4.0, 1.0])
    assert counts("speed-d", v, 500, replace=False) == {0: 500}


def test_round_robin_gives_each_origin_its_own_pointer():
    v = StreamView(4, node=2)
    b = started("round-robin-place", v)
    assert [b.place(v) for _ in range(5)] == [2, 3, 0, 1, 2]
    v.node = 0
    assert [b.place(v) for _ in range(2)] == [0, 1]


def test_jiq_sends_to_an_idle_node_when_it_knows_one():
    v = StreamView(4, queue=[2, 1, 0, 3], slots=[1, 2, 1, 1])
    assert set(counts("jiq", v, 2000)) == {1, 2}  # node 1 has a free slot of two, node 2 is empty


def test_nezha_window_adaptive_level_and_constant():
    v = StreamView(8, queue=[8, 5, 5, 5, 6, 4, 6, 6])
    act, L, lmax = window(v, "adaptive", 1.0, 0, 0, 1.0, 1e6)
    assert lmax == pytest.approx(5.625 + np.std(L)) and act == [1, 2, 3, 4, 5, 6, 7]  # node 0 over-loaded
    act, _, lmax = window(v, "level", 0, 2.0, 0, 1.0, 1e6)  # min 4 + 2: node 0 (8) out, 2–8 one level
    assert lmax == 6.0 and act == [1, 2, 3, 4, 5, 6, 7]
    act, _, _ = window(v, "constant", 0, 0, 5.0, 0.0, 1e6)
    assert act == [1, 2, 3, 5]
    act, _, lmax = window(StreamView(3, queue=[0, 0, 0]), "adaptive", 1.0, 0, 0, 1.0, 1e6)
    assert lmax == 1.0 and act == [0, 1, 2]  # the floor keeps an idle cluster's threshold above zero
    _, _, lmax = window(StreamView(2, queue=[50, 0]), "adaptive", 1.0, 0, 0, 1.0, 10.0)
    assert lmax == 10.0  # the cap


def test_nezha_with_an_empty_window_runs_locally():
    v = StreamView(3, queue=[9, 9, 9], node=1)
    assert counts("nezha", v, 100, threshold="constant", level=2.0, floor=0.0) == {1: 100}


def test_nezha_with_one_active_node_is_the_shortest_queue():
    v = StreamView(4, queue=[9, 9, 1, 9], node=0)
    assert counts("nezha", v, 200, threshold="constant", level=2.0) == {2: 200}


def test_nezha_balance_when_idle_false_keeps_tasks_local_on_an_idle_cluster():
    v = StreamView(4, node=3)
    assert counts("nezha", v, 100, balance_when_idle=False) == {3: 100}
    assert len(counts("nezha", v, 400)) == 4


def test_nezha_never_places_on_an_over_loaded_node():
    v = StreamView(8, queue=[4, 4, 6 * 4, 4, 4, 4, 4, 4])
    assert 2 not in counts("nezha", v, 3000)


def test_hybrid_batch_32_tasks_on_8_idle_nodes_is_exactly_4_each():
    """003 Table 14, first row."""
    v = StreamView(8, node=0)
    b = started("hybrid-batch", v)
    nodes = decide.place(b, v, 32)
    assert Counter(nodes) == {j: 4 for j in range(8)}
    assert v.queue == [0] * 8  # the batch was placed on a copy


@pytest.mark.parametrize("seed", range(20))
def test_hybrid_batch_36_tasks_spread_at_most_2(seed):
    v = StreamView(8, node=0)
    c = Counter(decide.place(started("hybrid-batch", v, seed), v, 36))
    per = [c[j] for j in range(8)]
    assert sum(per) == 36 and max(per) - min(per) <= 2


def test_without_the_view_update_a_batch_herds():
    """Algorithm 3.1 on one snapshot of an idle cluster (003 Table 15): without updating its view the
    decider piles a batch up; with the update (the default) 32 tasks spread within 2 of each other."""
    v = StreamView(8, node=0)
    spread = []
    for update in (False, True):
        c = Counter(decide.place(started("nezha", v, 5), v, 32, update=update))
        per = [c[j] for j in range(8)]
        spread.append(max(per) - min(per))
    assert spread[0] > spread[1] and spread[1] <= 2


def test_decide_place_refuses_an_answer_that_is_not_a_node():
    from dlbkit.families.stream.balancers import Local

    class Outside(Local):
        name = ""

        def place(self, view):
            return view.n_nodes

    v = StreamView(3)
    with pytest.raises(ConfigError, match=r"answer of .*place must be a node in \[0, 2\]; got 3"):
        decide.place(Outside(), v)


def test_batch_sampling_spreads_a_batch_over_its_least_loaded_probes():
    """8 tasks, d = 2: 16 probes ≥ 10 nodes, so all are probed; the 8 tasks go one each to the 8
    shortest queues (nodes 0–7 hold 0, the last two 5)."""
    v = StreamView(10, queue=[0] * 8 + [5, 5])
    nodes = decide.place(started("batch-sampling", v), v, 8)
    assert sorted(nodes) == list(range(8)) and v.queue == [0] * 8 + [5, 5]
    # one task: d distinct probes, the shorter queue; the live view is not written
    v = StreamView(2, queue=[3, 1])
    assert counts("batch-sampling", v, 200) == {1: 200} and v.queue == [3, 1]
