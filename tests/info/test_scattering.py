"""003 Chapter 4's scattering models and the monitored copy on the information layer: hand-worked
cases (who knows what after k periods), freshness ε and η, invariants, bad input, and every model in
the stream engine."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, Node, Platform, Stream, info
from dlbkit.info import ENTRY_BYTES, HEADER_BYTES, InfoMessage, improvement
from dlbkit.info.scatter_43 import default_timeout
from dlbkit.info.selection import Epochs, uniform_peers
from dlbkit.model.gossip_recursion import cycle_steps

from support.profiles import examples

P4 = Platform([Node(f"n{i}") for i in range(4)])
SCATTER = ("scatter-old", "scatter-4.1", "scatter-4.2", "scatter-4.3")
MODELS = SCATTER + ("gossip", "monitored")


def started(spec, P, loads=None, seed=1):
    m = info.resolve(spec)
    m.start(P, [[]] * P, list(loads) if loads is not None else [0] * P, np.random.default_rng(seed))
    return m


def rounds(m, loads_per_round, t0=1):
    """Run rounds at t0, t0 + 1, … with the given true loads, every message delivered at once."""
    sent = []
    for k, loads in enumerate(loads_per_round):
        msgs = m.round(float(t0 + k), loads)
        sent.append([(x.src, x.dst) for x in msgs])
        for x in msgs:
            m.deliver(x)
    return sent


# --- the shift-and-merge vector (i-4.1) by hand -------------------------------------------------------------------

def test_start_vectors_hold_own_then_successors():
    m = started({"model": "scatter-old", "l": 4}, 4, loads=[10, 11, 12, 13])
    assert m.vnodes_ == [[0, 1, 2, 3], [1, 2, 3, 0], [2, 3, 0, 1], [3, 0, 1, 2]]
    assert m.vvalues_[2] == [12, 13, 10, 11]


def test_shift_and_merge_interleaves_and_an_older_value_overwrites_a_newer_one():
    """i-4.1: own entries 1… go to the even slots, the received half to the odd ones; the estimate is
    the first entry of each node; without stamps a late, older value wins (003 §4.3.1, Example 4.1)."""
    m = started({"model": "scatter-old", "l": 4}, 4, loads=[10, 11, 12, 13])
    m.deliver(InfoMessage(1, 0, np.array([1, 2]), np.array([5.0, 6.0]), np.array([1.0, 1.0])))
    assert m.vnodes_[0] == [0, 1, 1, 2] and m.vvalues_[0] == [10, 5, 11, 6]
    assert m.values_[0, 1:].tolist() == [5, 6, 13] and m.stamps_[0, 1:].tolist() == [1, 1, 0]  # 3 absent: kept
    m.deliver(InfoMessage(3, 0, np.array([3, 2]), np.array([7.0, 9.0]), np.array([2.0, 0.5])))
    assert m.vnodes_[0] == [0, 3, 1, 2]
    assert m.values_[0, 1:].tolist() == [5, 9, 7]
    assert m.stamps_[0, 2] == 0.5  # node 2's entry went back from the value of t = 1 to one of t = 0.5


def test_a_message_carries_the_first_half_with_the_own_load_current():
    m = started({"model": "scatter-4.2", "l": 6}, 8, loads=range(8))
    (msg,) = [x for x in m.round(3.0, [9, 1, 2, 3, 4, 5, 6, 7]) if x.src == 0]
    assert msg.nodes.tolist() == [0, 1, 2] and msg.values.tolist() == [9, 1, 2] and msg.stamps.tolist() == [3, 0, 0]
    assert m.bytes_ == 8 * (HEADER_BYTES + 3 * ENTRY_BYTES)


def test_an_odd_length_sends_as_many_entries_as_the_odd_slots_hold():
    m = started({"model": "scatter-old", "l": 5}, 6, loads=range(6))
    msgs = m.round(1.0, list(range(6)))
    assert all(len(x.nodes) == 2 for x in msgs)
    m.deliver(InfoMessage(4, 0, np.array([4, 5]), np.array([40.0, 50.0]), np.array([1.0, 1.0])))
    assert m.vnodes_[0] == [0, 4, 1, 5, 2]


# --- selection: who is told in which period -----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["scatter-4.1", "scatter-4.2", "scatter-4.3"])
def test_algorithm_4_1_tells_every_peer_once_per_epoch(name):
    """N − 1 periods: each sender's receivers are a permutation of its peers (constraint_select)."""
    P = 6
    m = started(name, P, seed=7)
    sent = rounds(m, [[0] * P] * (2 * (P - 1)))
    for epoch in (sent[:P - 1], sent[P - 1:]):
        for i in range(P):
            assert sorted(d for r in epoch for s, d in r if s == i) == [j for j in range(P) if j != i]


