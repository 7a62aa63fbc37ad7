"""Diffusion (RID, SID) and central greedy/refine as pure decisions: hand-worked views, properties."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.balancers.base import Transfer
from dlbkit.families.tree.balancers import Greedy, ReceiverDiffusion, Refine, SenderDiffusion
from dlbkit.families.tree.balancers.diffusion import apportion
from dlbkit.families.tree.balancers.greedy import net_transfers
from dlbkit.model.topology import build, neighbour_lists
from dlbkit.families.tree.model.view import TreeView

from support.profiles import examples

CHAIN5 = neighbour_lists(build("chain", 5))  # 0-1-2-3-4


def started(b, view, seed=0):
    b.start(view, np.random.default_rng(seed))
    return b


def chain_view(queue):
    return TreeView(len(queue), queue=list(queue), neighbours=[list(nb) for nb in CHAIN5])


def test_the_four_rules_are_registered_with_their_triggers():
    assert REGISTRY["rid"] is ReceiverDiffusion and REGISTRY["sid"] is SenderDiffusion
    assert REGISTRY["greedy"] is Greedy and REGISTRY["refine"] is Refine
    assert ReceiverDiffusion.receiver_initiated and not ReceiverDiffusion.periodic
    assert SenderDiffusion.sender_initiated and not SenderDiffusion.receiver_initiated
    assert Greedy.periodic and Refine.periodic
    assert ReceiverDiffusion(low_water=3).low_water == 3 and Greedy(interval=0).interval == 0


# --- apportion: whole tasks in proportion -----------------------------------------------------------
def test_apportion_gives_whole_parts_then_the_largest_remainders():
    assert apportion(5, {1: Fraction(10, 3), 3: Fraction(4, 3)}) == {1: 4, 3: 1}  # 3.57 + 1.43
    assert apportion(1, {1: Fraction(1), 2: Fraction(1)}) == {1: 1}  # a tie goes to the lower node
    assert apportion(0, {1: Fraction(1)}) == {} and apportion(3, {}) == {}


# --- RID: 001 §2.3.1 on a chain of five ---------------------------------------------------------------
def test_rid_asks_both_neighbours_in_proportion_to_their_excess():
    """Loads 0 8 0 6 0, node 2: L̄ = 14/3, deficit 14/3 -> 5 tasks; w = (10/3, 4/3), shares of 5 are
    25/7 and 10/7 -> 3 + 1, the spare one to the larger remainder (node 1)."""
    view = chain_view([0, 8, 0, 6, 0])
    b = started(ReceiverDiffusion(), view)
    assert b.on_idle(view, 2) == [Transfer(1, 2, 4), Transfer(3, 2, 1)]
    # the victims give at most half their load (W&R): 8 -> min(4, 4); 6 -> min(1, 3)
    assert b.on_request(view, 1, 2, 8, wanted=4) == 4 and b.on_request(view, 3, 2, 6, wanted=1) == 1
    assert b.on_request(view, 3, 2, 7, wanted=5) == 3


def test_rid_asks_only_neighbours_above_the_mean():
    """Loads 6 2 0 5 9, node 2: L̄ = 7/3, node 1 (2) is below it; total round(7/3) = 2, all from node 3."""
    view = chain_view([6, 2, 0, 5, 9])
    b = started(ReceiverDiffusion(), view)
    assert b.on_idle(view, 2) == [Transfer(3, 2, 2)]
    # chain end: node 0's only neighbour is node 1 (8): L̄ = 4, deficit 4
    view = chain_view([0, 8, 0, 0, 0])
    assert b.on_idle(view, 0) == [Transfer(1, 0, 4)]


def test_rid_reads_only_its_neighbourhood():
    b = started(ReceiverDiffusion(), chain_view([0] * 5))
    a = b.on_idle(chain_view([0, 8, 0, 6, 0]), 2)
    assert b.on_idle(chain_view([50, 8, 0, 6, 99]), 2) == a  # nodes 0 and 4 are two hops away


def test_rid_stays_quiet_within_the_threshold_and_when_balanced():
    b = started(ReceiverDiffusion(), chain_view([0] * 5))
    assert b.on_idle(chain_view([3, 3, 3, 3, 3]), 2) is None
    assert b.on_idle(chain_view([1, 0, 0, 0, 0]), 1) is None  # L̄ - L = 1/3 <= 0.5
    assert b.on_idle(chain_view([2, 0, 0, 0, 0]), 1) == [Transfer(0, 1, 1)]  # 2/3 > 0.5
    # 1 between two 2s: the deficit 2/3 rounds to one task, but taking it would swap the loads
    assert b.on_idle(chain_view([2, 1, 2, 0, 0]), 1) is None
    # capped at half the gap: 0 between 3 and 0: deficit 1 -> 1 task, gap 3 -> at most 1
    assert b.on_idle(chain_view([3, 0, 0, 0, 0]), 1) == [Transfer(0, 1, 1)]
    assert started(ReceiverDiffusion(threshold=1.0), chain_view([0] * 5)).on_idle(
        chain_view([2, 0, 1, 0, 0]), 1) is None  # deficit 1 is not above 1
    assert b.on_idle(TreeView(1), 0) is None  # nobody to ask


# --- SID ----------------------------------------------------------------------------------------------
def test_sid_sends_the_first_children_to_the_lighter_neighbours():
    """Loads 0 1 4 0 2, node 2 creates 2 children: L = 6, L̄ = 7/3, excess 11/3 -> min(2, 3) = 2 sent;
    deficits 4/3 (node 1) and 7/3 (node 3): shares 8/11 and 14/11 -> one each."""
    view = chain_view([0, 1, 4, 0, 2])
    b = started(SenderDiffusion(), view)
    assert b.on_spawn(view, 2, 2) == [1, 3]
    view = chain_view([0, 1, 4, 0, 2])
    b = started(SenderDiffusion(), view)
    # 5 children: L = 9, L̄ = 10/3, excess 17/3 -> all 5 go; deficits 7/3 and 10/3: 35/17 and 50/17 -> 2 + 3
    assert b.on_spawn(view, 2, 5) == [1, 1, 3, 3, 3]
    b = started(SenderDiffusion(), view)
    assert b.on_spawn(view, 0, 3) == [0, 0, 0]  # chain end: L 3, L̄ 2, excess 1 is not above 1
    assert b.on_spawn(view, 4, 3) == [3, 3, 4]  # L 5, L̄ 5/2: floor(5/2) = 2 go to node 3


def test_sid_counts_what_it_sent_until_the_neighbour_reports_again():
    view = TreeView(3)  # complete graph, all empty
    b = started(SenderDiffusion(), view)
    assert b.on_spawn(view, 0, 2) == [1, 0]  # L 2, L̄ 2/3: excess 4/3 -> 1 task, tie -> node 1
    assert b.on_spawn(view, 0, 2) == [0, 0]  # node 1 counts 1 now: L̄ = 1, excess 1 is not above 1
    assert b.on_spawn(view, 0, 3) == [2, 0, 0]  # L 3: L̄ 4/3, excess 5/3 -> 1, to node 2 (deficit 4/3)
    view.updated_at[1] = 0.5  # a newer report: node 1 is still empty (node 2 still counts 1)
    assert b.on_spawn(view, 0, 3) == [1, 0, 0]


def test_sid_keeps_children_when_not_heavy_or_balanced():
    b = started(SenderDiffusion(), chain_view([0] * 5))
    assert b.on_spawn(chain_view([0] * 5), 2, 1) == [2]  # one task is not above high_water 1
    assert b.on_spawn(chain_view([4, 4, 2, 4, 4]), 2, 2) == [2, 2]  # 4 4 4: balanced
    assert b.on_spawn(chain_view([0] * 5), 2, 0) == []


# --- greedy and refine ------------------------------------------------------------------------------
def test_greedy_fills_the_least_loaded_until_level():
    """7 1 0 4 (average 3): moves 0->2, 0->1, 0->2, 0->1, 3->2 give 3 3 3 3; netted into 3 transfers."""
    view = TreeView(4, queue=[7, 1, 0, 4])
    assert started(Greedy(), view).balance(view) == [Transfer(0, 1, 1), Transfer(0, 2, 3), Transfer(3, 1, 1)]


def test_greedy_divides_load_by_speed():
    """6 0 0 on speeds 1 2 1: ends 2 3 1 (loads 2, 1.5, 1): no single move lowers the maximum 2, and
    no placement of 6 whole tasks does better (x0 <= 1, x2 <= 1 would leave 4 for node 1: load 2)."""
    view = TreeView(3, queue=[6, 0, 0], speeds=[1.0, 2.0, 1.0])
    assert started(Greedy(), view).balance(view) == [Transfer(0, 1, 3), Transfer(0, 2, 1)]


def test_refine_moves_only_from_overloaded_to_underloaded():
    """9 5 2 0, average 4, tolerance 0.1 -> T = 4.4: node 0 gives 5, node 1 gives 1; nodes 2 and 3 take
    up to the average."""
    view = TreeView(4, queue=[9, 5, 2, 0])
    assert started(Refine(), view).balance(view) == [Transfer(0, 2, 1), Transfer(0, 3, 4), Transfer(1, 2, 1)]
    view = TreeView(4, queue=[6, 3, 3, 2])  # average 3.5: to 3, to 1, then 4 4 3 3 (3 + 1 is not below 4)
    assert started(Refine(tolerance=0.0), view).balance(view) == [Transfer(0, 1, 1), Transfer(0, 3, 1)]


def test_refine_leaves_an_imbalance_within_tolerance_that_greedy_removes():
    view = TreeView(4, queue=[4, 4, 4, 0])  # average 3; T = 4.5 with tolerance 0.5
    assert started(Refine(tolerance=0.5), view).balance(view) == []
    assert started(Greedy(), view).balance(view) == [Transfer(0, 3, 1), Transfer(1, 3, 1), Transfer(2, 3, 1)]


@pytest.mark.parametrize("name", ["greedy", "refine"])
def test_a_balanced_or_empty_system_moves_nothing(name):
    for q in ([3, 3, 3, 3], [0, 0, 0, 0], [1, 0, 0, 0], [2, 1, 2, 1]):
        view = TreeView(4, queue=q)
        assert started(make(name), view).balance(view) == [], q


def test_net_transfers_move_only_surpluses():
    assert net_transfers([5, 0, 1], [2, 2, 2]) == [Transfer(0, 1, 2), Transfer(0, 2, 1)]
    assert net_transfers([1, 1], [1, 1]) == []


@pytest.mark.parametrize("name, params, field", [
    ("rid", {"threshold": -0.5}, "threshold"), ("rid", {"low_water": 1.5}, "low_water"),
    ("sid", {"high_water": -1}, "high_water"), ("sid", {"threshold": "x"}, "threshold"),
    ("greedy", {"tolerance": -1}, "tolerance"), ("refine", {"interval": -1}, "interval"),
])
def test_bad_parameters_are_config_errors_naming_the_field(name, params, field):
    with pytest.raises(ConfigError, match=field):
        make(name, params)


# --- properties ---------------------------------------------------------------------------------------
loads = st.lists(st.integers(0, 40), min_size=1, max_size=9)
speed_choices = st.sampled_from([1.0, 0.5, 2.0, 1.5, 3.0])


def apply(queue, transfers):
    out = list(queue)
    sent = [0] * len(queue)
    for t in transfers:
        assert t.n >= 1 and t.src != t.dst and 0 <= t.src < len(queue) and 0 <= t.dst < len(queue)
        sent[t.src] += t.n
        out[t.src] -= t.n
        out[t.dst] += t.n
    return out, sent


@settings(max_examples=examples(300), deadline=None)
@given(queue=loads, data=st.data(), name=st.sampled_from(["greedy", "refine"]),
       tolerance=st.sampled_from([0.0, 0.05, 0.1, 0.5, 1.0]))
def test_central_rules_conserve_tasks_never_overdraw_and_never_raise_the_maximum(queue, data, name, tolerance):
    speeds = data.draw(st.lists(speed_choices, min_size=len(queue), max_size=len(queue)))
    view = TreeView(len(queue), queue=list(queue), speeds=speeds)
    b = started(make(name, {"tolerance": tolerance}), view)
    after, sent = apply(queue, b.balance(view))
    assert sum(after) == sum(queue)
    assert all(s <= q for s, q in zip(sent, queue))  # never more than a node holds
    assert all(x >= 0 for x in after)
    assert max(x / s for x, s in zip(after, speeds)) <= max(x / s for x, s in zip(queue, speeds)) + 1e-12
    senders = {i for i, s in enumerate(sent) if s}
    receivers = {i for i, (a, q) in enumerate(zip(after, queue)) if a > q}
    assert not senders & receivers
    avg = sum(queue) / sum(speeds)
    if name == "refine":
        assert all(queue[i] / speeds[i] > (1 + tolerance) * avg for i in senders)
        assert all(queue[j] / speeds[j] < avg for j in receivers)
    elif tolerance == 0.0:  # greedy stops only when no single move lowers the most loaded node
        h = max(range(len(after)), key=lambda i: (after[i] / speeds[i], -i))
        assert all((after[j] + 1) / speeds[j] >= after[h] / speeds[h] for j in range(len(after)) if j != h)


@settings(max_examples=examples(300), deadline=None)
@given(queue=loads, node=st.integers(0, 8), kind=st.sampled_from(["chain", "ring", "complete", "star"]))
def test_rid_asks_neighbours_above_the_mean_for_the_rounded_deficit(queue, node, kind):
    n = len(queue)
    node %= n
    kind = "chain" if kind == "ring" and n < 3 else kind
    nb = neighbour_lists(build(kind, n))
    view = TreeView(n, queue=list(queue), neighbours=nb)
    reqs = started(ReceiverDiffusion(threshold=0.0), view).on_idle(view, node) or []
    mean = Fraction(queue[node] + sum(queue[j] for j in nb[node]), len(nb[node]) + 1)
    assert all(r.dst == node and r.src in nb[node] and queue[r.src] > mean and r.n >= 1 for r in reqs)
    rounded = int(mean - queue[node] + Fraction(1, 2)) if mean > queue[node] else 0
    assert sum(r.n for r in reqs) <= rounded
    # every move narrows its pair's gap, and only the cap takes tasks off the rounded deficit
    assert all(r.n <= (queue[r.src] - queue[node]) // 2 for r in reqs)
    uncapped = all(queue[j] - queue[node] >= 2 * rounded for j in nb[node] if queue[j] > mean)
    assert not uncapped or sum(r.n for r in reqs) == rounded


@settings(max_examples=examples(300), deadline=None)
@given(queue=loads, node=st.integers(0, 8), children=st.integers(0, 6))
def test_sid_sends_at_most_the_whole_excess_to_lighter_neighbours(queue, node, children):
    n = len(queue)
    node %= n
    nb = neighbour_lists(build("chain", n))
    view = TreeView(n, queue=list(queue), neighbours=nb)
    out = started(SenderDiffusion(), view).on_spawn(view, node, children)
    assert len(out) == children
    away = [d for d in out if d != node]
    own = queue[node] + children
    mean = Fraction(own + sum(queue[j] for j in nb[node]), len(nb[node]) + 1)
    assert all(d in nb[node] and queue[d] < mean for d in away)
    assert len(away) <= max(0, int(own - mean))
    assert out[len(away):] == [node] * (children - len(away))  # the last children stay
