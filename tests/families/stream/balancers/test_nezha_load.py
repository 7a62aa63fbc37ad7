"""Nezha's *load* option on hand-worked views: "queue" (the seed's per-slot load, the default) against
"wait" (the note's capacity-normalised load, 003 §5.2: L_j = (queue + 1)/(speed × slots)), in the
window, in the choice among the d, in quarantine and the idle test; the default unchanged; the fast
stream loop equal to the kernel path under "wait"."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, make
from dlbkit.families.stream.balancers.nezha import Nezha, loads, window
from dlbkit.model import Network, Node, Platform
from dlbkit.model.availability import Constant
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.stream.model.view import StreamView
from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.families.stream.sim.engine import simulate_stream

from support.profiles import examples


def decisions(view, n, seed=0, **params):
    b = make("nezha", params)
    b.start(view, np.random.default_rng(seed))
    return [b.place(view) for _ in range(n)]


def counts(view, n=2000, seed=0, **params):
    return Counter(decisions(view, n, seed, **params))


def test_the_default_is_the_seeds_per_slot_queue():
    assert make("nezha").load == "queue"
    v = StreamView(3, queue=[4, 1, 3], slots=[2, 1, 3], speeds=[0.5, 2.0, 1.0])
    assert loads(v) == [2.0, 1.0, 1.0]  # speeds play no part
    assert loads(v, "wait") == [5 / 1.0, 2 / 2.0, 4 / 3.0]  # (q + 1)/(speed × slots)


def test_queue_and_wait_choose_differently_among_the_d():
    """Two nodes, both sampled (d = 2 without replacement), one slot each; queues 2 0, speeds 1 0.25.
    "queue": L = 2 0, mean 1, std 1, l_max = 2: both active, node 1 (0 tasks) wins. "wait":
    L = 3/1 = 3 and 1/0.25 = 4, mean 3.5, std 0.5, l_max = 4: both active, node 0 wins (its task
    would finish after 3 task-times, the slow node's after 4)."""
    v = StreamView(2, queue=[2, 0], speeds=[1.0, 0.25], node=0)
    assert window(v, "adaptive", 1.0, 1.0, 4.0, 1.0, 1e6) == ([0, 1], [2.0, 0.0], 2.0)
    assert window(v, "adaptive", 1.0, 1.0, 4.0, 1.0, 1e6, "wait") == ([0, 1], [3.0, 4.0], 4.0)
    assert counts(v, 300, d=2, replace=False) == {1: 300}
    assert counts(v, 300, d=2, replace=False, load="wait") == {0: 300}
    # slots count under both: queues 2 1 on two slots and one: "queue" ties (1, 1), "wait" 3/2 < 2
    v2 = StreamView(2, queue=[2, 1], slots=[2, 1], node=1)
    assert set(counts(v2, 300, d=2, replace=False)) == {0, 1}
    assert counts(v2, 300, d=2, replace=False, load="wait") == {0: 300}


def test_the_window_under_wait_by_hand():
    """Queues 3 0 0 0, speeds 1 0.25 1 1 (one slot each). "wait": L = 4 4 1 1, mean 2.5, variance
    34/4 − 6.25 = 2.25, std 1.5. κ = 0.5: l_max = 3.25, so the loaded node 0 and the empty slow node
    1 are out. "queue" with κ = 0.5: L = 3 0 0 0, l_max = 0.75 + 0.5·√1.6875 = 1.3995: only node 0
    out, the slow node is in."""
    v = StreamView(4, queue=[3, 0, 0, 0], speeds=[1.0, 0.25, 1.0, 1.0], node=2)
    act, L, lmax = window(v, "adaptive", 0.5, 0, 0, 1.0, 1e6, "wait")
    assert (act, L, lmax) == ([2, 3], [4.0, 4.0, 1.0, 1.0], 3.25)
    act, _, lmax = window(v, "adaptive", 0.5, 0, 0, 1.0, 1e6)
    assert act == [1, 2, 3] and lmax == pytest.approx(0.75 + 0.5 * 1.6875 ** 0.5, abs=1e-12)
    assert window(v, "adaptive", 1.0, 0, 0, 1.0, 1e6, "wait")[0:3:2] == ([0, 1, 2, 3], 4.0)  # 2.5 + 1.5
    assert window(v, "level", 0, 1.0, 0, 1.0, 1e6, "wait")[0:3:2] == ([2, 3], 2.0)  # min 1 + delta 1
    assert window(v, "constant", 0, 0, 4.0, 1.0, 1e6, "wait")[0] == [0, 1, 2, 3]
    assert window(v, "constant", 0, 0, 3.5, 1.0, 1e6, "wait")[0] == [2, 3]
    c = counts(v, 3000, load="wait", kappa=0.5)
    assert set(c) == {2, 3} and abs(c[2] / 3000 - 0.5) < 0.04  # ties between 2 and 3 broken evenly
    assert set(counts(v, 3000, kappa=0.5)) == {1, 2, 3}


def test_floor_and_cap_are_in_the_units_of_the_expected_completion():
    """An idle cluster of speeds 1 1 0.5 0.25: "wait" L = 1 1 2 4, mean 2, std √1.5 = 1.2247,
    l_max = 3.2247: the idle slow node is out; the floor 1.0 protects only nodes of speed ≥ 1 (L = 1),
    a floor of 4 keeps it in; a cap of 1.5 leaves only the two speed-1 nodes."""
    v = StreamView(4, speeds=[1.0, 1.0, 0.5, 0.25])
    act, L, lmax = window(v, "adaptive", 1.0, 0, 0, 1.0, 1e6, "wait")
    assert act == [0, 1, 2] and L == [1.0, 1.0, 2.0, 4.0] and lmax == pytest.approx(2 + 1.5 ** 0.5, abs=1e-12)
    assert window(v, "adaptive", 1.0, 0, 0, 4.0, 1e6, "wait")[0] == [0, 1, 2, 3]
    assert window(v, "adaptive", 1.0, 0, 0, 1.0, 1.5, "wait")[0:3:2] == ([0, 1], 1.5)
    assert window(v, "adaptive", 1.0, 0, 0, 1.0, 1e6)[0:3:2] == ([0, 1, 2, 3], 1.0)  # "queue": all 0


def test_quarantine_under_wait_uses_the_expected_completion():
    """Idle queues, speeds 1 1 1 0.25, origin 3: "wait" L = 1 1 1 4, mean 1.75, std √1.6875 = 1.299,
    l_max = 3.049 < 4: the slow origin is over-loaded in its own view, so with quarantine its task
    stays; without, it goes to 0, 1 or 2. Under "queue" every node is at 0: nothing is quarantined."""
    v = StreamView(4, speeds=[1.0, 1.0, 1.0, 0.25], node=3)
    assert make("nezha", {"quarantine": True, "load": "wait"}).quarantined(v) is True
    assert make("nezha", {"quarantine": True}).quarantined(v) is False
    assert counts(v, 300, quarantine=True, load="wait") == {3: 300}
    assert set(counts(v, 3000, load="wait")) == {0, 1, 2}
    assert set(counts(v, 3000, quarantine=True)) == {0, 1, 2, 3}


def test_the_idle_test_reads_the_queue_under_both_loads():
    """With balance_when_idle false an idle cluster keeps the task local under "wait" too, although
    every L is 1 there (idle = 0 compares with queue/slots, not with the expected completion)."""
    v = StreamView(4, node=3)
    assert counts(v, 100, balance_when_idle=False, load="wait") == {3: 100}
    assert len(counts(v, 400, load="wait")) == 4
    busy = StreamView(4, queue=[0, 0, 1, 0], node=3)
    # one task on node 2: the cluster is not idle, the task is balanced (node 2, L = 2 > l_max = 1.68, is out)
    assert set(counts(busy, 400, balance_when_idle=False, load="wait")) == {0, 1, 3}


def test_a_bad_load_is_a_config_error_naming_load():
    with pytest.raises(ConfigError, match="load"):
        make("nezha", {"load": "time"})
    with pytest.raises(ConfigError, match="load"):
        Nezha(load="Wait").validate()


@settings(max_examples=examples(80), deadline=None)
@given(q=st.lists(st.integers(0, 12), min_size=1, max_size=9), level=st.integers(0, 12), seed=st.integers(0, 2**16),
       d=st.integers(1, 3))
def test_on_unit_speed_single_slot_nodes_wait_is_queue_shifted_by_one(q, level, seed, d):
    """There L_wait = queue + 1 exactly, so "wait" with a constant level ℓ + 1 (floor 0) decides as
    "queue" with level ℓ, draw for draw: the same window and the same order among the d."""
    v = StreamView(len(q), queue=list(q), node=0)
    a = decisions(v, 50, seed, d=d, threshold="constant", level=level + 1, floor=0.0, load="wait")
    b = decisions(v, 50, seed, d=d, threshold="constant", level=level or 1e-9, floor=0.0)  # level > 0; q ≤ 1e-9 iff q = 0
    assert a == b


def test_queue_decisions_ignore_speeds_and_equal_the_explicit_default():
    rng = np.random.default_rng(3)
    views = [StreamView(6, queue=[int(x) for x in rng.integers(0, 8, 6)], node=int(rng.integers(0, 6)))
             for _ in range(200)]
    fast = [StreamView(6, queue=list(v.queue), speeds=[1.0, 4.0, 0.5, 2.0, 1.0, 0.25], node=v.node) for v in views]
    out = []
    for params, vs in (({}, views), ({"load": "queue"}, views), ({}, fast)):
        b = make("nezha", params)
        b.start(vs[0], np.random.default_rng(9))
        out.append([b.place(v) for v in vs])
    assert out[0] == out[1] == out[2]


class Recorded(Nezha):
    name = "nezha"

    def start(self, view, rng=None):
        super().start(view, rng)
        self.answers = []

    def place(self, view):
        j = super().place(view)
        self.answers.append(j)
        return j


def test_the_fast_loop_runs_wait_exactly_as_the_kernel(monkeypatch):
    """The fast loop asks the balancer on the engine's live view: under "wait" (unit speeds, one slot:
    L = queue + 1) every placement and the trace are the kernel path's. Nominal speeds other than 1
    never reach the loop (so a speed-aware rule is always asked with the kernel's speeds)."""
    w = Stream(rates=0.8, jobs=3000)
    fb, kb = Recorded(load="wait", kappa=0.5), Recorded(load="wait", kappa=0.5)
    fast = simulate_stream(20, w, fb, seed=5, samples=0, record=False)
    monkeypatch.setattr(_stream_fast, "eligible", lambda *a, **k: "forced")
    kern = simulate_stream(20, w, kb, seed=5, samples=0, record=False)
    monkeypatch.undo()
    assert fast.meta["path"] == "fast" and kern.meta["path"] == "kernel (forced)"
    assert fb.answers == kb.answers and len(fb.answers) == 3000
    for k in kern.series:
        assert np.array_equal(np.asarray(fast.series[k]), np.asarray(kern.series[k]), equal_nan=True), k
    assert repr({k: v for k, v in fast.meta.items() if k != "path"}) == repr({k: v for k, v in kern.meta.items()
                                                                              if k != "path"})
    # nominal speeds 4 1 2 at availability 0.25 1 0.5: every rate is 1, but "wait" reads the speeds
    p = Platform([Node(f"n{i}", speed=s, availability=Constant(a)) for i, (s, a) in enumerate([(4.0, 0.25), (1.0, 1.0),
                                                                                               (2.0, 0.5)])],
                 Network(latency=0.0, bandwidth=1.0))
    het = simulate_stream(p, w, Recorded(load="wait"), seed=5, samples=0, record=False)
    assert het.meta["path"] == "kernel (a node whose nominal speed is not 1)"


def test_hybrid_batch_inherits_the_load():
    """hybrid-batch's window is nezha's: under "wait" (queues 3 0 0 0, speeds 1 0.25 1 1, κ = 0.5,
    l_max = 3.25, as above) a batch of 4 goes 2 per active node to nodes 2 and 3; under "queue" the
    window is 1 2 3 and 4 = 1·3 + 1 puts one on each and one more by Algorithm 3.1."""
    v = StreamView(4, queue=[3, 0, 0, 0], speeds=[1.0, 0.25, 1.0, 1.0], node=2)
    b = make("hybrid-batch", {"load": "wait", "kappa": 0.5})
    b.start(v, np.random.default_rng(0))
    assert b.active(v) == [2, 3]
    assert sorted(b.place_batch(StreamView(4, queue=[3, 0, 0, 0], speeds=v.speeds), 4)) == [2, 2, 3, 3]
    q = make("hybrid-batch", {"kappa": 0.5})
    q.start(v, np.random.default_rng(0))
    out = q.place_batch(StreamView(4, queue=[3, 0, 0, 0], speeds=v.speeds), 4)
    assert set(out) == {1, 2, 3} and len(out) == 4
