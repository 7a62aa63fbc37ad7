"""Time steps: balancers carry what they learned (time-stepping AWF, AF, AWF-B..E), the divisible
simulator's ``steps``, and one trace over all steps that splits back into one-step traces."""

import dataclasses
import math

import numpy as np
import pytest

import dlbkit
from dlbkit.balancers.registry import resolve
from dlbkit.errors import ConfigError
from dlbkit.model.availability import Constant, Step
from dlbkit.model.metrics import compute
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.divisible.model.steps import n_steps, step_trace
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.families.divisible.sim.engine import simulate_divisible

from support.profiles import examples


def _two_workers(avail_b=Constant(1 / 3)):
    """A master and two workers of nominal speed 1; worker b gets a third of its CPU (so the view's
    nominal speeds are equal while b really runs at 1/3); no latency."""
    return Platform([Node("m", 1.0), Node("a", 1.0), Node("b", 1.0, availability=avail_b)], Network(0.0, 1e9))


def test_time_stepping_awf_two_steps_by_hand():
    """Step 1 is WF on equal nominal weights; the weights measured in it are used from step 2's start.

    By hand (N = 100 items of cost 1, P = 2, a at rate 1, b at rate 1/3): step 1, batch 1 gives
    ⌈100/4⌉ = 25 to each; a ends at 25, b at 75. a then takes every later batch alone
    (13, 13, 6, 6, 3, 3, 2, 2, 1, 1: 50 items, ending at 75). So a computed 75 items in 75 s and b
    25 items in 75 s: π_a = 1, π_b = 3 (step weight 1), and w = P·(1/π_i)/Σ(1/π_j) = 2·1/(4/3) =
    1.5 and 2·(1/3)/(4/3) = 0.5. Step 2 starts at 75 with both requests waiting; a is served first:
    round_half_up(1.5·⌈100/4⌉) = round_half_up(37.5) = 38; b: round_half_up(0.5·25) = 13, cut to
    what the batch of 50 still holds, 12.
    """
    tr = simulate_divisible(_two_workers(), Divisible(100), resolve("awf"), steps=2)
    s0, s1 = step_trace(tr, 0), step_trace(tr, 1)
    assert list(zip(s0.node, s0.count)) == [(0, 25), (1, 25), (0, 13), (0, 13), (0, 6), (0, 6), (0, 3), (0, 3),
                                            (0, 2), (0, 2), (0, 1), (0, 1)]
    first = tr.meta["carried"][0]
    assert first["steps"] == 1
    assert first["num"] == [75.0, 75.0] and first["den"] == [75.0, 25.0]
    assert first["weights"] == pytest.approx([1.5, 0.5], abs=1e-12)
    assert tr.meta["time_steps"][1]["start"] == pytest.approx(75.0, abs=1e-9)
    assert list(zip(s1.node, s1.count))[:2] == [(0, 38), (1, 12)]


def test_time_stepping_awf_weights_step_weighted_over_steps():
    """After step 2, π_i = (1·T_i1 + 2·T_i2)/(1·N_i1 + 2·N_i2): the carried sums say so exactly."""
    tr = simulate_divisible(_two_workers(), Divisible(100), resolve("awf"), steps=2)
    c1, c2 = tr.meta["carried"]
    s1 = step_trace(tr, 1)
    items = [sum(n for w, n in zip(s1.node, s1.count) if w == i) for i in range(2)]
    busy = [sum(e - s for w, s, e in zip(s1.node, s1.t_start, s1.t_end) if w == i) for i in range(2)]
    assert c2["den"] == [c1["den"][i] + 2 * items[i] for i in range(2)]
    assert c2["num"] == pytest.approx([c1["num"][i] + 2 * busy[i] for i in range(2)], rel=1e-12)


