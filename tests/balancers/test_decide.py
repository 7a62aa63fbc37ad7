"""The checks every engine applies to a balancer's answer (dlbkit.balancers.decide)."""

import math

import numpy as np
import pytest

from dlbkit import ConfigError, LoopView, Transfer, TreeView, make
from dlbkit.families.divisible.balancers import decide as divisible_decide
from dlbkit.families.divisible.balancers.base import ChunkingBalancer
from dlbkit.families.spmd.balancers import decide as spmd_decide
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.families.spmd.model.view import SpmdView
from dlbkit.families.tree.balancers import decide as tree_decide
from dlbkit.families.tree.balancers.base import MigrationBalancer


class Says(ChunkingBalancer):
    name = ""

    def __init__(self, *, n=0):
        self.n = n

    def chunk(self, view, worker):
        return self.n


@pytest.mark.parametrize("said, remaining, got", [(0, 10, 1), (-3, 10, 1), (4, 10, 4), (25, 10, 10), (7, 7, 7)])
def test_a_chunk_is_clamped_to_one_and_what_remains(said, remaining, got):
    view = LoopView(100, 2, [1.0, 1.0], remaining=remaining)
    assert divisible_decide.chunk(Says(n=said), view, 0) == got


def test_gss_decides_the_same_through_decide_as_directly():
    view = LoopView(1000, 4, [1.0] * 4)
    b = make("gss")
    b.start(view)
    for remaining in (1000, 750, 13, 1):
        view.remaining = remaining
        assert divisible_decide.chunk(b, view, 0) == max(1, min(b.chunk(view, 0), remaining))


class Odd(MigrationBalancer):
    name = ""
    receiver_initiated = sender_initiated = periodic = True

    def __init__(self, *, idle=None, give=0, spawn=None, moves=()):
        self.idle, self.give, self.spawn, self.moves = idle, give, spawn, moves

    def on_idle(self, view, node):
        return self.idle

    def on_request(self, view, victim, thief, queue_length, wanted=0):
        return self.give

    def on_spawn(self, view, node, n_children):
        return self.spawn

    def balance(self, view):
        return list(self.moves)


def started(b, P=4):
    b.start(TreeView(P), np.random.default_rng(0))
    return b


def test_victims_must_be_other_nodes():
    view = TreeView(4)
    assert tree_decide.victims(started(Odd(idle=2)), view, 0) == [(2, 0)]
    assert tree_decide.victims(started(Odd(idle=[Transfer(1, 0, 3), Transfer(3, 0, -2)])), view, 0) == [(1, 3), (3, 0)]
    assert tree_decide.victims(started(Odd(idle=None)), view, 0) == []
    for bad in (0, 4, -1):
        with pytest.raises(ConfigError, match=r"the victim .on_idle chose for node 0 must be another node in 0..3"):
            tree_decide.victims(started(Odd(idle=bad)), view, 0)


@pytest.mark.parametrize("said, q, got", [(-1, 5, 0), (2, 5, 2), (9, 5, 5), (0, 0, 0)])
def test_a_gift_is_clamped_to_what_the_victim_holds(said, q, got):
    assert tree_decide.given(started(Odd(give=said)), TreeView(4), 1, 0, q) == got


def test_placements_name_one_node_per_child():
    view = TreeView(4)
    assert tree_decide.placements(started(Odd(spawn=[0, 3, np.int64(2)])), view, 0, 3) == [0, 3, 2]
    with pytest.raises(ConfigError, match="one per child"):
        tree_decide.placements(started(Odd(spawn=[0])), view, 0, 2)
    with pytest.raises(ConfigError, match=r"a node index in \[0, 3\]"):
        tree_decide.placements(started(Odd(spawn=[4])), view, 0, 1)


