"""Parameter constraints and the get/set/clone protocol."""

import math
from numbers import Integral, Real

import numpy as np
import pytest

from dlbkit import ConfigError, LoopView, TreeView, make
from dlbkit.families.divisible.balancers import SelfScheduling, Static
from dlbkit.params import Interval, Options


def test_interval_text_and_bounds():
    iv = Interval(Real, 0, 1, closed="right")
    assert str(iv) == "a number in the range (0, 1] (at least 1e-30)"
    assert iv.accepts(1.0) and not iv.accepts(0.0) and not iv.accepts(True) and not iv.accepts(float("nan"))
    # "> 0" is at least 1e-30, as every other positive number of a configuration (docs/experiments.md,
    # Limits): 1e-300 was accepted, and a gossip period of 1e-300 never ended
    assert iv.accepts(1e-30) and not iv.accepts(1e-31) and not iv.accepts(1e-300)
    assert Interval(Real, 0, 1, closed="both").accepts(0.0) and str(Interval(Real, 0, 1)) == "a number in the range [0, 1]"
    assert Interval(Integral, 0, None, closed="neither").accepts(1)
    assert str(Interval(Integral, 1, None)) == "an int in the range [1, inf)"
    assert Options("a", "b").accepts("a") and not Options("a").accepts("c")


def test_validation_message_names_parameter_balancer_and_value():
    with pytest.raises(ConfigError) as e:
        SelfScheduling(size=0).validate()
    assert str(e.value) == "parameter 'size' of ss must be an int in the range [1, inf); got 0"


@pytest.mark.parametrize("name, params, text", [
    ("tss", {"first": 1, "last": 3}, "parameter 'first' of tss must be an int >= last (3); got 1"),
    ("auto", {"candidates": ["gss", "gss"]}, "parameter 'candidates' of auto must be distinct names"),
    ("auto", {"candidates": ["gss", "nosuch"]}, "parameter 'candidates'[1] of auto"),
    ("phase-adaptive", {"intervals": [1, math.inf, math.inf], "detector": "work"},
     "parameter 'intervals'[1] of phase-adaptive must be finite"),
])
def test_checks_written_in_a_balancer_name_the_parameter_as_validate_does(name, params, text):
    """``param_field`` words a balancer's own checks as ``validate`` words the declared ones."""
    with pytest.raises(ConfigError) as e:
        b = make(name, params)
        b.start(LoopView(100, 4, [1.0] * 4) if name == "tss" else TreeView(4), np.random.default_rng(0))
    assert str(e.value).startswith(text)
    assert Static.param_field("size", 2) == "parameter 'size'[2] of static"


def test_make_rejects_unknown_names_and_parameters():
    with pytest.raises(ConfigError, match="registered balancer"):
        make("nonesuch")
    with pytest.raises(ConfigError) as e:
        make("ss", {"chunk": 3})
    # the same words as an experiment file's balancers[i].params.chunk (one message for one mistake)
    assert str(e.value) == "params.chunk must be a parameter of 'ss': size; got '<unknown parameter>'"


def test_clone_and_set_params():
    b = Static(size=4)
    c = b.clone()
    assert c is not b and c.get_params() == {"size": 4}
    assert c.set_params(size=7) is c and c.size == 7 and b.size == 4
    with pytest.raises(ConfigError):
        c.set_params(nonsense=1)


def test_a_typo_and_a_wrong_kind_get_one_message_listing_the_kind():
    """resolve(kind=...) answers a misspelt name as it answers a name of another kind: the names that fit,
    not every registered balancer (a chunking field once listed heft and nezha for a typo)."""
    from dlbkit.balancers.registry import names, resolve

    expected = ("balancer must be a chunking balancer (dlbkit balancers --kind chunking): "
                + ", ".join(names("chunking")) + "{}; got '{}'")
    # the closest name that fits for a typo; for a balancer of another kind, what it is and where it runs
    what = ("; 'heft' is a mapping balancer (dlbkit balancers --kind mapping): it plans before the run: "
            "dlbkit.graph, dlbkit schedule, a task graph's static engine")
    for bad, note, tail in (("gsss", "", " (did you mean 'gss'?)"), ("heft", what, "")):
        with pytest.raises(ConfigError) as e:
            resolve(bad, kind="chunking")
        assert str(e.value) == expected.format(note, bad) + tail
    with pytest.raises(ConfigError, match=r"repartition balancer .*: dlah, .*, none; got 'dlahh' \(did you mean 'dlah'\?\)$"):
        resolve("dlahh", kind="repartition", allow_none=True)


def test_set_params_names_an_unknown_parameter_as_make_does():
    with pytest.raises(ConfigError) as e:
        Static().set_params(nonsense=1)
    assert str(e.value) == "params.nonsense must be a parameter of 'static': size; got '<unknown parameter>'"


@pytest.mark.parametrize("model", ["gossip", "periodic"])
def test_an_information_period_below_the_smallest_number_is_refused(model):
    """A period of 1e-300 loaded, then ran 1e300 rounds (found by the search of
    tests/face/experiments/test_accepted_input_fuzz.py)."""
    from dlbkit import info

    with pytest.raises(ConfigError, match=r"'period' of .*at least 1e-30\); got 1e-300"):
        info.resolve({"model": model, "period": 1e-300}, "info")
    assert info.resolve({"model": model, "period": 1e-30}, "info").period == 1e-30
