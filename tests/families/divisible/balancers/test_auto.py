"""balancer="auto": the engine predicts each candidate's next step by simulation, the balancer picks."""

import math

import numpy as np
import pytest

from dlbkit.families.divisible.balancers.auto import DEFAULT_CANDIDATES, ROBUST_DEFAULT, Auto
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.model.availability import Step
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.families.divisible.sim import engine as divisible_engine
from dlbkit.families.divisible.sim.auto import coarsen, measured_speeds, predict
from dlbkit.families.divisible.sim.engine import simulate_divisible

AWF_LIKE = {"awf", "awf-b", "awf-c", "awf-d", "awf-e", "af"}


def _platform(speeds, latency=1e-3):
    return Platform([Node("m", 1.0)] + [Node(f"w{i}", s) for i, s in enumerate(speeds)], Network(latency, 1e9))


def _auto_steps(tr):
    return [s["auto"] for s in tr.meta["time_steps"]]


def test_uniform_loop_on_equal_workers_picks_static():
    """Equal items on equal workers, a round trip of 10 (a fifth of a 50-item chunk): one chunk each
    (STATIC) pays the fewest round trips, and is exactly balanced."""
    tr = simulate_divisible(_platform([1, 1, 1, 1], latency=5.0), Divisible(2000), resolve("auto"), steps=3)
    a = _auto_steps(tr)
    assert a[0]["used"] == ROBUST_DEFAULT and a[0]["evaluated"] == "first step measured"
    assert a[0]["next"] == "static" and a[1]["used"] == "static"
    preds = dict(a[0]["predictions"])
    assert preds["static"] == pytest.approx(500.0 + 10.0, rel=1e-12)  # 2000/4 items, one round trip
    assert preds["static"] < 0.95 * preds[ROBUST_DEFAULT]  # beyond the margin


def test_skewed_loop_on_unequal_workers_picks_an_adaptive_weighted_rule():
    """Item costs rising along the loop, workers at 1, 1, 0.5, 0.25: equal chunks (STATIC, FAC2) leave
    the slow workers with too much; a rule that weights chunks by measured speed wins."""
    wl = Divisible(2000, cost=CostModel("linear", first=0.1, last=2.0))
    tr = simulate_divisible(_platform([1, 1, 0.5, 0.25]), wl, resolve("auto"), steps=3)
    a = _auto_steps(tr)
    chosen = a[0]["next"]
    assert chosen in AWF_LIKE
    preds = dict(a[0]["predictions"])
    assert preds[chosen] < 0.8 * preds["static"] and preds[chosen] < preds["fac2"]
    # the simulator is the model: the next step under the choice takes exactly the predicted time
    assert a[1]["used"] == chosen
    assert a[1]["measured"] == pytest.approx(a[1]["predicted"], rel=1e-9)


def test_predictions_are_ranked_and_the_choice_is_the_best():
    costs = np.random.default_rng(1).exponential(1.0, 500)
    preds, seeds = predict(costs, [1.0, 2.0, 0.5], [1.0, 1.0, 1.0], ["static", "gss", "awf-c", "awf"],
                           simulate=simulate_divisible)
    ms = [m for _, m in preds]
    assert ms == sorted(ms) and all(math.isfinite(m) for m in ms)
    assert set(seeds) == {"awf-c", "awf"}  # the rules that carry state
    b = resolve("auto", {"candidates": ["static", "gss", "awf-c", "awf"]})
    assert b.choose(preds) == preds[0][0]


def test_re_evaluates_every_k_steps_and_on_a_speed_shift():
    b = resolve("auto", {"every": 3, "shift": 0.25})
    state = b.observe({**b.first_state(), "evaluated_at": 1, "step": 2}, [1.0, 1.0])
    state = {**state, "reference_shares": state["smoothed_shares"]}  # as an evaluation books it
    assert b.due(b.observe(state, [1.0, 1.1])) is None
    assert b.due(b.observe(state, [0.5, 0.5])) is None  # everyone alike: no change of shares
    # one step at 1 : 0.6 moves worker 1's smoothed share (1/2 → 0.5·0.375 + 0.5·0.5 = 0.4375) by 12.5%
    once = b.observe(state, [1.0, 0.6])
    assert b.due(once) is None
    # then a step at 1 : 0.25 (share 0.2): 0.5·0.2 + 0.5·0.4375 = 0.31875, 36% below 1/2 → due
    assert "moved by" in b.due(b.observe(once, [1.0, 0.25]))
    assert b.due({**state, "step": 4}) == "3 steps since the last evaluation"


def test_coarsening_keeps_the_work_and_the_order():
    c = np.arange(10, dtype=float)
    block, g = coarsen(c, 4)
    assert g == 3 and block.tolist() == [3.0, 12.0, 21.0, 9.0]
    assert coarsen(c, 16)[1] == 1


def test_measured_speeds_of_a_step():
    tr = simulate_divisible(_platform([1, 0.5], latency=0.0), Divisible(40), resolve("gss"))
    assert measured_speeds(tr, np.ones(40)) == pytest.approx([1.0, 0.5])