def test_scatter_4_1_every_node_knows_every_load_after_n_minus_1_periods():
    """Length one and Algorithm 4.1 (Corollary 4.2's case): after N − 1 periods node b knows a's load of
    the period in which a told it, and a told b exactly once."""
    P = 5
    m = started("scatter-4.1", P, seed=3)
    loads = [[10 * k + j for j in range(P)] for k in range(1, P)]
    sent = rounds(m, loads)
    for b in range(P):
        for a in range(P):
            if a != b:
                (k,) = [k for k, r in enumerate(sent) if (a, b) in r]
                assert m.values_[b, a] == loads[k][a] and m.stamps_[b, a] == k + 1


def test_the_old_algorithm_draws_its_peers_uniformly_with_the_shared_draw():
    P = 7
    m = started("scatter-old", P, seed=11)
    sent = rounds(m, [[0] * P] * 3)
    rng = np.random.default_rng(11)
    for r in sent:
        assert [d for _, d in r] == uniform_peers(rng, P).tolist()


def test_epochs_skip_peers_not_allowed():
    e = Epochs(5, np.random.default_rng(0))
    allowed = np.array([True, True, False, True, False])
    assert {e.next(0, allowed) for _ in range(10)} == {1, 3}
    assert e.next(0, np.array([True, False, False, False, False])) is None


# --- Algorithm 4.3 ------------------------------------------------------------------------------------------------

def test_scatter_4_3_stops_sending_to_a_silent_node_after_the_timeout():
    """Node 3 is down: nothing is heard from it after the start (t = 0); with a timeout of 3 periods
    the others still may send to it at t = 1, 2, 3 and never from t = 4 on; N̂ slides to 3."""
    P = 4
    m = started({"model": "scatter-4.3", "inactive": [3], "timeout": 3, "period": 1.0}, P, seed=2)
    sent = rounds(m, [[1, 2, 3, 4]] * 12)
    assert all(s != 3 for r in sent for s, _ in r)  # an inactive node sends nothing
    assert all(d != 3 for r in sent[3:] for _, d in r)
    assert any(d == 3 for r in sent[:3] for _, d in r)  # (with this seed; the draws are fixed)
    assert m.active_counts[:3].tolist() == [3, 3, 3]
    assert m.values_[0, 3] == 0  # what node 0 knows of node 3 is the start


def test_scatter_4_3_ages_a_late_nodes_silence_from_when_it_began_listening():
    """Node 0 began listening at t = 100 (a real node started late); with a timeout of 3 periods it
    keeps every peer until 103 although it hears from node 1 alone (at 101), then narrows to node 1.
    Aged from the run's time 0 instead, it dropped every peer at its first round and narrowed to node
    1 as soon as it heard from it: 2 active, not 4."""
    P = 4
    m = started({"model": "scatter-4.3", "timeout": 3, "period": 1.0}, P, seed=2)
    m.began_listening(0, 100.0)
    assert m.heard_[0].tolist() == [100.0] * P and m.heard_any_[0] == 100.0
    assert m.heard_[1].tolist() == [0.0] * P  # the other nodes' copies are untouched
    m.round(101.0, [1, 2, 3, 4])  # (its messages are not delivered: node 0 hears only what follows)
    m.deliver(m._message(1, 0, 101.0))
    assert m.active_counts[0] == P
    m.round(103.0, [1, 2, 3, 4])
    assert m.active_counts[0] == P  # 3 periods since it began: still within the timeout
    m.round(104.0, [1, 2, 3, 4])
    assert m.active_counts[0] == 2  # nodes 2 and 3 silent 4 periods since it began; node 1 heard at 101


