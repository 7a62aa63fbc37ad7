"""Availability: exact integration over pieces against closed forms."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, Constant, Markov, Pulse, Recorded, Step
from dlbkit.model.availability import availability_from_dict

from support.profiles import examples


def test_constant_finish_is_work_over_level():
    a = Constant(0.5).realise()
    assert a.finish(2.0, 3.0) == pytest.approx(8.0, rel=1e-15)
    assert a.capacity(10.0) == pytest.approx(5.0, rel=1e-15)


def test_step_work_crossing_the_step():
    """Full speed until t=10, then a quarter: 12 units from t=4 -> 6 by t=10, 6 more need 24 s."""
    a = Step(at=10.0, level=0.25).realise()
    assert a.finish(4.0, 12.0) == pytest.approx(34.0, rel=1e-15)
    assert a.capacity(34.0) - a.capacity(4.0) == pytest.approx(12.0, rel=1e-15)


def test_pulse_once_and_periodic():
    """Pulse at level 0.5 during [5, 15): 10 units from t=0 -> 5 by t=5, then 5 more need 10 s."""
    once = Pulse(start=5.0, duration=10.0, level=0.5).realise()
    assert once.finish(0.0, 10.0) == pytest.approx(15.0, rel=1e-15)
    assert once.finish(0.0, 20.0) == pytest.approx(25.0, rel=1e-15)
    periodic = Pulse(start=0.0, duration=1.0, level=0.5, period=2.0).realise()
    # each 2 s period gives 0.5 + 1 = 1.5 units; 15 units take 10 periods = 20 s, ending at full level
    assert periodic.finish(0.0, 15.0) == pytest.approx(20.0, rel=1e-12)
    assert periodic.level(100.5) == 0.5 and periodic.level(101.5) == 1.0


def test_markov_is_seeded_and_integrates_its_own_segments():
    spec = Markov(mean_free=3.0, mean_busy=2.0, low=0.2)
    a1 = spec.realise(np.random.default_rng(7))
    a2 = spec.realise(np.random.default_rng(7))
    t1 = a1.finish(0.0, 50.0)
    assert t1 == a2.finish(0.0, 50.0)
    times, levels = a1.segments_until(t1)
    edges = np.append(times, t1)
    assert float(np.sum(levels * np.diff(edges))) == pytest.approx(50.0, rel=1e-12)
    assert set(levels.tolist()) == {1.0, 0.2}


def test_recorded_trace():
    a = Recorded((0.0, 1.0, 3.0), (1.0, 0.5, 0.25)).realise()
    # 1 unit by t=1, 1 unit more by t=3, then 0.25/s: 3 units total at t=7
    assert a.finish(0.0, 3.0) == pytest.approx(7.0, rel=1e-15)


@settings(max_examples=examples(200), deadline=None)
@given(t0=st.floats(0, 100), work=st.floats(1e-6, 1e3), seed=st.integers(0, 2**32 - 1))
def test_finish_inverts_capacity(t0, work, seed):
    """For any availability, the capacity between t0 and finish(t0, w) is w."""
    for spec in (Step(at=7.0, level=0.3), Pulse(start=1.0, duration=2.5, level=0.1, period=4.0),
                 Markov(mean_free=5.0, mean_busy=1.0, low=0.25)):
        a = spec.realise(np.random.default_rng(seed))
        t1 = a.finish(t0, work)
        assert t1 >= t0
        assert a.capacity(t1) - a.capacity(t0) == pytest.approx(work, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("spec, field", [
    (0.0, "x"), (1.5, "x"), ({"kind": "pulse", "start": 1, "duration": 1, "level": 0}, "x.level"),
    ({"kind": "nope"}, "x.kind"), ({"kind": "step", "level": 0.5}, "x.at"),
    ({"kind": "trace", "times": [1.0], "levels": [0.5]}, "x.times[0]"),
    ({"kind": "trace", "times": [0.0, 2.0], "levels": [0.5, 1.2]}, "x.levels[1]"),
])
def test_bad_availability_names_the_field(spec, field):
    with pytest.raises(ConfigError) as e:
        availability_from_dict(spec, "x")
    assert e.value.field == field


def test_trace_file(tmp_path):
    f = tmp_path / "load.csv"
    f.write_text("time,level\n0,1.0\n10,0.5\n")
    spec = availability_from_dict({"kind": "trace", "file": "load.csv"}, "x", base_dir=tmp_path)
    assert spec.realise().finish(0.0, 15.0) == pytest.approx(20.0)
    with pytest.raises(ConfigError, match="x.file"):
        availability_from_dict({"kind": "trace", "file": "missing.csv"}, "x", base_dir=tmp_path)


def test_pickle_keeps_the_realised_part():
    """A lazily extended availability pickles as what has been realised; it integrates the same."""
    import pickle
    a = Markov(mean_free=2.0, mean_busy=1.0, low=0.5).realise(np.random.default_rng(3))
    t = a.finish(0.0, 40.0)
    b = pickle.loads(pickle.dumps(a))
    assert b.finish(0.0, 40.0) == t
    assert b.capacity(t / 2) == a.capacity(t / 2)


def test_pickling_twice_keeps_every_segment():
    """A recorded or once-pickled availability is finite: nothing is lost by pickling it again."""
    import pickle
    a = Pulse(start=20.0, duration=30.0, level=0.5, period=80.0).realise()
    a.finish(0.0, 300.0)
    b = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(a))))
    assert b.times == a.times and b.levels == a.levels
    r = Recorded((0.0, 1.0, 2.0, 3.0), (1.0, 0.5, 1.0, 0.5)).realise()
    assert list(pickle.loads(pickle.dumps(r)).times) == [0.0, 1.0, 2.0, 3.0]


def test_a_realised_availability_gives_its_segments_as_plain_lists():
    """``times``/``levels``/``cum`` are array('d') columns (a quarter of the memory of float lists):
    an array never equals a list and json refuses one, so ``to_dict`` gives lists, JSON as they are,
    from which the same function is built again."""
    import json
    from array import array

    from dlbkit.model.availability import Piecewise

    r = Recorded((0.0, 1.0, 2.5), (1.0, 0.25, 0.5)).realise()
    assert r.to_dict() == {"times": [0.0, 1.0, 2.5], "levels": [1.0, 0.25, 0.5]}
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()
    assert r.to_dict(1.0) == {"times": [0.0, 1.0], "levels": [1.0, 0.25]}  # the segments covering [0, 1]
    assert all(type(c) is array and c.typecode == "d" for c in (r.times, r.levels, r.cum))  # the memory contract
    assert list(r.cum) == [0.0, 1.0, 1.375] and r.times.tolist() == [0.0, 1.0, 2.5]
    # a lazy one: what is realised so far, or as far as asked (extending it)
    a = Markov(mean_free=2.0, mean_busy=1.0, low=0.5).realise(np.random.default_rng(3))
    known = len(a.times)
    assert a.to_dict() == {"times": list(a.times), "levels": list(a.levels)} and len(a.to_dict()["times"]) == known
    d = a.to_dict(60.0)
    assert d["times"][-1] <= 60.0 < a.times[len(d["times"])] and len(d["times"]) > known
    b = Piecewise(list(zip(d["times"], d["levels"])))
    assert list(b.cum) == list(a.cum[:len(d["times"])])  # the same floats
    assert [b.capacity(t) for t in (0.5, 13.0, 59.0)] == [a.capacity(t) for t in (0.5, 13.0, 59.0)]