def test_awf_c_starts_a_step_from_the_weights_it_ended_with():
    tr = simulate_divisible(_two_workers(), Divisible(100), resolve("awf-c"), steps=2)
    w = tr.meta["carried"][0]["weights"]
    assert w == pytest.approx([1.5, 0.5], abs=1e-12)  # rates 1 and 1/3 exactly
    s1 = step_trace(tr, 1)
    assert s1.count[0] == math.floor(1.5 * 25 + 0.5)  # the first chunk of step 2 uses them


def test_af_uses_carried_mu_instead_of_a_probe():
    one = simulate_divisible(_two_workers(), Divisible(100), resolve("af"))
    assert list(one.count[:2]) == [2, 2]  # probes while nothing is measured
    tr = simulate_divisible(_two_workers(), Divisible(100), resolve("af"), steps=2)
    mu = tr.meta["carried"][0]["mu"]
    assert mu == pytest.approx([1.0, 3.0], rel=1e-12)
    s1 = step_trace(tr, 1)
    # σ = 0: chunk_a = R·(1/μ_a)/Σ(1/μ_j) = 100·1/(4/3) = 75
    assert s1.count[0] == 75


def test_steps_one_is_the_run_of_before():
    plat = _two_workers()
    for name in ("gss", "awf-c", "af", "fac2"):
        a = simulate_divisible(plat, Divisible(500, cost=CostModel("uniform", low=0.5, high=1.5)), resolve(name), seed=3)
        b = simulate_divisible(plat, Divisible(500, cost=CostModel("uniform", low=0.5, high=1.5)), resolve(name), seed=3,
                               steps=1)
        assert a.t_end == b.t_end and a.count == b.count and "time_steps" not in b.meta


def test_steps_share_one_clock_and_availability_changes_across_them():
    """b's availability drops from 1 to 0.25 at t = 60: step 1 runs before, later steps after it."""
    plat = _two_workers(Step(at=60.0, level=0.25))
    tr = simulate_divisible(plat, Divisible(100), resolve("fac2"), steps=3)
    steps = tr.meta["time_steps"]
    assert steps[0]["start"] == 0.0 and steps[0]["end"] == pytest.approx(50.0)
    for a, b in zip(steps, steps[1:]):
        assert b["start"] == a["end"]
    assert step_trace(tr, 2).makespan > 1.5 * step_trace(tr, 0).makespan
    assert tr.makespan == pytest.approx(steps[-1]["end"])
    # nothing lost, nothing twice: every item of every step once
    seen = sorted(i for f, n in zip(tr.first, tr.count) for i in range(f, f + n))
    assert seen == list(range(300))
    # per-step metrics are the one-step run's: step 1 equals a plain run
    plain = simulate_divisible(plat, Divisible(100), resolve("fac2"))
    assert compute(step_trace(tr, 0))["makespan"] == pytest.approx(compute(plain)["makespan"])
    # ... its messages too (a step's own, not 0), and the steps' messages add up to the run's
    assert step_trace(tr, 0).messages == plain.messages > 0
    assert compute(step_trace(tr, 0))["messages"] == compute(plain)["messages"]
    assert sum(step_trace(tr, k).messages for k in range(3)) == tr.messages
    assert sum(step_trace(tr, k).events for k in range(3)) == tr.events
    assert n_steps(tr) == 3


def test_same_seed_same_steps():
    plat = _two_workers()
    wl = Divisible(300, cost=CostModel("exponential", mean=1.0))
    a = simulate_divisible(plat, wl, resolve("auto"), steps=4, seed=5)
    b = simulate_divisible(plat, wl, resolve("auto"), steps=4, seed=5)
    assert a.t_end == b.t_end and a.meta["time_steps"] == b.meta["time_steps"]


@pytest.mark.parametrize("steps", [0, -1, 1.5, True, "2"])
def test_bad_steps_are_config_errors(steps):
    with pytest.raises(ConfigError, match="steps"):
        simulate_divisible(_two_workers(), Divisible(10), resolve("gss"), steps=steps)


def test_simulate_takes_steps_as_an_engine_option():
    r = dlbkit.simulate(_two_workers(), Divisible(100), "awf", steps=2)
    assert n_steps(r.trace) == 2
    with pytest.raises(ConfigError, match="steps"):
        dlbkit.simulate(_two_workers(), Divisible(100), "awf", steps=0)


