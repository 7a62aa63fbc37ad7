"""Timeline.earliest's gap shortcut gives, to the bit, what the interval-by-interval scan gave: on
random sequences of stretches and queries, and on whole HEFT, CPOP, replanning-HEFT and one-port
contention schedules timed with either."""

import math
from bisect import bisect_left, bisect_right

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import make, schedule
from dlbkit.families.graph.balancers import _common
from dlbkit.families.graph.model import evaluate as graph_eval
from dlbkit.model.availability import Step
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.evaluate import Timeline, evaluate
from dlbkit.families.graph.model.generate import fft, layered, topcuoglu10
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic

from support.profiles import examples


class ScanTimeline:
    """The implementation before the shortcut (dlbkit 5fa986e), kept verbatim as the reference."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts = []
        self.ends = []

    def earliest(self, ready, duration, insertion=True):
        ends = self.ends
        if not ends:
            return ready
        if not insertion:
            return max(ready, ends[-1])
        starts = self.starts
        k = bisect_right(ends, ready)
        t = ready
        for idx in range(k, len(starts)):
            if starts[idx] - t >= duration:
                return t
            if ends[idx] > t:
                t = ends[idx]
        return t

    def add(self, start, end):
        k = bisect_right(self.starts, start) if end > start else bisect_left(self.starts, start)
        self.starts.insert(k, start)
        self.ends.insert(k, end)


def _same(a, b):
    """Equal to the bit: the same type and value, the same sign of zero (NaN equals NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        return math.isnan(a) and math.isnan(b)
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


# a few round values make ties, zero-length stretches and exactly fitting gaps frequent
_time = st.one_of(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 0.1, 0.2, 0.30000000000000004, 7.25]),
                  st.floats(0, 200, allow_nan=False), st.integers(0, 50).map(float))
_length = st.one_of(st.sampled_from([0.0, 0.0, 0.1, 0.2, 1.0, 2.5]), st.floats(0, 30, allow_nan=False))


@st.composite
def _ops(draw):
    """(kind, a, b, insertion) steps: 'fit' places a stretch where earliest puts it (as the mappers
    and the contention ports do, so stretches never overlap), 'q' only asks."""
    return draw(st.lists(st.tuples(st.sampled_from(["fit", "fit", "q"]), _time, _length, st.booleans()),
                         max_size=120))


def _run(ops, cls):
    line, out = cls(), []
    for kind, ready, dur, insertion in ops:
        t = line.earliest(ready, dur, insertion)
        out.append(t)
        if kind == "fit":
            line.add(t, t + dur)
    return out, line.starts, line.ends


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_ops())
def test_earliest_answers_as_the_scan_did_on_placed_stretches(ops):
    got, want = _run(ops, Timeline), _run(ops, ScanTimeline)
    assert len(got[0]) == len(want[0]) and all(map(_same, got[0], want[0]))
    assert got[1:] == want[1:]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(_time, _length), max_size=60), st.lists(st.tuples(_time, _length), max_size=40))
def test_earliest_answers_as_the_scan_did_on_any_stretches(adds, queries):
    """Stretches added as given (overlapping ones too, as a replan's fixed tasks might be): the
    shortcut notices unsorted ends and scans, so the answers still agree."""
    a, b = Timeline(), ScanTimeline()
    for s, d in adds:
        a.add(s, s + d)
        b.add(s, s + d)
        for ready, dur in queries:
            assert _same(a.earliest(ready, dur), b.earliest(ready, dur))


def test_a_long_timeline_is_searched_past_the_python_scan():
    """400 stretches of 1 with gaps of 0.5, one gap of 3 after stretch 349: the numpy part finds it."""
    a, b = Timeline(), ScanTimeline()
    t = 0.0
    for i in range(400):
        for line in (a, b):
            line.add(t, t + 1.0)
        t += 1.0 + (3.0 if i == 349 else 0.5)
    assert a._fast
    for ready, dur in ((0.0, 0.5), (0.0, 0.6), (10.2, 2.0), (0.0, 3.0), (0.0, 3.5), (524.0, 3.0)):
        assert _same(a.earliest(ready, dur), b.earliest(ready, dur))
    assert a.earliest(0.0, 3.0) == 349 * 1.5 + 1.0 == 524.5  # the end of stretch 349
    assert a.earliest(0.0, 3.5) == b.ends[-1] == 399 * 1.5 + 2.5 + 1.0  # after the last (shifted by 2.5)