def test_periodic_transfers_go_between_two_different_nodes():
    view = TreeView(4)
    assert tree_decide.transfers(started(Odd(moves=[Transfer(0, 1, 2, 1)])), view) == [Transfer(0, 1, 2, 1)]
    for bad in (Transfer(1, 1, 2), Transfer(0, 4, 1), (0, 1, 2), Transfer(0, 1, 1.5)):
        with pytest.raises(ConfigError, match="src != dst"):
            tree_decide.transfers(started(Odd(moves=[bad])), view)


class Moves(RepartitionBalancer):
    name = ""

    def __init__(self, *, moves=()):
        self.moves = moves

    def decide(self, view, node):
        return list(self.moves)


def test_repartition_moves_only_between_neighbours():
    view = SpmdView(3, [10, 10, 10], [1.0] * 3, [1.0] * 3, [1e3] * 3, [0.0] * 3, [1e6] * 3)
    line = [[1], [0, 2], [1]]
    assert spmd_decide.repartition(Moves(moves=[Transfer(0, 1, 3)]), view, 0, line) == [Transfer(0, 1, 3)]
    with pytest.raises(ConfigError, match="between neighbours"):
        spmd_decide.repartition(Moves(moves=[Transfer(0, 2, 3)]), view, 0, line)
    with pytest.raises(ConfigError, match="between neighbours"):
        spmd_decide.repartition(Moves(moves=[Transfer(1, 2, -1)]), view, 1, line)


class Rounds(ChunkingBalancer):
    name = ""

    def __init__(self, *, counts=(), order=None):
        self.counts, self.order = counts, order

    def chunk(self, view, worker):
        return 1

    def allocate(self, view):
        return list(self.counts)

    def send_order(self, view):
        return list(self.order) if self.order is not None else list(range(view.n_nodes))


def test_a_rounds_allocation_is_checked_and_scaled_to_what_remains():
    view = LoopView(100, 3, [1.0] * 3, remaining=30)
    assert divisible_decide.allocation(Rounds(counts=[36, 22, 10]), view) == ([16, 10, 4], [0, 1, 2])  # largest remainders
    assert divisible_decide.allocation(Rounds(counts=[0, 0, 0]), view) == ([1, 0, 0], [0, 1, 2])  # a round must progress
    with pytest.raises(ConfigError, match="allocation of balancer"):
        divisible_decide.allocation(Rounds(counts=[1, -1, 0]), view)
    with pytest.raises(ConfigError, match="send_order of balancer"):
        divisible_decide.allocation(Rounds(counts=[1, 1, 1], order=[0, 0, 1]), view)
    # a custom allocate/send_order answering None, text or NaN: the same one line, not a bare int() error
    for counts in ([None, 1, 1], ["3", 1, 1], [math.nan, 1, 1]):
        with pytest.raises(ConfigError, match=r"^allocation of balancer '' must be 3 non-negative counts; got \[.*\]$"):
            divisible_decide.allocation(Rounds(counts=counts), view)
    with pytest.raises(ConfigError, match=r"^send_order of balancer '' must be a permutation of the worker indices "
                                          r"0..2; got \[0, '1', 2\]$"):
        divisible_decide.allocation(Rounds(counts=[1, 1, 1], order=[0, "1", 2]), view)
    forgot = Rounds()
    forgot.allocate = lambda view: None  # a forgotten return
    with pytest.raises(ConfigError, match=r"^allocation of balancer '' must be 3 non-negative counts; got None$"):
        divisible_decide.allocation(forgot, view)
    # an iterator answer (a generator, reversed(range(P))) counts as its list: the check reads it once
    lazy = Rounds()
    lazy.allocate = lambda view: (c for c in [36, 22, 10])
    lazy.send_order = lambda view: reversed(range(view.n_nodes))
    assert divisible_decide.allocation(lazy, view) == ([16, 10, 4], [2, 1, 0])
    record = []
    divisible_decide.allocation(Rounds(counts=[5, 5, 5], order=[2, 1, 0]), view, record)
    assert record[0].hook == "allocate" and record[0].answer == ([5, 5, 5], [2, 1, 0]) and record[0].node == -1