@pytest.mark.parametrize("params, match", [
    ({"candidates": []}, "candidates"),
    ({"candidates": ["nosuch"]}, r"candidates'\]?\[0\]"),
    ({"candidates": ["gss", "auto"]}, "other than auto"),
    ({"candidates": ["heft"]}, "chunking balancer"),
    ({"candidates": ["gsss"]}, r"other than auto: af, awf, awf-b, awf-c, awf-d, awf-e, fac, fac2, fiss, fsc, gss,"),
    ({"default": "gsss"}, r"default' of auto must be the name of a chunking balancer other than auto: af, awf,"),
    ({"default": "nosuch"}, "default"),
    ({"every": 0}, "every"),
])
def test_bad_auto_parameters_are_config_errors(params, match):
    with pytest.raises(ConfigError, match=match):
        resolve("auto", params)


def test_default_candidates_all_exist():
    for name in DEFAULT_CANDIDATES:
        assert resolve(name).kind == "chunking"


def test_a_switch_must_beat_the_current_rule_by_the_margin():
    b = resolve("auto", {"margin": 0.05})
    preds = [("gss", 0.97), ("awf-c", 1.0)]
    assert b.choose(preds, "awf-c") == "awf-c"  # 3% better: not worth a switch
    assert b.choose([("gss", 0.9), ("awf-c", 1.0)], "awf-c") == "gss"
    assert resolve("auto", {"margin": 0.0}).choose(preds, "awf-c") == "gss"


def test_measurements_overrule_a_wrong_prediction():
    """Switched from awf-c (its last step 1.0 s) to gss on a prediction, gss measures 1.2 s: auto goes
    back to awf-c and no longer believes gss's predictions."""
    b = resolve("auto", {"margin": 0.05})
    state = {**b.first_state(), "chosen": "gss", "step": 3, "evaluated_at": 2,
             "measured": {"awf-c": 1.0}}
    state = b.observe(state, [1.0, 1.0], 1.2)
    assert "gss measured slower than awf-c" in b.due(state)
    after = b.evaluated(state, [1.0, 1.0], [("gss", 0.5), ("fac2", 0.9), ("awf-c", 1.0)], {})
    assert after["chosen"] == "awf-c" and after["distrusted"] == ["gss"]
    # later, gss's (still optimistic) prediction is ignored; fac2 beats awf-c by 10% > margin
    later = b.evaluated({**after, "step": 6}, [1.0, 1.0], [("gss", 0.5), ("fac2", 0.9), ("awf-c", 1.0)], {})
    assert later["chosen"] == "fac2"


class _Renamed(Auto):
    """AUTO under another name: the engine must follow the declared capability, not the name."""
    name = "auto-renamed"


class _Silent(Auto):
    """AUTO without the capability: no engine predicts for it (it runs its default throughout)."""
    predicts_between_steps = False


def test_the_engine_follows_the_declared_capability_not_the_name():
    plat, wl = _platform([1, 1, 0.5, 0.25]), Divisible(400, cost=CostModel("linear", first=0.1, last=2.0))
    named = simulate_divisible(plat, wl, resolve("auto"), steps=3)
    renamed = simulate_divisible(plat, wl, _Renamed(), steps=3)
    assert _auto_steps(renamed) == _auto_steps(named)  # the same predictions and choices
    assert renamed.t_end == named.t_end
    silent = simulate_divisible(plat, wl, _Silent(), steps=3)
    assert all("auto" not in s for s in silent.meta["time_steps"])
    assert {s["balancer"] for s in silent.meta["time_steps"]} == {"auto"}
    assert not hasattr(divisible_engine, "BETWEEN_STEPS")  # no table of balancer names in the engine


def test_the_engine_re_evaluates_every_k_steps_and_after_a_speed_change():
    """In the simulator: with *every* 2 and constant speeds, evaluations after steps 0, 2, 4 (none after
    the last step); with *every* 100 and worker 1 dropping to a quarter at t = 1000, the only evaluations
    after the first are for the shift of the measured speed shares, none before the drop."""
    wl = Divisible(1000, cost=CostModel("exponential", mean=1.0))
    tr = simulate_divisible(_platform([1, 1, 0.5, 0.25]), wl, resolve("auto", {"every": 2}), steps=6)
    reasons = [a["evaluated"] for a in _auto_steps(tr)]
    assert reasons == ["first step measured", None, "2 steps since the last evaluation", None,
                       "2 steps since the last evaluation", None]
    plat = Platform([Node("m", 1.0), Node("w0", 1.0), Node("w1", 1.0, availability=Step(at=1000.0, before=1.0,
                                                                                          level=0.25)),
                     Node("w2", 0.5), Node("w3", 0.25)], Network(1e-3, 1e9))
    tr = simulate_divisible(plat, wl, resolve("auto", {"every": 100}), steps=8)
    steps = tr.meta["time_steps"]
    later = [(k, s["auto"]["evaluated"]) for k, s in enumerate(steps) if k and s["auto"]["evaluated"]]
    assert later and all("moved by" in why for _, why in later)
    assert all(steps[k]["end"] > 1000.0 for k, _ in later)  # nothing re-evaluated before the drop
