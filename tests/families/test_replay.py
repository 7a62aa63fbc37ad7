"""What every family's replay shares (:mod:`dlbkit.families.replay`): a replay simulated from 0 and shifted to
the recorded run's start meets the availability the recorded run met at the same instants."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

from dlbkit.families.replay import earlier, shift
from dlbkit.model.availability import Recorded
from dlbkit.model.trace import Trace


def test_earlier_by_hand():
    """Levels 1 from 0, 0.5 from 1 s, 0.25 from 3 s: seen from 2 s, 0.5 from 0 and 0.25 from 1 s; from 1 s
    (a change at that instant), 0.5 from 0 and 0.25 from 2 s; from 0.5 s, every change 0.5 s sooner."""
    a = Recorded((0.0, 1.0, 3.0), (1.0, 0.5, 0.25))
    assert earlier(a, 2.0) == Recorded((0.0, 1.0), (0.5, 0.25))
    assert earlier(a, 1.0) == Recorded((0.0, 2.0), (0.5, 0.25))
    assert earlier(a, 0.5) == Recorded((0.0, 0.5, 2.5), (1.0, 0.5, 0.25))
    assert earlier(a, 0.0) is a and earlier(a, 5.0) == Recorded((0.0,), (0.25,))


def _level(a: Recorded, t: float) -> float:
    return a.levels[max(i for i, x in enumerate(a.times) if x <= t)]


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 10), st.floats(0.05, 1)), min_size=0, max_size=6),
       st.floats(0, 20), st.lists(st.floats(0, 20), min_size=1, max_size=10))
def test_the_shifted_replay_meets_the_recorded_level_at_every_instant(steps, s, ts):
    """At every instant t of the replay's own clock, earlier(a, s) has the level a had at t + s."""
    times, levels, now = [0.0], [1.0], 0.0
    for gap, level in steps:
        now += gap
        times.append(now)
        levels.append(level)
    a = Recorded(tuple(times), tuple(levels))
    b = earlier(a, s)
    for t in ts:
        assert _level(b, t) == _level(a, t + s)


def test_shift_moves_every_time_and_the_makespan():
    t = Trace(1, [0], family="tree")
    t.add_interval(0, 0, 1, 0.5, 1.0, 2.0)
    t.end_time = 2.0
    t.meta["makespan"] = 2.0
    shift(t, 0.25)
    assert (list(t.t_ask), list(t.t_start), list(t.t_end)) == ([0.75], [1.25], [2.25])
    assert t.end_time == t.meta["makespan"] == pytest.approx(2.25)