def test_step_costs_per_step():
    costs = np.vstack([np.ones(10), 2 * np.ones(10)])
    tr = simulate_divisible(_two_workers(Constant(1.0)), Divisible(10), resolve("static"), steps=2, costs=costs)
    d = [s["end"] - s["start"] for s in tr.meta["time_steps"]]
    assert d == pytest.approx([5.0, 10.0])
    with pytest.raises(ConfigError, match="costs"):
        simulate_divisible(_two_workers(), Divisible(10), resolve("static"), steps=3, costs=costs)


from hypothesis import given, settings
from hypothesis import strategies as st


@settings(max_examples=examples(40), deadline=None)
@given(n=st.integers(1, 60), speeds=st.lists(st.sampled_from([0.25, 0.5, 1.0, 2.0]), min_size=1, max_size=4),
       steps=st.integers(1, 4), name=st.sampled_from(["awf", "awf-c", "af", "gss", "fac2", "static", "auto"]),
       seed=st.integers(0, 3))
def test_every_item_of_every_step_once_and_same_seed_same_trace(n, speeds, steps, name, seed):
    plat = Platform([Node("m")] + [Node(f"w{i}", s) for i, s in enumerate(speeds)], Network(1e-3, 1e9))
    wl = Divisible(n, cost=CostModel("exponential", mean=1.0))
    tr = simulate_divisible(plat, wl, resolve(name), steps=steps, seed=seed)
    for k in range(n_steps(tr)):
        st_ = step_trace(tr, k)
        assert sorted(i for f, c in zip(st_.first, st_.count) for i in range(f, f + c)) == list(range(n))
        assert min(st_.t_start) >= 0
    again = simulate_divisible(plat, wl, resolve(name), steps=steps, seed=seed)
    assert again.t_end == tr.t_end and again.node == tr.node


def _step_part(k: int, start: float, end: float) -> "Trace":
    """Step k by hand on the global clock: one round (round 0 of the step) of one chunk of 10 items
    on node k, one transfer of 3 items in it, a decision at *end* (the next step's start)."""
    from dlbkit.model.trace import Decision, Trace

    tr = Trace(n_nodes=2, node_of=[0, 1], balancer="x", total_work=10.0, max_item=1.0, end_time=end,
               meta={"step_start": start, "step_items": 10})
    tr.add_interval(k, 0, 10, start, start + 1.0, end, round=0)
    tr.rounds.append((0, k, 10, start + 0.5, 0.5, end - start - 1.0, end - start - 0.5))
    tr.transfers.append((0, start + 2.0, k, 1 - k, 3))
    tr.decisions.append(Decision(time=end if k == 0 else start, node=k, hook="chunk", answer=k))
    return tr


def test_join_renumbers_rounds_and_keeps_every_transfer_then_cuts_them_back():
    """Step 0 on [0, 5), step 1 on [5, 9]; a decision of each at 5 (the boundary)."""
    from dlbkit.families.divisible.model.steps import join_steps

    tr = join_steps([_step_part(0, 0.0, 5.0), _step_part(1, 5.0, 9.0)])
    assert tr.round_of == [0, 1]
    assert [r[0] for r in tr.rounds] == [0, 1]
    # each interval's round is the round row of its node (step 1's interval is on node 1)
    assert [tr.rounds[r][1] for r in tr.round_of] == tr.node == [0, 1]
    assert tr.transfers == [(0, 2.0, 0, 1, 3), (1, 7.0, 1, 0, 3)]
    assert tr.moved == 6  # both steps' moves
    assert [s["rounds"] for s in tr.meta["time_steps"]] == [[0, 1], [1, 2]]
    assert [s["transfers"] for s in tr.meta["time_steps"]] == [[0, 1], [1, 2]]
    s0, s1 = step_trace(tr, 0), step_trace(tr, 1)
    assert s0.round_of == [0] and s1.round_of == [0]
    assert s0.rounds == [(0, 0, 10, 0.5, 0.5, 4.0, 4.5)]
    assert s1.rounds == [(0, 1, 10, 0.5, 0.5, 3.0, 3.5)]
    assert s0.transfers == [(0, 2.0, 0, 1, 3)] and s1.transfers == [(0, 2.0, 1, 0, 3)]
    # both decisions are at t = 5: they belong to step 1 (half-open [0, 5) for step 0) ...
    assert s0.decisions == []
    assert [(d.node, d.time) for d in s1.decisions] == [(0, 0.0), (1, 0.0)]
    # ... and a decision at the last step's end stays in it
    tr.decisions.append(dataclasses.replace(tr.decisions[0], time=9.0, node=1))
    assert [(d.node, d.time) for d in step_trace(tr, 1).decisions] == [(0, 0.0), (1, 0.0), (1, 4.0)]


