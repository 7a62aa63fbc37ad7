"""The list scheduler of HEFT, CPOP, PEFT, HLF and heft-replan places every task exactly as the code it
replaced (dlbkit bc35ff8): data-ready times for every processor at once (``Arrivals``), processors
tried by a lower bound of their key until none can win (``PRUNE_FROM``), and the mean transfer terms
of their ranks summed with the pairs picked in C (``GraphCosts.mean_comm_factor``).

The references below are that code, kept verbatim in its logic: ``data_ready``, a loop over a task's
predecessors per processor calling ``costs.comm``, ``list_schedule``, which tries every processor, and
``mean_comm_factor``, a Python test per pair of processors.
Same (processor, start, finish, position) for every task, to the bit, on hypothesis graphs (integer
costs, so ties everywhere; processors sharing machines; flat and per-pair transfer tables; fixed tasks
and a release time) with the bound's search forced on small graphs, and the same plans from the four
mappers and heft-replan on larger graphs: a bare count, a multi-core platform, a ring and the thesis
model."""

import dataclasses
import heapq
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import make, schedule
from dlbkit.families.graph.balancers import _common, cpop, heft, hlf, peft
from dlbkit.families.graph.balancers._common import Arrivals, list_schedule
from dlbkit.model.availability import Step
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.evaluate import Timeline
from dlbkit.families.graph.model.generate import fft, in_tree, layered
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic

from support.profiles import examples


# ---- the references (bc35ff8) ------------------------------------------------------------------------
def reference_data_ready(costs, i, p, proc, finish):
    t = 0.0
    for j, d in costs.graph.preds[i]:
        v = finish[j] + costs.comm(d, proc[j], p)
        if v > t:
            t = v
    return t


def reference_list_schedule(costs, n_nodes, priority, *, ready_queue=True, insertion=True, allowed=None,
                            extra=None, by_start=False, fixed=None, release=0.0):
    g = costs.graph
    n = g.n_tasks
    lines = [Timeline() for _ in range(n_nodes)]
    proc, start, finish, pos = [0] * n, [0.0] * n, [0.0] * n, [0] * n
    every = range(n_nodes)
    if fixed:
        for i, (p, s0, f0) in fixed.items():
            proc[i], start[i], finish[i], pos[i] = p, s0, f0, -1
            lines[p].add(s0, f0)
    if ready_queue:
        npred = [len(p) for p in g.preds]
        heap = [(-priority[i], i) for i in g.entries]
        heapq.heapify(heap)

        def tasks():
            while heap:
                i = heapq.heappop(heap)[1]
                yield i
                for j, _ in g.succs[i]:
                    npred[j] -= 1
                    if npred[j] == 0:
                        heapq.heappush(heap, (-priority[j], j))
    else:
        def tasks():
            todo = range(n) if not fixed else (i for i in range(n) if i not in fixed)
            yield from sorted(todo, key=lambda i: (-priority[i], i))
    for seq, i in enumerate(tasks()):
        row = costs.exec[i]
        best = None
        for p in (allowed(i) if allowed is not None else every):
            dr = reference_data_ready(costs, i, p, proc, finish)
            st_ = lines[p].earliest(dr if dr >= release else release, row[p], insertion)
            key = st_ if by_start else st_ + row[p] + (extra(i, p) if extra is not None else 0.0)
            if best is None or key < best[0]:
                best = (key, st_, p)
        _, st_, p = best
        proc[i], start[i], finish[i], pos[i] = p, st_, st_ + row[p], seq
        lines[p].add(st_, finish[i])
    return proc, start, finish, pos


def reference_mean_comm_factor(costs):
    m, host = costs.n_nodes, costs.host
    count = m * m - sum(c * c for c in Counter(host).values())
    if not count:
        return 0.0, 0.0
    lat = sum(costs.lat[p][q] for p in range(m) for q in range(m) if host[p] != host[q])
    per = sum(costs.per[p][q] for p in range(m) for q in range(m) if host[p] != host[q])
    return lat / count, per / count


def as_reference(costs, n_nodes, priority, *, extra=None, **kw):
    """``list_schedule``'s signature on the reference (*extra* a table, as the mappers now pass it)."""
    call = (lambda i, p: extra[i][p]) if extra is not None else None
    return reference_list_schedule(costs, n_nodes, priority, extra=call, **kw)


def bits(xs):
    """The floats' exact values, signs of zero included (``==`` would take -0.0 for 0.0)."""
    return [x.hex() if isinstance(x, float) else x for x in xs]


def same(new, ref):
    assert new[0] == ref[0] and new[3] == ref[3]  # processors, placement positions
    assert bits(new[1]) == bits(ref[1]) and bits(new[2]) == bits(ref[2])  # starts, finishes
    assert all(type(a) is type(b) for a, b in zip(new[1] + new[2], ref[1] + ref[2]))