def test_began_listening_leaves_the_stamps_of_a_stamped_model_as_they_are():
    m = started({"model": "gossip", "period": 1.0}, 3, loads=[5, 6, 7])
    m.began_listening(0, 100.0)
    assert m.stamps_.tolist() == [[0.0] * 3] * 3 and m.values_[0].tolist() == [5, 6, 7]


def test_scatter_4_3_equals_4_2_when_everyone_is_active():
    a, b = started("scatter-4.2", 6, seed=5), started("scatter-4.3", 6, seed=5)
    loads = [[(k * 7 + j * 3) % 10 for j in range(6)] for k in range(40)]
    assert rounds(a, loads) == rounds(b, loads)
    assert np.array_equal(a.values_, b.values_) and a.freshness_mean == b.freshness_mean


def test_default_timeout_is_twice_a_complete_cycle():
    assert default_timeout(8) == 2 * cycle_steps(8, 8) == 32
    assert default_timeout(16) == 38


# --- gossip: Algorithm 4.1's peers and push-pull ------------------------------------------------------------------

def test_push_pull_answers_each_push_with_the_peers_table_of_the_round_start():
    P = 4
    m = started({"model": "gossip", "pull": True, "period": 1.0}, P, seed=4)
    m.values_[2, 0] = 7.0  # something only node 2 knows
    m.stamps_[2, 0] = 0.5
    msgs = m.round(1.0, [1, 2, 3, 4])
    assert len(msgs) == 2 * P and m.messages_ == 2 * P
    pushes, pulls = msgs[0::2], msgs[1::2]
    for p, q in zip(pushes, pulls):
        assert (q.src, q.dst) == (p.dst, p.src)
        assert q.values[q.src] == [1, 2, 3, 4][q.src]  # the answer carries the peer's own load now
    to2 = [p for p in pushes if p.dst == 2]
    for p in to2:
        assert dict(zip(*[x.tolist() for x in (pulls[pushes.index(p)].nodes, pulls[pushes.index(p)].values)]))[0] == 7


def test_gossip_constrained_selection_is_a_permutation_per_epoch():
    P = 5
    m = started({"model": "gossip", "selection": "constrained"}, P, seed=9)
    sent = rounds(m, [[0] * P] * (P - 1))
    for i in range(P):
        assert sorted(d for r in sent for s, d in r if s == i) == [j for j in range(P) if j != i]


# --- the monitored copy -------------------------------------------------------------------------------------------

def test_monitored_shows_the_copy_taken_lag_seconds_ago():
    m = info.resolve({"model": "monitored", "lag": 0.25, "period": 0.1})
    m.start(3, [[]] * 3, [0, 0, 0], None)
    for k, loads in enumerate(([1, 2, 3], [4, 5, 6], [7, 8, 9]), 1):
        assert m.round(0.1 * k, loads) == []
    v, s = [0] * 3, [0.0] * 3
    m.fill(0, 0.34, 99, v, s, integer=True)
    assert v == [99, 0, 0] and s == [0.34, 0, 0]  # nothing copied 0.25 s ago yet
    m.fill(0, 0.35, 99, v, s, integer=True)
    assert v == [99, 2, 3] and s[1:] == [0.1, 0.1]
    m.fill(2, 0.56, 5, v, s, integer=True)
    assert v == [7, 8, 5] and s[:2] == pytest.approx([0.3, 0.3], abs=1e-12)
    assert m.messages_ == 0


def test_monitored_with_no_lag_is_the_loads_of_the_last_copy():
    m = info.resolve({"model": "monitored", "lag": 0.0, "period": 1.0})
    m.start(2, [[]] * 2, [0, 0], None)
    m.round(1.0, [3, 4])
    v, s = [0] * 2, [0.0] * 2
    m.fill(0, 1.0, 3, v, s)
    assert v == [3, 4]


