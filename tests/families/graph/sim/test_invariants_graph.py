"""Invariants of the task-graph family on platforms: every task run once, precedence with the transfer
time respected, one task at a time per processor, the makespan never below the critical-path bound.

balancers/mapping/test_mappers.py's property checks every mapper on processor counts (precedence by
start times only); sim/test_graph_dynamic.py and balancers/graph_online/test_heft_replan.py the online
mappers. Here every static mapper on a heterogeneous platform with a network (static engine, both cost models), every mapper and online mapper
on the dynamic engine with a node losing its CPU, the same seed giving the same trace, and real runs
(dlbkit.run_graph) under every mapper returning the sequential results, each task once.
"""

import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import TaskGraph, make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.model import Network, Node, Platform, Step
from dlbkit.families.graph.model.costs import costs_for, critical_path_bound
from dlbkit.families.graph.sim.static import simulate_graph
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic

from support.profiles import examples

MAPPERS = sorted(n for n, c in REGISTRY.items() if c.kind == "mapping" and n != "milp")  # milp: a solve per example
ONLINE = sorted(n for n, c in REGISTRY.items() if c.kind == "graph-online")
QUICK = {"annealing": {"moves": 30, "patience": 2}, "tabu": {"perturbations": 60}}
EPS = 1e-9


@st.composite
def cases(draw):
    n = draw(st.integers(1, 14))
    m = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 10**6)))
    edges = [(i, j, float(rng.integers(0, 10))) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3]
    g = TaskGraph(list(range(n)), loads=rng.integers(1, 10, size=n).tolist(), edges=edges)
    speeds = draw(st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=m, max_size=m))
    slow = draw(st.booleans())
    p = Platform([Node(f"n{k}", speed=s, availability=Step(at=3.0, level=0.25) if slow and k == 0 else 1.0)
                  for k, s in enumerate(speeds)], Network(latency=draw(st.sampled_from([0.0, 0.5])), bandwidth=2.0))
    return g, p


def check_schedule(tr, g, p, thesis, dynamic):
    n, m = g.n_tasks, len(p.nodes)
    if dynamic:
        start, finish, a = tr.meta["start"], tr.meta["finish"], tr.meta["assignment"]
        assert set(tr.first) == set(range(n))  # every task run (a preempted one in several stretches)
        # every load > 0: each stretch did work (no row for a block displaced as it started, nor for a
        # transmit block of no time)
        assert all(e > s for s, e in zip(tr.t_start, tr.t_end))
    else:
        assert sorted(tr.first) == list(range(n))  # one stretch per task: run once
        start, finish, a = [0.0] * n, [0.0] * n, tr.meta["assignment"]
        for i, s, e in zip(tr.first, tr.t_start, tr.t_end):
            start[i], finish[i] = s, e
    assert len(a) == n and all(0 <= x < m for x in a)
    c = costs_for(g, p, "thesis" if thesis else "standard")
    for i in range(n):
        assert start[i] <= finish[i]
        for j, d in g.succs[i]:
            if thesis:  # a receiver may start once its sender computed (its messages are part of its stretch)
                assert start[j] >= start[i] - EPS
            else:  # after every predecessor ended and its data arrived
                assert start[j] >= finish[i] + c.comm(d, a[i], a[j]) - EPS, (i, j)
    for q in range(m):  # one task at a time per processor
        rows = sorted((s, e) for x, s, e in zip(tr.node, tr.t_start, tr.t_end) if x == q)
        assert all(rows[k][1] <= rows[k + 1][0] + EPS for k in range(len(rows) - 1))
    assert max(finish) >= critical_path_bound(c) - EPS


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from([("standard", False), ("thesis", False), ("standard", True), ("standard", "link")]),
       st.sampled_from(MAPPERS))
def test_static_plans_on_a_platform_run_every_task_once_after_its_inputs(case, model, name):
    """With contention a message may wait for a port or link: it arrives no earlier than without."""
    g, p = case
    tr = simulate_graph(p, g, make(name, QUICK.get(name)), cost_model=model[0], contention=model[1], seed=1)
    check_schedule(tr, g, p, model[0] == "thesis", dynamic=False)
    again = simulate_graph(p, g, make(name, QUICK.get(name)), cost_model=model[0], contention=model[1], seed=1)
    assert (again.node, again.first, again.t_start, again.t_end) == (tr.node, tr.first, tr.t_start, tr.t_end)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(MAPPERS + ONLINE), st.sampled_from(["standard", "thesis"]), st.integers(0, 1000))
