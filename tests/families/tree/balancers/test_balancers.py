"""Migration balancers as pure decisions: no engine, a TreeView and a seeded Generator only."""


import numpy as np
import pytest

from dlbkit import ConfigError, Taxonomy, make
from dlbkit.balancers.registry import REGISTRY, names
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.families.tree.balancers import RandomPlacement, WorkStealing
from dlbkit.families.tree.model.view import TreeView

MIGRATION = names("migration")
_CANDIDATES = [0, -1, -0.5, 1.5, 2, "bogus", float("nan"), None, True]


def started(b, view, seed=7):
    b.start(view, np.random.default_rng(seed))
    return b


# --- the contract every registered migration balancer keeps ------------------------------------------
def test_the_first_migration_balancers_are_registered_under_their_names():
    assert {"steal", "random"} <= set(MIGRATION)
    assert REGISTRY["steal"] is WorkStealing and REGISTRY["random"] is RandomPlacement
    assert all(REGISTRY[n].kind == "migration" for n in MIGRATION)


@pytest.mark.parametrize("name", MIGRATION)
def test_randomised_rules_refuse_to_start_without_the_engines_generator(name):
    with pytest.raises(ConfigError, match="rng"):
        REGISTRY[name]().start(TreeView(3), None)


# --- WorkStealing ------------------------------------------------------------------------------------
def test_steal_victim_is_uniform_over_the_others():
    """20,000 draws for node 2 of 5: each other node within 4 standard deviations of 5,000."""
    view = TreeView(5, node=2)
    b = started(WorkStealing(), view, seed=123)
    draws = np.array([b.on_idle(view, 2) for _ in range(20_000)])
    counts = np.bincount(draws, minlength=5)
    assert counts[2] == 0
    sd = np.sqrt(20_000 * 0.25 * 0.75)
    assert np.all(np.abs(counts[[0, 1, 3, 4]] - 5_000) < 4 * sd), counts


def test_steal_victims_follow_the_m2_rule_on_the_same_stream():
    """docs/reference-models.md M2: r uniform in [0, P-1), victim r + 1 if r >= i else r."""
    view = TreeView(6)
    b = started(WorkStealing(), view, seed=5)
    ref = np.random.default_rng(5)
    for i in [0, 3, 5, 1, 4, 2] * 5:
        r = int(ref.integers(5))
        assert b.on_idle(view, i) == (r + 1 if r >= i else r)


def test_steal_victim_stays_within_the_topology_and_nobody_is_asked_alone():
    view = TreeView(6, neighbours=[[1, 5], [0, 2], [1, 3], [2, 4], [3, 5], [4, 0]])
    b = started(WorkStealing(), view)
    assert {b.on_idle(view, 3) for _ in range(200)} == {2, 4}
    assert started(WorkStealing(), TreeView(1)).on_idle(TreeView(1), 0) is None


@pytest.mark.parametrize("params, expected", [
    ({}, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5]),                                  # M2: floor(n/2), none below 2
    ({"fraction": 1.0, "max_tasks": 1}, [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]),   # Cilk: steal one
    ({"fraction": 0.25}, [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]),
    ({"max_tasks": 3}, [0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 3]),
], ids=["half (M2)", "steal one", "quarter", "half, at most 3"])
def test_steal_answer_gives_the_stated_share_of_the_oldest_tasks(params, expected):
    view = TreeView(2)
    b = started(WorkStealing(**params), view)
    assert [b.on_request(view, 0, 1, n) for n in range(11)] == expected


def test_steal_answer_never_exceeds_what_was_wanted_or_held():
    view = TreeView(2)
    b = started(WorkStealing(fraction=1.0), view)
    assert b.on_request(view, 0, 1, 10, wanted=3) == 3
    assert b.on_request(view, 0, 1, 2, wanted=5) == 2
    assert make("steal", {"fraction": 0.29}).on_request(view, 0, 1, 100) == 29  # no float round-down


