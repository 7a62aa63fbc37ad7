"""Custom Cray T3D cost models in the superstep engine: :mod:`test_entry_points_fuzz`
fuzzes :func:`~dlbkit.families.tree.sim.superstep.simulate_superstep`'s arguments with the default cost model; here
the *cost* argument itself: a :class:`~dlbkit.families.tree.sim.t3d.T3D` with one to three of its constants set to
zero, a tiny or huge time, a negative, NaN or inf, a string, a list or an array (a wrong shape), and
``cost=`` things that are no cost model.

The rule: a constant T3D refuses is one ConfigError naming ``cost.<field>``; a cost model it accepts
runs every task once to a finite total >= 0 that is the run's compute + LB + idle + synch breakdown,
never a TypeError, a RuntimeWarning or a NaN. Derandomized; the default run takes seconds.
"""

import math
import warnings
from dataclasses import fields

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from dlbkit import FlatTasks, TaskTree
from dlbkit.errors import ConfigError
from dlbkit.model.check import HUGE
from dlbkit.families.tree.sim.superstep import simulate_superstep
from dlbkit.families.tree.sim.t3d import T3D

from support.fuzz import FUZZ, WEIRD, deadline
from support.fuzz_entries import MIGRATION
from support.profiles import examples

FIELDS = [f.name for f in fields(T3D)]
TIMES = ["t_fl", "t_c", "t_e", "t_eq", "t_dq", "t_sv"]
ODD = st.sampled_from([0, 0.0, 1e-300, 1e-9, 0.5, 3, 1e6, 1e12, HUGE, -1e-9, -7.4, np.float64(2.0), np.int64(5),
                       np.array([1.0, 2.0]), np.array(1.0), [1.0], (1.0,), "7.4", b"1", None, 10**400,
                       "optimistic", "howell"])


TIME = st.one_of(st.sampled_from([0, 0.0, 1e-300, 1e-9, 1e12, HUGE]), st.floats(0, 1e6))
VALID = {**{k: TIME for k in TIMES}, "small_cut": st.sampled_from([0, 1, 3, 32, 10**6, 10**18]),
         "speed": st.sampled_from([1e-30, 1e-9, 0.25, 2, 1e9, HUGE]),
         "contention": st.sampled_from(["optimistic", "pessimistic", "intermediate"]),
         "allreduce_model": st.sampled_from(["recalibrated", "howell"])}


@st.composite
def cost_kwargs(draw) -> dict:
    keys = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3, unique=True))
    # mostly a value of the right type (a time, tiny or huge, or a model's name): most cost models run
    return {k: draw(st.one_of(VALID.get(k, ODD), VALID.get(k, ODD), ODD, WEIRD)) for k in keys}


def _run(kwargs: dict, workload, balancer, p: int) -> str:
    try:
        cost = T3D(**kwargs)
    except ConfigError as e:
        assert "\n" not in str(e) and e.field in {f"cost.{k}" for k in kwargs}, (kwargs, str(e))
        event("refused")
        return "refused"
    for k in TIMES:  # accepted: a finite time >= 0 within dlbkit's magnitude limit, as a float
        v = getattr(cost, k)
        assert type(v) is float and 0 <= v <= HUGE, (k, v)
    assert type(cost.small_cut) is int and cost.small_cut >= 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (inf - inf) is a defect
        with deadline(20):
            r = simulate_superstep(workload, balancer, p=p, cost=cost)
    assert math.isfinite(r.total) and r.total >= 0, (kwargs, r.total)
    assert int(r.executed.sum()) == r.nodes and r.n_series[-1] == 0
    event("ran")
    return "ran"


CASES = st.tuples(st.sampled_from([FlatTasks([1.0, 5.0, 2.0, 0.0, 9.0]), TaskTree(kind="random", depth=4, fanout=3,
                                                                                   grain=3.0, seed=1)]),
                  st.sampled_from(MIGRATION + [None]), st.integers(2, 6))


@settings(FUZZ, max_examples=examples(1000))
@given(kwargs=cost_kwargs(), case=CASES)
def test_a_custom_cost_model_is_refused_by_field_or_runs_to_a_finite_total(kwargs, case):
    _run(kwargs, *case)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, "1", [1.0], np.array([1.0, 2.0]), None, 10**400],
                         ids=["nan", "inf", "negative", "str", "list", "array", "None", "10**400"])
def test_every_constant_refuses_a_value_that_is_not_a_time_by_name(field, value):
    """Before, only speed, contention and allreduce_model were checked: a NaN t_c gave a NaN total, an
    inf one a RuntimeWarning, a negative one a negative compute time, a string or array a TypeError or
    ValueError mid-run, and speed = 10**400 an OverflowError."""
    with pytest.raises(ConfigError) as e:
        T3D(**{field: value})
    assert e.value.field == f"cost.{field}" and "\n" not in str(e.value)


def test_the_refusals_say_what_is_allowed():
    with pytest.raises(ConfigError, match=r"^cost\.t_c must be a finite number >= 0; got nan$"):
        T3D(t_c=math.nan)
    with pytest.raises(ConfigError, match=r"^cost\.small_cut must be an integer in \[0, 1e\+18\]; "
                                          r"got 3\.5$"):
        T3D(small_cut=3.5)
    with pytest.raises(ConfigError, match=r"^cost\.speed must be a number > 0 \(network speed relative to the T3D\); "
                                          r"got 0$"):
        T3D(speed=0)


def test_numpy_constants_are_plain_numbers_and_cost_the_same():
    a, b = T3D(t_c=np.float64(7.433), small_cut=np.int64(32)), T3D()
    assert a == b and type(a.t_c) is float and type(a.small_cut) is int
    w = TaskTree(kind="random", depth=4, fanout=3, grain=3.0, seed=1)
    assert simulate_superstep(w, "gdem", p=4, cost=a).total == simulate_superstep(w, "gdem", p=4, cost=b).total


def test_zero_times_switch_their_terms_off():
    """All of T_c, T_fl and T_e zero: computing costs nothing, so the total is the LB and synch time."""
    r = simulate_superstep(TaskTree(kind="balanced", depth=3, fanout=2, grain=5.0), "gdem", p=4,
                           cost=T3D(t_c=0, t_fl=0, t_e=0))
    assert r.compute == 0 and r.total > 0


@pytest.mark.parametrize("cost", [{"t_c": 1.0}, 3, "T3D", T3D])
def test_a_cost_that_is_no_cost_model_is_refused_by_name(cost):
    with pytest.raises(ConfigError) as e:
        simulate_superstep(FlatTasks([1.0, 2.0]), "gdem", p=2, cost=cost)
    assert e.value.field == "cost" and "T3D" in e.value.allowed
