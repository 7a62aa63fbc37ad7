"""Placement decisions on hand-worked views: Nezha's quarantine of over-loaded nodes (003 §3.5.3: how a
node enters and leaves it, an empty window → local) and the spillback rule (Ray's hybrid policy)."""

from collections import Counter

import numpy as np
import pytest

from dlbkit import ConfigError, make
from dlbkit.families.stream.balancers.nezha import window
from dlbkit.families.stream.model.view import StreamView


def started(name, view, seed=0, **params):
    b = make(name, params)
    b.start(view, np.random.default_rng(seed))
    return b


def counts(name, view, n=4000, seed=0, **params):
    b = started(name, view, seed, **params)
    return Counter(b.place(view) for _ in range(n))


# --- quarantine (003 §3.5.3) ------------------------------------------------------------------------

def test_quarantine_is_off_by_default_as_in_algorithm_3_1():
    assert make("nezha").quarantine is False


def test_an_over_loaded_origin_keeps_its_task_under_quarantine_and_sends_it_away_without():
    """Queues 9 1 1 1 (one slot each): mean 3, std √12 = 3.464, l_max = 6.464, so node 0 (9) is
    over-loaded. Without quarantine its task goes to one of 1, 2, 3 (never to 0, over-loaded nodes
    never receive); with quarantine it stays at 0, every time."""
    v = StreamView(4, queue=[9, 1, 1, 1], node=0)
    act, _, lmax = window(v, "adaptive", 1.0, 0, 0, 1.0, 1e6)
    assert act == [1, 2, 3] and lmax == pytest.approx(3 + 12 ** 0.5)
    free = counts("nezha", v, 3000)
    assert set(free) == {1, 2, 3} and all(abs(free[j] / 3000 - 1 / 3) < 0.04 for j in (1, 2, 3))
    assert counts("nezha", v, 500, quarantine=True) == {0: 500}


def test_an_active_origin_under_quarantine_places_as_algorithm_3_1():
    """Same queues from node 1 (active): quarantine changes nothing, the same draws give the same nodes."""
    v = StreamView(4, queue=[9, 1, 1, 1], node=1)
    assert counts("nezha", v, 2000, seed=3, quarantine=True) == counts("nezha", v, 2000, seed=3)


def test_a_node_enters_quarantine_above_the_threshold_and_leaves_at_or_below_it():
    """Constant threshold 3 tasks per slot. Node 0 at 4 (> 3): quarantined, keeps its task. Node 0 at
    3 (= 3, not over-loaded): out of quarantine at once (no hysteresis), it balances: d = 4 distinct
    choices of the 4 nodes give the shortest queue, one of nodes 1–3 (1 task each), never 0."""
    params = dict(threshold="constant", level=3.0, floor=0.0, quarantine=True)
    assert counts("nezha", StreamView(4, queue=[4, 1, 1, 1], node=0), 300, **params) == {0: 300}
    c = counts("nezha", StreamView(4, queue=[3, 1, 1, 1], node=0), 3000, d=4, replace=False, **params)
    assert set(c) == {1, 2, 3} and all(abs(c[j] / 3000 - 1 / 3) < 0.04 for j in (1, 2, 3))


def test_an_empty_window_runs_locally_with_or_without_quarantine():
    """Queues 9 9 9 against a constant threshold of 2 (no floor): φ = 0, every origin keeps its task."""
    for q in (False, True):
        for o in range(3):
            v = StreamView(3, queue=[9, 9, 9], node=o)
            assert counts("nezha", v, 50, threshold="constant", level=2.0, floor=0.0, quarantine=q) == {o: 50}


def test_quarantine_has_no_effect_when_no_node_is_over_loaded():
    """Queues 1 1 2 1 under the adaptive threshold with floor 1: l_max = max(1.25 + 0.433, 1) = 1.683,
    so node 2 (2) is over-loaded and the others are not; from node 0 both versions place alike."""
    v = StreamView(4, queue=[1, 1, 2, 1], node=0)
    assert counts("nezha", v, 1000, seed=5, quarantine=True) == counts("nezha", v, 1000, seed=5)


def test_quarantine_must_be_true_or_false():
    with pytest.raises(ConfigError, match="quarantine"):
        make("nezha", {"quarantine": "yes"})


# --- spillback (Ray's hybrid scheduling policy) ------------------------------------------------------