# --- RandomPlacement ---------------------------------------------------------------------------------
def test_random_places_every_child_uniformly_over_all_nodes_itself_included():
    """001 §2.3.3 (a): a destination uniform over the P nodes; drawing itself means 'run locally'."""
    view = TreeView(4)
    b = started(RandomPlacement(), view, seed=11)
    dests = np.array([d for _ in range(5_000) for d in b.on_spawn(view, 1, 4)])
    counts = np.bincount(dests, minlength=4)
    sd = np.sqrt(20_000 * 0.25 * 0.75)
    assert np.all(np.abs(counts - 5_000) < 4 * sd), counts


def test_random_draws_one_number_per_child_from_the_engines_stream():
    view = TreeView(5)
    b = started(RandomPlacement(), view, seed=3)
    ref = np.random.default_rng(3)
    assert b.on_spawn(view, 0, 7) == [int(x) for x in ref.integers(5, size=7)]


def test_random_with_threshold_keeps_children_local_until_the_queue_is_heavy():
    """001 §2.3.3 (b): migrate only above the heavy limit; kept children count towards the queue."""
    view = TreeView(4, queue=[2, 0, 0, 0])
    b = started(RandomPlacement(threshold=5), view, seed=9)
    ref = np.random.default_rng(9)
    out = b.on_spawn(view, 0, 6)
    assert out[:3] == [0, 0, 0]  # queue 2 -> 5 locally
    assert out[3:] == [int(ref.integers(4)) for _ in range(3)]  # then one draw per child
    assert started(RandomPlacement(threshold=100), view).on_spawn(view, 0, 8) == [0] * 8


def test_random_asks_nobody_when_idle():
    view = TreeView(3)
    b = started(RandomPlacement(), view)
    assert b.on_idle(view, 0) is None and not RandomPlacement.receiver_initiated
    assert RandomPlacement.sender_initiated and WorkStealing.receiver_initiated


# --- the base class: documented defaults ---------------------------------------------------------------
class _Nothing(MigrationBalancer):
    name = "nothing"
    source = "test"
    taxonomy = Taxonomy("none", "none", "none", "none", "none")


def test_base_hooks_default_to_no_migration():
    view = TreeView(3)
    b = started(_Nothing(), view)
    assert b.on_idle(view, 0) is None
    assert b.on_spawn(view, 1, 3) == [1, 1, 1]
    assert b.balance(view) == []
    assert [b.on_request(view, 0, 1, n) for n in range(6)] == [0, 0, 1, 1, 2, 2]
    assert b.on_request(view, 0, 1, 10, wanted=2) == 2
    assert not (b.receiver_initiated or b.sender_initiated or b.periodic) and b.low_water == 0


def test_on_idle_answers_normalise_to_requests():
    assert MigrationBalancer.requests(2, None) == []
    assert MigrationBalancer.requests(2, 0) == [Transfer(0, 2, 0)]
    assert MigrationBalancer.requests(2, np.int64(1)) == [Transfer(1, 2, 0)]
    assert MigrationBalancer.requests(2, Transfer(1, 2, 3)) == [Transfer(1, 2, 3)]
    assert MigrationBalancer.requests(2, [Transfer(0, 2, 1), Transfer(1, 2, 4)]) == [Transfer(0, 2, 1),
                                                                                      Transfer(1, 2, 4)]


def test_a_parameter_named_like_a_trigger_overrides_it_per_instance():
    class Periodic(_Nothing):
        periodic = True
        _parameter_constraints = {"interval": []}

        def __init__(self, *, interval: int = 16):
            self.interval = interval

    assert Periodic().interval == 16 and Periodic(interval=4).interval == 4 and MigrationBalancer.interval == 1


def test_tree_view_defaults_and_ages():
    v = TreeView(4, time=3.0, queue=[1, 0, 5, 2], updated_at=[3.0, 1.0, 2.5, 0.0])
    assert v.neighbours == [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]]
    assert v.done == [0] * 4 and v.speeds == [1.0] * 4 and v.node == -1
    assert v.waiting == 8
    assert [v.age(i) for i in range(4)] == [0.0, 2.0, 0.5, 3.0]