# --- freshness ε and η --------------------------------------------------------------------------------------------

def test_freshness_by_hand():
    """Tables all 0, truth (3, 0, 0): pairs (0→1) and (0→2) err by 3; ε = (9 + 9)/6 = 3."""
    m = started("scatter-old", 3)
    assert m.freshness([3, 0, 0]) == 3.0
    m.round(1.0, [3, 0, 0])
    assert m.freshness_mean == 3.0 and m.eps_count_ == 1
    m2 = started({"model": "scatter-old", "inactive": [0]}, 3)
    assert m2.freshness([3, 0, 0]) == 0.0 and m2.freshness([0, 1, 0]) == 0.5  # over (1, 2) only: (1 + 0)/2


def test_improvement():
    assert improvement(1.5, 2.0) == 0.25


def test_exact_information_has_zero_freshness_error_in_the_engine():
    r = dlbkit.simulate(P4, Stream(rates=0.5, jobs=300), "nezha", seed=1)
    assert r.metrics["info_freshness"] == 0.0


# --- invariants (hypothesis) --------------------------------------------------------------------------------------

def _run_with_history(spec, P, seed, changes):
    m = started(spec, P, loads=[0] * P, seed=seed)
    hist = {0.0: [0] * P}
    loads = [0] * P
    rng = np.random.default_rng(seed + 1)
    trace = []
    for k in range(1, changes + 1):
        loads = [int(x) if rng.random() < 0.4 else loads[j] for j, x in enumerate(rng.integers(10, size=P))]
        t = float(k) * m.period
        hist[round(t, 9)] = list(loads)
        msgs = m.round(t, loads)
        trace.append([(x.src, x.dst, x.nodes.tolist(), x.values.tolist()) for x in msgs])
        for x in msgs:
            m.deliver(x)
    return m, hist, trace, t


@settings(max_examples=examples(40), deadline=None)
@given(name=st.sampled_from(MODELS), P=st.integers(2, 7), seed=st.integers(0, 10_000), n=st.integers(1, 30))
def test_views_are_never_newer_than_the_truth_and_hold_a_true_past_value(name, P, seed, n):
    spec = {"model": name, "period": 0.5} if name != "monitored" else {"model": name, "period": 0.5, "lag": 1.0}
    m, hist, _, t = _run_with_history(spec, P, seed, n)
    for b in range(P):
        for a in range(P):
            if a != b:
                s = float(m.stamps_[b, a])
                assert s <= t + 1e-12
                assert m.values_[b, a] == hist[round(s, 9)][a]  # the value a really had at its stamp


@settings(max_examples=examples(30), deadline=None)
@given(name=st.sampled_from(MODELS), P=st.integers(2, 6), seed=st.integers(0, 10_000), own=st.integers(0, 50))
def test_a_nodes_own_load_is_always_exact(name, P, seed, own):
    m, _, _, t = _run_with_history({"model": name}, P, seed, 5)
    for node in range(P):
        v, s = [0] * P, [0.0] * P
        m.fill(node, t + 0.001, own, v, s, integer=True)
        assert v[node] == own and s[node] == t + 0.001 and max(s) <= t + 0.001


@settings(max_examples=examples(15), deadline=None)
@given(name=st.sampled_from(MODELS), P=st.integers(2, 6), seed=st.integers(0, 10_000))
def test_same_seed_same_trace(name, P, seed):
    a, _, ta, _ = _run_with_history({"model": name}, P, seed, 12)
    b, _, tb, _ = _run_with_history({"model": name}, P, seed, 12)
    assert ta == tb and np.array_equal(a.values_, b.values_) and a.freshness_mean == b.freshness_mean