def test_each_step_keeps_its_own_boundary_decision_once():
    """Decisions at 0 (step 0's start) and 5 (step 1's start): each step has its own, once, from its start."""
    from dlbkit.families.divisible.model.steps import join_steps
    from dlbkit.model.trace import Decision

    a, b = _step_part(0, 0.0, 5.0), _step_part(1, 5.0, 9.0)
    a.decisions = [Decision(time=0.0, node=0, hook="chunk", answer=0)]
    tr = join_steps([a, b])
    s0, s1 = step_trace(tr, 0), step_trace(tr, 1)
    assert [(d.answer, d.time) for d in s0.decisions] == [(0, 0.0)]
    assert [(d.answer, d.time) for d in s1.decisions] == [(1, 0.0)]
    assert len(s0.decisions) + len(s1.decisions) == len(tr.decisions) == 2


def test_time_stepping_awf_weighs_the_later_step_more_by_hand():
    """Banicescu, Velusamy & Devaprasad 2003: π_i = Σ_s s·T_is / Σ_s s·N_is, so a speed change shows in
    the weights at its step's weight. Worker b runs at 1/3 in step 1 and at 1 from t = 75 (step 2).

    By hand (N = 100 items of cost 1, no latency). Step 1 as in the two-step case above: a 75 items in
    75 s, b 25 in 75 s; w = (1.5, 0.5). Step 2 (both at rate 1; batches of 2·⌈R/4⌉, chunk
    round_half_up(w_i·⌈R/4⌉) cut to the batch): a 38 (75→113), b 12 (→87); R = 50: b 7, 7, 7, then 5
    (the batch's rest, →113); R = 24, at 113 a 9 (→122), b 3, 2, 2, 2 (the next batch of 6 is b's alone,
    →122); R = 6, at 122 a 3 (→125), b 1, 1, 1 (→125). So T_a2 = N_a2 = 50, T_b2 = N_b2 = 50:
    π_a = (75 + 2·50)/(75 + 2·50) = 1, π_b = (75 + 2·50)/(25 + 2·50) = 175/125 = 7/5, and
    w = 2·(1, 5/7)/(12/7) = (7/6, 5/6) (an unweighted average would give b 3/4, the last step alone 1).
    Step 3's first chunks: round_half_up(7/6·25) = 29 for a, round_half_up(5/6·25) = 21 for b.
    """
    plat = _two_workers(Step(at=75.0, before=1 / 3, level=1.0))
    tr = simulate_divisible(plat, Divisible(100), resolve("awf"), steps=3)
    s1 = step_trace(tr, 1)
    assert sorted(zip(s1.t_start, s1.node, s1.count)) == sorted([
        (0, 0, 38), (0, 1, 12), (12, 1, 7), (19, 1, 7), (26, 1, 7), (33, 1, 5),
        (38, 0, 9), (38, 1, 3), (41, 1, 2), (43, 1, 2), (45, 1, 2), (47, 0, 3), (47, 1, 1), (48, 1, 1), (49, 1, 1)])
    assert [(s["start"], s["end"]) for s in tr.meta["time_steps"][:2]] == [(0.0, 75.0), (75.0, 125.0)]
    c2 = tr.meta["carried"][1]
    assert c2["steps"] == 2 and c2["num"] == [175.0, 175.0] and c2["den"] == [175.0, 125.0]
    assert c2["weights"] == pytest.approx([7 / 6, 5 / 6], rel=1e-12)
    s2 = step_trace(tr, 2)
    assert list(zip(s2.node, s2.count))[:2] == [(0, 29), (1, 21)]