# ---- inputs ------------------------------------------------------------------------------------------
@st.composite
def costs(draw):
    """Costs of a small DAG on m processors: integer execution times and transfer terms, processors
    grouped on machines; the transfer tables flat (one latency, one per-unit time off each machine:
    a bare count, a complete platform) or drawn per pair (a routed topology, a hand-made table)."""
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 7))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 3)), max_size=2 * n))
    edges = {(min(a, b), max(a, b)): float(d) for a, b, d in pairs if a != b}
    g = TaskGraph(list(range(n)), loads=[1.0] * n, edges=[(a, b, d) for (a, b), d in edges.items()])
    c = costs_for(g, m)
    ex = [[float(x) for x in draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))] for _ in range(n)]
    host = tuple(draw(st.lists(st.integers(0, 2), min_size=m, max_size=m)))
    terms = st.integers(0, 2).map(float)
    if draw(st.booleans()):
        lat = [[draw(terms)] * m] * m
        per = [[draw(terms)] * m] * m
    else:
        lat = [[draw(terms) for _ in range(m)] for _ in range(m)]
        per = [[draw(terms) for _ in range(m)] for _ in range(m)]
    return dataclasses.replace(c, exec=ex, host=host, lat=lat, per=per)


@pytest.fixture(params=[1, 2, _common.PRUNE_FROM], ids=lambda k: f"prune_from={k}")
def prune_from(request, monkeypatch):
    """The bound's search from 1 or 2 candidates on (every small case takes it) and from the default."""
    monkeypatch.setattr(_common, "PRUNE_FROM", request.param)
    return request.param


# ---- the ranks' mean transfer terms --------------------------------------------------------------------
@settings(max_examples=examples(200), deadline=None)
@given(c=costs())
def test_mean_comm_factor_is_the_reference_sum(c):
    assert bits(c.mean_comm_factor()) == bits(reference_mean_comm_factor(c))


def test_mean_comm_factor_is_the_reference_sum_on_platforms():
    g = layered(20, width=5, seed=1)
    for p in _platforms():
        c = costs_for(g, p)
        assert len(set(c.host)) < c.n_nodes  # cores share machines: pairs within one are left out
        assert bits(c.mean_comm_factor()) == bits(reference_mean_comm_factor(c))
    rng = np.random.default_rng(3)  # sums of many distinct floats: any other order would round otherwise
    c = costs_for(g, 50)
    c = dataclasses.replace(c, lat=rng.random((50, 50)).tolist(), per=rng.random((50, 50)).tolist(),
                            host=tuple(int(x) for x in rng.integers(0, 20, size=50)))
    assert bits(c.mean_comm_factor()) == bits(reference_mean_comm_factor(c))


# ---- data-ready times --------------------------------------------------------------------------------
@settings(max_examples=examples(200), deadline=None)
@given(c=costs(), data=st.data())
def test_arrivals_are_the_reference_data_ready_times_on_every_processor(c, data):
    n, m = c.graph.n_tasks, c.n_nodes
    proc = data.draw(st.lists(st.integers(0, m - 1), min_size=n, max_size=n))
    finish = data.draw(st.lists(st.integers(-1, 6).map(float) | st.sampled_from([-0.0, 0.5, math.nan]),
                                min_size=n, max_size=n))
    arrivals = Arrivals(c, m)
    for i in range(n):
        got = arrivals(c.graph.preds[i], proc, finish).tolist()
        assert bits(got) == bits([reference_data_ready(c, i, p, proc, finish) for p in range(m)])


def test_arrivals_take_flat_rows_per_machine_and_other_rows_per_processor():
    """Both ways are taken: a ring's hop counts are not flat, a complete platform's are (the test above
    would pass with only one of them)."""
    g = layered(200, width=10, density=0.2, seed=4)
    for topology, flat in (("complete", True), ("ring", False)):
        p = Platform([Node(f"n{k}", speed=1.0 + k % 3, cores=1 + k % 2) for k in range(6)],
                     Network(0.5, 2.0, topology))
        c = costs_for(g, p)
        a = Arrivals(c, c.n_nodes)
        proc = [k % c.n_nodes for k in range(g.n_tasks)]
        finish = [float(k % 17) for k in range(g.n_tasks)]
        for i in range(g.n_tasks):
            got = a(g.preds[i], proc, finish).tolist()
            assert bits(got) == bits([reference_data_ready(c, i, q, proc, finish) for q in range(c.n_nodes)])
        assert a.flat and all((v is not None) == flat for v in a.flat.values())