def test_the_dynamic_engine_runs_every_task_once_after_its_inputs(case, name, model, seed):
    """Static plans replayed and online mappers, under both cost models."""
    g, p = case
    tr = simulate_graph_dynamic(p, g, make(name, QUICK.get(name)), seed=seed, cost_model=model)
    check_schedule(tr, g, p, model == "thesis", dynamic=True)
    again = simulate_graph_dynamic(p, g, make(name, QUICK.get(name)), seed=seed, cost_model=model)
    assert (again.node, again.first, again.t_start, again.t_end) == (tr.node, tr.first, tr.t_start, tr.t_end)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), cases(), st.floats(0.0, 20.0), st.sampled_from(ONLINE), st.sampled_from(["standard", "thesis"]),
       st.integers(0, 1000))
def test_online_mappers_run_every_task_of_staggered_programs_once_after_it_arrived(c1, c2, t2, name, model, seed):
    """Two programs, the second arriving at t2, on the first case's platform: every task of both once,
    none before its program arrived, precedence and one task at a time per processor, under both cost
    models (the thesis model's stall, found here, is the triangle test below)."""
    from dlbkit.families.graph.sim.dynamic import programs_of
    (g1, p), (g2, _) = c1, c2
    w = [(g1, 0.0), (g2, t2)]
    tr = simulate_graph_dynamic(p, w, make(name), cost_model=model, seed=seed)
    g, prog, arrivals = programs_of(w)
    check_schedule(tr, g, p, model == "thesis", dynamic=True)
    assert all(tr.meta["start"][i] >= arrivals[prog[i]] for i in range(g.n_tasks))


@pytest.mark.parametrize("name", ONLINE)
def test_online_mappers_under_the_thesis_model_finish_a_triangle(name):
    """Found by the staggered-programs property with the thesis model. 0 → 1, 0 → 2, 1 → 2: 2 is placeable
    once 1 has received data (its hold), which only 0's message gives. Rule 3 read for the whole transmit
    block (0 sends nothing until 2 is placed) deadlocked: ConfigError "3 tasks never finished", blaming the
    mapper. Read per message, 0 sends to the placed 1 first (decreasing precedence), then waits for 2."""
    g = TaskGraph([0, 1, 2], loads=[1.0, 1.0, 1.0], edges=[(0, 1, 1.0), (0, 2, 1.0), (1, 2, 1.0)])
    tr = simulate_graph_dynamic(1, g, make(name), cost_model="thesis", seed=0)
    # one node, three unit tasks in a chain of precedence, messages free on one machine: 3, in order
    assert set(tr.first) == {0, 1, 2} and tr.makespan == 3.0
    assert tr.meta["start"] == [0.0, 1.0, 2.0] and tr.meta["finish"][1:] == [2.0, 3.0]


def test_different_seeds_give_different_random_plans():
    from dlbkit.families.graph.model.generate import layered
    g = layered(30, width=5, seed=3)
    plans = {tuple(simulate_graph(4, g, make("random-map"), seed=s).meta["assignment"]) for s in range(3)}
    assert len(plans) > 1


# --- the real runtime --------------------------------------------------------------------------------------
def _combine(i, *xs):
    return (i, sum(x[0] for x in xs) % 1009, len(xs))


@st.composite
def dags(draw):
    n = draw(st.integers(1, 12))
    tasks = {}
    for i in range(n):
        deps = draw(st.lists(st.integers(0, i - 1), unique=True, max_size=3)) if i else []
        tasks[f"t{i}"] = (_combine, i, *[f"t{j}" for j in deps])
    return tasks


def sequential(tasks):
    out = {}
    for k in sorted(tasks, key=lambda k: int(k[1:])):
        fn, i, *deps = tasks[k]
        out[k] = fn(i, *[out[d] for d in deps])
    return out


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tasks=dags(), name=st.sampled_from(MAPPERS + ONLINE), workers=st.integers(1, 3))
def test_real_runs_under_every_mapper_give_the_sequential_results(tasks, name, workers):
    r = dlbkit.run_graph(tasks, workers=workers, balancer=name, params=QUICK.get(name), seed=3)
    assert r.results == sequential(tasks)
    assert sorted(r.trace.first) == list(range(len(tasks)))  # each task computed once


def test_real_run_of_a_diamond_under_milp():
    tasks = {"a": (operator.add, 1, 2), "b": (operator.mul, "a", 2), "c": (operator.sub, "a", 1),
             "d": (operator.add, "b", "c")}
    r = dlbkit.run_graph(tasks, workers=2, balancer="milp", seed=0)
    assert r.results == {"a": 3, "b": 6, "c": 2, "d": 8} and sorted(r.trace.first) == [0, 1, 2, 3]
