"""The information layer's models on their own: who sends what to whom, freshest-wins merging, ages, cost."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, info
from dlbkit.info import ENTRY_BYTES, HEADER_BYTES, InfoMessage

from support.profiles import examples

RING4 = [[1, 3], [0, 2], [1, 3], [2, 0]]


def started(model, P=4, neighbours=RING4, loads=(5, 0, 0, 0), seed=1):
    model.start(P, neighbours, list(loads), np.random.default_rng(seed))
    return model


def known(model, node, t, own):
    v, s = [0] * model.n_nodes_, [0.0] * model.n_nodes_
    model.fill(node, t, own, v, s, integer=True)
    return v, s


@pytest.mark.parametrize("spec, cls", [(None, info.Exact), ("exact", info.Exact), ("periodic", info.Periodic),
                                       ({"model": "neighbour", "period": 2.0}, info.NeighbourExchange),
                                       ({"model": "gossip", "period": 0.5, "fanout": 3}, info.Gossip)])
def test_resolve_builds_a_model_from_a_name_or_a_table(spec, cls):
    m = info.resolve(spec)
    assert type(m) is cls
    if isinstance(spec, dict):
        assert all(getattr(m, k) == v for k, v in spec.items() if k != "model")


@pytest.mark.parametrize("spec, message", [
    ("gosip", r"info.model must be an information model: exact, periodic, neighbour, gossip, scatter-old, scatter-4.1, "
     r"scatter-4.2, scatter-4.3, monitored; got 'gosip'"),
    ({"model": "gossip", "period": 0}, r"info \(parameter 'period' of gossip\) must be a number in the range \(0, inf\) \(at least 1e-30\); got 0"),
    ({"model": "periodic", "period": -1.0}, r"period"),
    ({"model": "gossip", "fanout": 0}, r"fanout"),
    ({"model": "gossip", "perod": 1.0}, r"info.perod must be a parameter of the 'gossip' model: period, fanout, selection, pull"),
    ({"period": 1.0}, r"info.model must be an information model"),
    (3, r"info must be an information model name"),
])
def test_bad_information_specs_name_the_field(spec, message):
    with pytest.raises(ConfigError, match=message):
        info.resolve(spec)


def test_exact_is_recognised_by_engines_and_sends_nothing():
    m = started(info.Exact())
    assert m.exact and m.interval == float("inf") and m.round(1.0, [1, 2, 3, 4]) == []


def test_periodic_reports_reach_only_the_centre():
    m = started(info.Periodic(period=1.0, centre=2))
    msgs = m.round(1.0, [4, 1, 0, 7])
    assert [(x.src, x.dst) for x in msgs] == [(0, 2), (1, 2), (3, 2)]
    assert m.messages_ == 3 and m.bytes_ == 3 * (HEADER_BYTES + ENTRY_BYTES)
    for x in msgs:
        m.deliver(x)
    assert known(m, 2, 1.5, 9) == ([4, 1, 9, 7], [1.0, 1.0, 1.5, 1.0])
    assert known(m, 0, 1.5, 3) == ([3, 0, 0, 0], [1.5, 0.0, 0.0, 0.0])  # the start, and itself
    with pytest.raises(ConfigError, match="centre"):
        started(info.Periodic(centre=4))


def test_neighbour_exchange_carries_one_hop():
    m = started(info.NeighbourExchange(period=1.0))
    msgs = m.round(1.0, [4, 1, 2, 7])
    assert len(msgs) == 8 and sorted((x.src, x.dst) for x in msgs)[:2] == [(0, 1), (0, 3)]
    for x in msgs:
        m.deliver(x)
    v, s = known(m, 1, 1.0, 1)
    assert v == [4, 1, 2, 0] and s == [1.0, 1.0, 1.0, 0.0]  # node 3 is two hops away: still the start


def test_gossip_spreads_every_load_and_ages_are_measured():
    P = 16
    m = started(info.Gossip(period=1.0, fanout=1), P=P, neighbours=[[] for _ in range(P)], loads=[0] * P)
    for k in range(1, 13):
        msgs = m.round(float(k), list(range(P)))
        assert len(msgs) == P and all(x.src != x.dst and len(x.nodes) == P for x in msgs)
        for x in msgs:
            m.deliver(x)
    assert (m.stamps_ > 0).all()  # after 12 rounds everyone has heard (directly or not) from everyone
    v, s = known(m, 0, 12.0, 0)
    assert v == list(range(P))
    assert m.age_mean == pytest.approx(np.mean([12.0 - x for x in s[1:]]))
    assert m.bytes_ == 12 * P * (HEADER_BYTES + ENTRY_BYTES * P)


def test_gossip_is_deterministic_for_a_seed():
    def pairs(seed):
        m = started(info.Gossip(period=1.0, fanout=2), seed=seed)
        return [(x.src, x.dst) for k in range(1, 4) for x in m.round(float(k), [1, 2, 3, 4])]
    assert pairs(7) == pairs(7) and pairs(7) != pairs(8)


def test_an_older_entry_never_replaces_a_newer_one():
    m = started(info.Gossip(period=1.0))
    new = InfoMessage(1, 0, np.array([2]), np.array([9.0]), np.array([3.0]))
    old = InfoMessage(3, 0, np.array([2, 0]), np.array([1.0, 8.0]), np.array([2.0, 5.0]))
    m.deliver(new)
    m.deliver(old)
    assert m.values_[0, 2] == 9.0 and m.stamps_[0, 2] == 3.0
    assert m.values_[0, 0] == 5.0  # a node's own entry is never taken from others


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.floats(0, 10), st.integers(0, 2**31 - 1)),
                min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_merging_is_order_independent(entries, rnd):
    """Freshest wins: whatever order messages arrive in, every table ends the same (distinct stamps)."""
    msgs = [InfoMessage(src, 0, np.array([node]), np.array([float(val)]), np.array([stamp + 1e-6 * k]))
            for k, (node, src, stamp, val) in enumerate(entries)]
    a, b = started(info.Gossip()), started(info.Gossip())
    for x in msgs:
        a.deliver(x)
    shuffled = list(msgs)
    rnd.shuffle(shuffled)
    for x in shuffled:
        b.deliver(x)
    assert np.array_equal(a.values_, b.values_) and np.array_equal(a.stamps_, b.stamps_)