def test_spillback_packs_locally_below_the_threshold():
    """Slots 2, origin 0 with 0 tasks (u = 0 < 0.5): local, whatever the others hold."""
    v = StreamView(4, queue=[0, 3, 1, 2], slots=[2, 2, 2, 2], node=0)
    assert counts("spillback", v, 200) == {0: 200}


def test_spillback_spills_at_the_threshold_to_the_top_k():
    """Origin 0 with 1 task on 2 slots (u = 0.5, not below 0.5): spill. u = 0.5 1.5 0.5 1.0; k =
    max(1, ⌊0.2·4⌋) = 1: the single best, a tie between nodes 0 and 2 at 0.5, broken at random."""
    v = StreamView(4, queue=[1, 3, 1, 2], slots=[2, 2, 2, 2], node=0)
    c = counts("spillback", v, 4000)
    assert set(c) == {0, 2} and abs(c[0] / 4000 - 0.5) < 0.03


def test_spillback_truncates_utilisation_below_the_threshold_to_zero():
    """8 nodes of 4 slots, queues 4 1 0 1 3 2 0 1 from node 0 (u = 1: spill). u = 1 .25 0 .25 .75 .5 0
    .25, below 0.5 truncated to 0: nodes 1 2 3 6 7 tie at 0; k = max(1, ⌊1.6⌋) = 1, so each of the
    five is chosen with probability 1/5 (node 1 with one task as often as node 2 with none)."""
    v = StreamView(8, queue=[4, 1, 0, 1, 3, 2, 0, 1], slots=[4] * 8, node=0)
    c = counts("spillback", v, 10000)
    assert set(c) == {1, 2, 3, 6, 7} and all(abs(c[j] / 10000 - 0.2) < 0.02 for j in (1, 2, 3, 6, 7))


def test_spillback_draws_uniformly_among_the_top_k():
    """Slots 2, queues 2 6 0 4 from node 0 (u = 1: spill); u = 1 3 0 2; top_k_absolute 2: the two
    best are nodes 2 (0) and 0 (1), each half the time; nodes 1 and 3 never."""
    v = StreamView(4, queue=[2, 6, 0, 4], slots=[2, 2, 2, 2], node=0)
    c = counts("spillback", v, 4000, top_k_absolute=2)
    assert set(c) == {0, 2} and abs(c[2] / 4000 - 0.5) < 0.03
    # the fraction: k = ⌊0.75 · 4⌋ = 3, nodes 2, 0 and 3 a third each
    c = counts("spillback", v, 6000, top_k_fraction=0.75)
    assert set(c) == {0, 2, 3} and all(abs(c[j] / 6000 - 1 / 3) < 0.03 for j in (0, 2, 3))


def test_spillback_threshold_zero_always_spills_and_k_one_is_the_least_utilised():
    """threshold 0: the origin is never below it; with k = 1 and distinct utilisations the task goes
    to the least utilised node (per slot: 3/4 < 1/1 < 4/2)."""
    v = StreamView(3, queue=[1, 4, 3], slots=[1, 2, 4], node=2)
    assert counts("spillback", v, 100, threshold=0.0) == {2: 100}
    v = StreamView(3, queue=[1, 4, 3], slots=[1, 2, 4], node=0)
    assert counts("spillback", v, 100, threshold=0.0) == {2: 100}


@pytest.mark.parametrize("params, field", [({"threshold": -0.1}, "threshold"),
                                           ({"top_k_fraction": 1.5}, "top_k_fraction"),
                                           ({"top_k_absolute": 0}, "top_k_absolute")])
def test_spillback_refuses_bad_parameters(params, field):
    with pytest.raises(ConfigError, match=field):
        make("spillback", params)


def test_hybrid_batch_under_quarantine_keeps_an_over_loaded_origins_batch():
    """Queues 9 1 1 1 from node 0 (over-loaded, as above): a batch of 8 stays at node 0 with quarantine;
    without, round-robin over the window 1, 2, 3 gives x = 2 each and the remainder y = 2 by Algorithm
    3.1, never node 0."""
    from dlbkit.families.stream.balancers import decide
    v = StreamView(4, queue=[9, 1, 1, 1], node=0)
    assert decide.place(started("hybrid-batch", v, quarantine=True), v, 8) == [0] * 8
    v = StreamView(4, queue=[9, 1, 1, 1], node=0)
    nodes = decide.place(started("hybrid-batch", v), v, 8)
    c = Counter(nodes)
    assert 0 not in c and sum(c.values()) == 8 and all(c[j] >= 2 for j in (1, 2, 3))