def test_af_carries_mu_and_sigma_into_the_next_steps_first_chunk_by_hand():
    """AF's μ_j, σ_j at the end of step 1 are worker j's per-item times there (mean and population
    standard deviation: the view's), and step 2's first chunk is the AF rule on them, σ > 0 included.

    Items of cost 1, 3, 1, 3, ...; a at rate 1, b at rate 1/2. Each worker ends step 1 with as many
    1s as 3s: μ = (2, 4), σ = (1, 2). Step 2, a served first with R = 100: D = Σσ²/μ = 1/2 + 4/4 = 3/2,
    T = (1/2 + 1/4)⁻¹ = 4/3, chunk = (D + 2TR − √(D² + 4DTR))/(2μ_a) = (3/2 + 800/3 − √(9/4 + 800))/4
    = 59.96 → 60 (σ = 0 would give TR/μ_a = 66.7 → 67).
    """
    costs = np.array([1.0, 3.0] * 50)
    tr = simulate_divisible(_two_workers(Constant(0.5)), Divisible(100), resolve("af"), steps=2,
                            costs=np.vstack([costs, costs]))
    s0 = step_trace(tr, 0)
    rate = [1.0, 0.5]
    times = [[], []]
    for w, f, n in zip(s0.node, s0.first, s0.count):
        times[w] += list(costs[f:f + n] / rate[w])
    carried = tr.meta["carried"][0]
    assert carried["mu"] == pytest.approx([np.mean(t) for t in times], rel=1e-12)
    assert carried["sigma"] == pytest.approx([np.std(t) for t in times], rel=1e-12)
    assert carried["mu"] == pytest.approx([2.0, 4.0], rel=1e-12)
    assert carried["sigma"] == pytest.approx([1.0, 2.0], rel=1e-12)
    D, T, R = 1.5, 4 / 3, 100
    assert (D + 2 * T * R - math.sqrt(D * D + 4 * D * T * R)) / 4 == pytest.approx(59.96066, abs=1e-5)
    s1 = step_trace(tr, 1)
    assert (s1.node[0], s1.count[0]) == (0, 60)


@pytest.mark.parametrize("name", ["awf", "awf-c", "af", "fac2", "ss", "auto"])
def test_a_simulated_time_stepping_run_replays_exactly(name):
    """The same time-stepping run simulated and replayed: a simulated steps run dressed as a recording
    (its item costs, every step) replays to the same chunks, on the same workers, at the same times;
    worker 1's availability drops from 1 to 1/4 at t = 60, during step 2 of 4."""
    plat = Platform([Node("m"), Node("a", 1.0), Node("b", 2.0, availability=Step(at=60.0, level=0.25)),
                     Node("c", 0.5)], Network(2e-3, 1e9))
    costs = np.random.default_rng(5).uniform(0.2, 1.8, 100)
    res = dlbkit.simulate(plat, Divisible(100), name, steps=4, seed=2, costs=np.vstack([costs] * 4))
    res.trace.meta["item_cost"] = np.tile(costs, 4).tolist()
    rep = dlbkit.replay(res.trace)
    assert n_steps(rep.trace) == 4 and rep.ratio == pytest.approx(1.0, rel=1e-9)
    assert sorted(zip(rep.trace.first, rep.trace.count, rep.trace.node)) == \
        sorted(zip(res.trace.first, res.trace.count, res.trace.node))
    assert [s["end"] for s in rep.trace.meta["time_steps"]] == \
        pytest.approx([s["end"] for s in res.trace.meta["time_steps"]], rel=1e-9)