@pytest.mark.parametrize("case", [
    ("an overlap", [(0.0, 5.0), (4.0, 6.0), (1.0, 2.0)]),
    ("a NaN end", [(0.0, 1.0), (2.0, float("nan"))]),
    ("a −0.0 end", [(-0.0, -0.0), (0.0, 1.0)]),
    ("an int end", [(0, 5), (5.0, 7.0)]),
], ids=lambda c: c[0])
def test_a_timeline_the_shortcut_cannot_read_is_scanned(case):
    _, adds = case
    a, b = Timeline(), ScanTimeline()
    for s, e in adds:
        a.add(s, e)
        b.add(s, e)
    assert not a._fast
    for ready in (-1.0, -0.0, 0.0, 0.5, 1.0, 2.0, 4.5, 5.0, 9.0):
        for dur in (0.0, 0.5, 1.0, 3.0):
            assert _same(a.earliest(ready, dur), b.earliest(ready, dur))


def test_a_placed_zero_length_stretch_at_an_end_keeps_the_shortcut():
    a = Timeline()
    for s, e in ((0.0, 9.0), (9.0, 12.0), (12.0, 18.0), (12.0, 12.0), (18.0, 18.0)):
        a.add(s, e)
    assert a._fast and a.ends == [9.0, 12.0, 12.0, 18.0, 18.0]
    assert a.earliest(12.0, 5.0) == 18.0 and a.earliest(0.0, 0.0) == 0.0 and a.earliest(9.5, 0.0) == 12.0


# --- whole schedules: every mapper and the contention ports with the scan swapped back in -----------
@pytest.fixture
def scan_timeline(monkeypatch):
    def use():
        monkeypatch.setattr(_common, "Timeline", ScanTimeline)
        monkeypatch.setattr(graph_eval, "Timeline", ScanTimeline)
        monkeypatch.setattr(graph_eval, "Port", ScanTimeline)
    return use


_GRAPHS = [topcuoglu10(), fft(16), layered(400, width=8, seed=5, ccr=0.5, load=1.0),
           layered(300, width=20, density=0.2, seed=7, ccr=2.0, load=1.0)]


@pytest.mark.parametrize("mapper", ["heft", "cpop", "peft", "hlf"])
@pytest.mark.parametrize("g", _GRAPHS, ids=lambda g: g.name)
def test_list_schedulers_plan_as_with_the_scan(g, mapper, scan_timeline):
    nodes = 3 if g.costs is not None else Platform(
        [Node(f"n{i}", speed=s) for i, s in enumerate((1.0, 1.0, 2.0, 3.0))], network=Network(0.001, 10.0))
    new = schedule(g, nodes, mapper)
    scan_timeline()
    old = schedule(g, nodes, mapper)
    assert new.as_dict() == old.as_dict()  # makespan, and per task its node, start and finish


def test_replanning_heft_runs_as_with_the_scan(scan_timeline):
    g = layered(400, width=8, seed=11, ccr=0.5, load=1.0)
    nodes = Platform([Node("a", speed=1.0), Node("b", speed=2.0),
                      Node("c", speed=4.0, availability=Step(at=20.0, level=0.2))],
                     network=Network(0.001, 10.0))
    b = make("heft-replan")
    new = simulate_graph_dynamic(nodes, g, b, seed=1)
    assert len(b.replans_) >= 1  # the drop made it replan, so fixed tasks and release were exercised
    scan_timeline()
    old = simulate_graph_dynamic(nodes, g, make("heft-replan"), seed=1)
    assert new.makespan == old.makespan
    assert new.meta["assignment"] == old.meta["assignment"] and new.meta["start"] == old.meta["start"]


@pytest.mark.parametrize("g", _GRAPHS[1:], ids=lambda g: g.name)
def test_one_port_contention_times_as_with_the_scan(g, scan_timeline):
    c = costs_for(g, 4, contention=True)
    a = [i % 4 for i in range(g.n_tasks)]
    new = evaluate(c, a)
    scan_timeline()
    assert evaluate(c, a) == new