# --- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, field", [
    ({"model": "scatter-4.5"}, "info.model"),
    ({"model": "scatter-old", "l": 1}, "info (parameter 'l' of scatter-old)"),
    ({"model": "scatter-4.2", "l": 0}, "info (parameter 'l' of scatter-4.2)"),
    ({"model": "scatter-4.2", "l": 2.5}, "info (parameter 'l' of scatter-4.2)"),
    ({"model": "scatter-4.3", "timeout": 0}, "info (parameter 'timeout' of scatter-4.3)"),
    ({"model": "scatter-4.1", "period": -1}, "info (parameter 'period' of scatter-4.1)"),
    ({"model": "scatter-old", "inactive": "x"}, "info (parameter 'inactive' of scatter-old)"),
    ({"model": "monitored", "lag": -0.1}, "info (parameter 'lag' of monitored)"),
    ({"model": "gossip", "selection": "round-robin"}, "info (parameter 'selection' of gossip)"),
    ({"model": "gossip", "pull": 1}, "info (parameter 'pull' of gossip)"),
    ({"model": "monitored", "delay": 1}, "info.delay"),
])
def test_bad_input_names_the_field(spec, field):
    with pytest.raises(ConfigError) as e:
        dlbkit.simulate(P4, Stream(rates=0.5, jobs=10), "nezha", info=spec)
    assert e.value.field == field


def test_an_inactive_node_outside_the_platform_is_named():
    with pytest.raises(ConfigError, match=r"parameter 'inactive'\[1\] of scatter-4.3 must be a node index below 4"):
        dlbkit.simulate(P4, Stream(rates=0.5, jobs=10), "nezha", info={"model": "scatter-4.3", "inactive": [0, 4]})


# --- every model in the stream engine -----------------------------------------------------------------------------

PLATFORM = Platform([Node(f"n{i}", speed=1 + i % 2, cores=1) for i in range(6)])


@pytest.mark.parametrize("name", MODELS)
def test_the_engine_runs_each_model(name):
    w = Stream(rates=0.4, jobs=400)
    r = dlbkit.simulate(PLATFORM, w, "nezha", seed=3, info={"model": name, "period": 0.5})
    t_last = float(r.trace.series["job_time"][-1])
    rounds_ = int(np.floor(t_last / 0.5 + 1e-9))
    assert r.trace.meta["info"] == name
    assert len(r.trace.series["job_done"]) == 400 and np.isfinite(r.trace.series["job_done"]).all()
    assert r.metrics["info_freshness"] > 0 and r.metrics["info_age_mean"] > 0
    expected = {"monitored": 0, "gossip": rounds_ * 6}.get(name, rounds_ * 6)
    assert r.metrics["info_messages"] == expected
    again = dlbkit.simulate(PLATFORM, w, "nezha", seed=3, info={"model": name, "period": 0.5})
    assert r.metrics == again.metrics or all(
        (a == b) or (a != a and b != b) for a, b in zip(r.metrics.values(), again.metrics.values()))


# --- the vectorised gossip of the benchmark is the information model's gossip -------------------------------------

@pytest.mark.parametrize("selection", ["uniform", "constrained"])
@pytest.mark.parametrize("pull", [False, True])
def test_vectorised_gossip_stamps_equal_the_models(selection, pull):
    """gossip_stamps (benchmarks/bench_gossip.py) draws the peers as the model does (fanout 1) and merges
    the tables of the period's start, freshest wins: the same stamps after every period."""
    from dlbkit.info.gossip_mc import gossip_stamps
    P, K = 9, 25
    m = started({"model": "gossip", "selection": selection, "pull": pull, "period": 1.0}, P, seed=5)
    ages = []
    for t in range(1, K + 1):
        for x in m.round(float(t), [0] * P):
            m.deliver(x)
        ages.append(t - (m.stamps_.sum() - np.trace(m.stamps_)) / (P * (P - 1)))
    S, a = gossip_stamps(P, K, np.random.default_rng(5), selection, pull)
    assert np.array_equal(S, m.stamps_.astype(int)) and np.allclose(a, ages)


@pytest.mark.parametrize("selection, pull, window", [("uniform", False, 4), ("constrained", True, 4),
                                                     ("uniform", False, 1), ("uniform", True, 255)])
