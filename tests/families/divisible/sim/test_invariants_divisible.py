"""Invariants of the divisible family over every registered chunking balancer.

balancers/chunking/test_contract.py's property runs every rule on one step with constant nodes; sim/test_divisible.py
runs self-scheduling under a pulse; test_loop_steps.py a few rules over steps. Here every rule, under a
changing availability (step, pulse or Markov background load), both mechanisms, with and without the master
computing, over several time steps: each step's chunks tile its items exactly once, and the same seed
gives the same trace. The real runs (dlbkit.map, run_map, Loop.map) return [fn(x) for x in items] for any
items, workers and rule, each item computed once.
"""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import CostModel, Divisible, Markov, Network, Node, Platform, Pulse, Step
from dlbkit.balancers.registry import REGISTRY, resolve
from dlbkit.families.divisible.model.steps import n_steps, step_trace
from dlbkit.families.divisible.sim.engine import simulate_divisible

from support.profiles import examples

CHUNKING = sorted(n for n, c in REGISTRY.items() if c.kind == "chunking")
AVAILABILITY = [1.0, Step(at=2.0, level=0.25), Pulse(start=0.5, duration=1.5, level=0.1, period=4.0),
                Markov(mean_free=2.0, mean_busy=1.0, low=0.3)]


def covered(tr):
    """Every item index of the trace's chunks, with repetition."""
    return sorted(i for f, c in zip(tr.first, tr.count) for i in range(f, f + c))


cases = st.fixed_dictionaries({
    "n": st.integers(1, 120), "name": st.sampled_from(CHUNKING),
    "speeds": st.lists(st.sampled_from([0.25, 1.0, 3.0]), min_size=1, max_size=4),
    "avail": st.lists(st.sampled_from(range(len(AVAILABILITY))), min_size=4, max_size=4),
    "mechanism": st.sampled_from(["self-scheduling", "rounds"]), "master_computes": st.booleans(),
    "steps": st.integers(1, 3), "seed": st.integers(0, 2**31), "master": st.sampled_from([0, "last"]),
    "overheads": st.sampled_from([(0.0, 0.0, 0.0, 0.0), (0.01, 64.0, 1e3, 0.5)]),
    "cost": st.sampled_from([CostModel(), CostModel("exponential", mean=1.0), CostModel("uniform", low=0.1, high=3.0)]),
})


def run(c, **kw):
    workers = [Node(f"w{i}", speed=s, availability=AVAILABILITY[c["avail"][i]]) for i, s in enumerate(c["speeds"])]
    last = c.get("master") == "last"  # the master is the platform's last node, not its first
    nodes = workers + [Node("m")] if last else [Node("m")] + workers
    p = Platform(nodes, Network(latency=1e-3, bandwidth=1e6))
    overhead, request, broadcast, startup = c.get("overheads", (0.0, 0.0, 0.0, 0.0))
    return simulate_divisible(p, Divisible(c["n"], c["cost"], bytes_in=8.0), resolve(c["name"]), seed=c["seed"],
                              mechanism=c["mechanism"], master_computes=c["master_computes"], steps=c["steps"],
                              master=len(workers) if last else 0, master_overhead=overhead, request_bytes=request,
                              broadcast_bytes=broadcast, startup=startup, **kw)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_every_item_of_every_step_in_exactly_one_chunk_under_changing_availability(c):
    tr = run(c)
    assert n_steps(tr) == c["steps"]
    for k in range(c["steps"]):
        s = step_trace(tr, k)
        assert covered(s) == list(range(c["n"]))  # each index once: no gap, no overlap
        assert all(x >= 1 for x in s.count)
        assert all(a <= b for a, b in zip(s.t_start, s.t_end))
    assert sum(tr.count) == c["steps"] * c["n"]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_same_seed_same_trace_under_changing_availability(c):
    a, b = run(c), run(c)
    assert (a.node, a.first, a.count, a.t_ask, a.t_start, a.t_end) == (b.node, b.first, b.count, b.t_ask, b.t_start,
                                                                         b.t_end)
    assert a.end_time == b.end_time and a.messages == b.messages


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases.filter(lambda c: c["mechanism"] == "self-scheduling"))
def test_the_specialised_loop_gives_the_kernels_trace(c):
    """Self-scheduling runs in a specialised loop unless fast_path=False: the same trace, for every rule."""
    a, b = run(c), run(c, fast_path=False)
    assert (a.node, a.first, a.count, a.t_ask, a.t_start, a.t_end) == (b.node, b.first, b.count, b.t_ask, b.t_start,
                                                                         b.t_end)


def test_different_seeds_draw_different_markov_loads():
    """The Markov load is drawn from the seed: over a few seeds the makespans differ."""
    c = {"n": 200, "name": "fac2", "speeds": [1.0, 1.0], "avail": [3, 3, 0, 0], "mechanism": "self-scheduling",
         "master_computes": False, "steps": 1, "cost": CostModel()}
    assert len({run({**c, "seed": s}).end_time for s in range(4)}) > 1


# --- the real runtime ---------------------------------------------------------------------------------------
def tagged(x):
    """The item and the pid that computed it: the result names its item, so a lost or doubled item shows."""
    return (x * 3 - 1, os.getpid())


real = dict(items=st.lists(st.integers(-10**6, 10**6), max_size=60), workers=st.integers(1, 3),
            name=st.sampled_from(CHUNKING), seed=st.integers(0, 1000))


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**real)
def test_real_run_map_returns_the_sequential_results_each_item_once(items, workers, name, seed):
    r = dlbkit.run_map(tagged, items, balancer=name, workers=workers, seed=seed)
    assert [v for v, _ in r.results] == [x * 3 - 1 for x in items]
    assert covered(r.trace) == list(range(len(items)))
    assert len({pid for _, pid in r.results}) <= workers


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**real)
def test_real_map_equals_the_list_comprehension(items, workers, name, seed):
    assert dlbkit.map(abs, items, balancer=name, workers=workers, seed=seed) == [abs(x) for x in items]


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.lists(st.integers(-1000, 1000), max_size=40), min_size=1, max_size=3),
       workers=st.integers(1, 3), name=st.sampled_from(CHUNKING))
def test_real_loop_map_equals_the_list_comprehension_every_step(steps, workers, name):
    with dlbkit.Loop(abs, workers=workers, balancer=name) as loop:
        for items in steps:
            r = loop.run(items)
            assert r.results == [abs(x) for x in items]
            assert covered(r.trace) == list(range(len(items)))


@pytest.mark.parametrize("name", ["awf", "af", "auto"])
def test_real_loop_map_with_learning_rules_over_several_steps(name):
    with dlbkit.Loop(abs, workers=2, balancer=name) as loop:
        for k in range(4):
            items = list(range(-k, 30 + 7 * k))
            assert loop.map(items) == [abs(x) for x in items]


def test_an_empty_step_of_a_loop_under_mfsc():
    """Regression (found by the Loop.map property): an empty step starts the rule with no items; mFSC's
    t = ⌈0/P⌉ = 0 took the logarithm of 0 (ValueError: math domain error) and killed the pool."""
    with dlbkit.Loop(abs, workers=1, balancer="mfsc") as loop:
        assert loop.map([]) == []
        assert loop.map([-3, 4]) == [3, 4]