# ---- the list scheduler --------------------------------------------------------------------------------
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(c=costs(), data=st.data())
def test_list_schedule_places_as_the_reference(c, data, prune_from):
    n, m = c.graph.n_tasks, c.n_nodes
    prio = [float(x) for x in data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))]
    kw = data.draw(st.fixed_dictionaries({"ready_queue": st.booleans(), "insertion": st.booleans(),
                                          "by_start": st.booleans()}))
    if data.draw(st.booleans()):
        kw["extra"] = [[float(x) for x in data.draw(st.lists(st.integers(0, 3), min_size=m, max_size=m))]
                       for _ in range(n)]
    if data.draw(st.booleans()):  # CPOP's form: some tasks on one processor
        only = data.draw(st.integers(0, m - 1))
        pinned = set(data.draw(st.lists(st.integers(0, n - 1), max_size=n)))
        kw["allowed"] = lambda i: (only,) if i in pinned else range(m)
    elif data.draw(st.booleans()):  # any increasing list of processors
        subsets = [sorted(set(data.draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=m)))) for _ in range(n)]
        kw["allowed"] = subsets.__getitem__
    if not kw["ready_queue"] and data.draw(st.booleans()):  # a replan: decided tasks and a release time
        ids = data.draw(st.lists(st.integers(0, n - 1), max_size=n, unique=True))
        fixed = {}
        for i in ids:
            s0 = float(data.draw(st.integers(0, 8)))
            fixed[i] = (data.draw(st.integers(0, m - 1)), s0, s0 + data.draw(st.integers(0, 3)))
        kw["fixed"] = fixed
        kw["release"] = float(data.draw(st.integers(0, 6)))
    same(list_schedule(c, m, prio, **kw), as_reference(c, m, prio, **kw))


@pytest.mark.parametrize("m", [8, 64])
@pytest.mark.parametrize("kw", [{"ready_queue": False}, {}, {"insertion": False, "by_start": True},
                                {"insertion": False}], ids=["heft", "ready-queue", "hlf", "no-insertion"])
def test_list_schedule_places_as_the_reference_on_a_larger_graph(m, kw, prune_from, monkeypatch):
    c = costs_for(layered(600, width=20, density=0.1, seed=1), m)
    prio = [float(len(c.graph.succs[i]) // 2) for i in range(c.graph.n_tasks)]  # few levels: ties
    tries = []
    earliest = Timeline.earliest
    monkeypatch.setattr(Timeline, "earliest", lambda self, *a: tries.append(1) or earliest(self, *a))
    new = list_schedule(c, m, prio, **kw)
    if prune_from <= m:
        assert len(tries) < c.graph.n_tasks * m  # the bound stopped some searches early
    monkeypatch.setattr(Timeline, "earliest", earliest)
    same(new, as_reference(c, m, prio, **kw))


# ---- the mappers ---------------------------------------------------------------------------------------
def _reference_mappers(monkeypatch):
    for module in (heft, cpop, peft, hlf):
        monkeypatch.setattr(module, "list_schedule", as_reference)


def _platforms():
    nodes = [Node(f"n{k}", speed=(1.0, 1.5, 2.0, 3.0)[k % 4], cores=1 + k % 3) for k in range(12)]
    return [Platform(nodes, Network(0.01, 5.0)), Platform(nodes[:9], Network(0.02, 10.0, "ring"))]


@pytest.mark.parametrize("mapper", ["heft", "cpop", "peft", "hlf"])
@pytest.mark.parametrize("case", ["bare count", "multi-core platform", "ring", "thesis"])
def test_mappers_plan_as_with_the_reference(mapper, case, monkeypatch):
    g = layered(800, width=20, density=0.1, seed=2, ccr=1.0, load=1.0)
    complete, ring = _platforms()
    nodes, model = {"bare count": (40, "standard"), "multi-core platform": (complete, "standard"),
                    "ring": (ring, "standard"), "thesis": (ring, "thesis")}[case]
    new = schedule(g, nodes, mapper, cost_model=model)
    _reference_mappers(monkeypatch)
    ref = schedule(g, nodes, mapper, cost_model=model)
    assert new.as_dict() == ref.as_dict()  # makespan, and per task its node, start and finish


def test_heft_replan_runs_as_with_the_reference(monkeypatch):
    g = layered(500, width=20, density=0.1, seed=3)
    nodes = Platform([Node(f"n{k}", speed=1.0 + k % 4, cores=1 + k % 2,
                           availability=Step(at=20.0, level=0.2) if k < 2 else 1.0) for k in range(12)],
                     Network(0.001, 10.0))
    b = make("heft-replan", {"every": 50})
    new = simulate_graph_dynamic(nodes, g, b, seed=1)
    assert len(b.replans_) > 3  # replans with fixed tasks and a release time
    _reference_mappers(monkeypatch)
    ref = simulate_graph_dynamic(nodes, g, make("heft-replan", {"every": 50}), seed=1)
    assert new.makespan == ref.makespan
    assert new.meta["assignment"] == ref.meta["assignment"] and new.meta["start"] == ref.meta["start"]


@pytest.mark.parametrize("g, m", [(fft(32), 16), (in_tree(2, 9), 24)], ids=["fft", "in-tree"])
def test_list_schedule_places_as_the_reference_on_graphs_with_many_ties(g, m):
    c = costs_for(g, m)
    prio = [0.0] * g.n_tasks  # every task tied: the order is the task index
    for kw in ({"ready_queue": False}, {}, {"insertion": False, "by_start": True}):
        same(list_schedule(c, m, prio, **kw), as_reference(c, m, prio, **kw))
        rng = np.random.default_rng(5)
        extra = rng.integers(0, 3, size=(g.n_tasks, m)).astype(float).tolist()
        same(list_schedule(c, m, prio, extra=extra, **kw), as_reference(c, m, prio, extra=extra, **kw))