def test_vectorised_gossip_stamps_equal_the_model_after_every_period_through_rebases(selection, pull, window):
    """The uint8 stamps slide their base when a new stamp would pass *window*; with window 4 at P = 9 the
    base moves many times in 40 periods, with window 1 the matrix must widen to int32 at period 2 (an
    entry still 0): the stamps equal the model's after every period (a run of t periods each), and the
    mean ages too."""
    from dlbkit.info.gossip_mc import gossip_stamps
    P, K = 9, 40
    m = started({"model": "gossip", "selection": selection, "pull": pull, "period": 1.0}, P, seed=7)
    ages = []
    for t in range(1, K + 1):
        for x in m.round(float(t), [0] * P):
            m.deliver(x)
        ages.append(t - (m.stamps_.sum() - np.trace(m.stamps_)) / (P * (P - 1)))
        S, a = gossip_stamps(P, t, np.random.default_rng(7), selection, pull, window=window)
        assert S.dtype == np.int16 and np.array_equal(S, m.stamps_.astype(int)), t
        assert np.allclose(a, ages), t


def test_vectorised_gossip_at_256_nodes_equals_the_model():
    """At n = 256 the mean age sums the matrix in one call over 256-row blocks (the benchmark's path at
    1024): stamps and ages equal the model's after 8 periods; and the sum is exact at other sizes."""
    from dlbkit.info.gossip_mc import _total, gossip_stamps
    P, K = 256, 8
    m = started({"model": "gossip", "period": 1.0}, P, seed=3)
    ages = []
    for t in range(1, K + 1):
        for x in m.round(float(t), [0] * P):
            m.deliver(x)
        ages.append(t - (m.stamps_.sum() - np.trace(m.stamps_)) / (P * (P - 1)))
    S, a = gossip_stamps(P, K, np.random.default_rng(3))
    assert np.array_equal(S, m.stamps_.astype(int)) and np.allclose(a, ages)
    for n in (9, 300, 512):
        R = np.random.default_rng(n).integers(0, 256, size=(n, n)).astype(np.uint8)
        assert _total(R) == int(R.sum(dtype=np.int64))


def test_vectorised_gossip_refuses_a_window_a_byte_cannot_hold():
    from dlbkit.info.gossip_mc import gossip_stamps
    for w in (0, 256):
        with pytest.raises(ValueError, match="window"):
            gossip_stamps(4, 3, np.random.default_rng(0), window=w)


# --- the Chapter 4 reproduction's harness -------------------------------------------------------------------------

def test_freshness_harness_orders_the_models_as_the_reproduction_claims():
    """N = 4, R = 10 (Table 4's first column) on the reproduction's harness: Algorithm 4.2 fresher than the
    old algorithm, the timestamped merge fresher still; the same seed gives the same ε."""
    from dlbkit.face.reproduce import nezha_scatter as z
    old, new, ts = (z.freshness(m, 4, 10, periods=3000) for m in ("scatter-old", "scatter-4.2", z.GOSSIP))
    assert ts < new < old
    assert z.freshness("scatter-old", 4, 10, periods=3000) == old


@pytest.mark.full
def test_chapter4_rows_hold_where_they_held_when_written():
    """The rows that passed when the reproduction was written (η > 0, timestamped fresher, Table 9's shape)
    still pass; the bands around the printed η (which missed) are not required here."""
    from dlbkit.face.reproduce import nezha_scatter as z
    rows = z.claims()
    keys = ("> 0", "timestamped merge", "shape")
    must = [r for r in rows if r.asserted and any(k in r.claim for k in keys)]
    assert len(must) == 12 and all(r.ok for r in must)


@pytest.mark.parametrize("info_line, field", [
    ('model = "scatter-4.2"\nl = 1', "info (parameter 'l' of scatter-4.2)"),
    ('model = "scater-old"', "info.model"),
])
def test_bad_scattering_input_in_an_experiment_is_one_line_and_exit_2(tmp_path, capsys, info_line, field):
    from dlbkit.face.cli import main
    p = tmp_path / "s.toml"
    p.write_text('[platform]\nnodes = [{name = "n", count = 4, speed = 1.0}]\n'
                 '[workload]\nkind = "stream"\nrates = 0.5\n'
                 f'jobs = 50\n[info]\n{info_line}\n[[balancers]]\nname = "nezha"\n')
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err and "Traceback" not in err
