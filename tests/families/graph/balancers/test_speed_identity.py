"""Mapping balancers sped up for large graphs decide exactly as the implementations they replaced.

Each reference below is the code before its speed-up (kept verbatim in its logic), so any change of a
value, a plan or a tie is caught: same plans (assignment, order, info) on hypothesis graphs (integer
loads, data and times, so ties everywhere; processors sharing machines) and on a few larger graphs."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.families.graph.balancers.base import Plan
from dlbkit.families.graph.balancers import PEFT, ElasticForce
from dlbkit.families.graph.balancers._common import list_schedule, plan_order
from dlbkit.families.graph.balancers.heft import _standard
from dlbkit.families.graph.balancers.linear_clustering import linear_clusters
from dlbkit.families.graph.balancers.max_k1_sum import symmetric_comm
from dlbkit.families.graph.balancers.peft import optimistic_cost_table
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.costs import costs_for, level_weights
from dlbkit.families.graph.model.generate import in_tree, layered
from dlbkit.families.graph.model.view import GraphView

from support.profiles import examples


# ---- references (the code before the speed-up) -----------------------------------------------------
def reference_oct(costs):
    g = costs.graph
    m = costs.n_nodes
    lat_m, per_m = costs.mean_comm_factor()
    oct_ = [[0.0] * m for _ in range(g.n_tasks)]
    for i in reversed(g.topo):
        row = oct_[i]
        for j, d in g.succs[i]:
            cbar = lat_m + d * per_m
            base = [oct_[j][w] + costs.exec[j][w] for w in range(m)]
            best_any = min(base) + cbar
            for k in range(m):
                v = min(best_any, min(base[w] for w in range(m) if costs.host[w] == costs.host[k]))
                if v > row[k]:
                    row[k] = v
    return oct_


def reference_peft(view):
    costs = view.costs if view.costs.kind == "standard" else _standard(view.costs)
    m = view.n_nodes
    oct_ = reference_oct(costs)
    rank = [sum(r) / m for r in oct_]
    proc, start, finish, pos = list_schedule(costs, m, rank, extra=oct_)
    return Plan(tuple(proc), plan_order(start, finish, pos), {"estimate": max(finish)})


def reference_elastic_force(view, max_swaps=None):
    g = view.costs.graph
    m = view.n_nodes
    k = math.ceil(g.n_tasks / m)
    n = m * k
    cu = symmetric_comm(g, n)
    node = [t // k for t in range(n)]
    members = [set(range(y * k, (y + 1) * k)) for y in range(m)]
    ns = [[0.0] * m for _ in range(n)]
    for i in range(n):
        for t, c in cu[i].items():
            ns[i][node[t]] += c
    inertia = [sum(cu[i].values()) for i in range(n)]

    def swap(i, t):
        x, y = node[i], node[t]
        for u, c in cu[i].items():
            ns[u][x] -= c
            ns[u][y] += c
        for u, c in cu[t].items():
            ns[u][y] -= c
            ns[u][x] += c
        node[i], node[t] = y, x
        members[x].remove(i), members[y].remove(t)
        members[x].add(t), members[y].add(i)

    def gain(i, t):
        x, y = node[i], node[t]
        return ns[i][y] - ns[i][x] + ns[t][x] - ns[t][y] - 2.0 * cu[i].get(t, 0.0)

    swaps = 0
    for i in range(g.n_tasks):
        if len(cu[i]) == 1:
            j = next(iter(cu[i]))
            x, y = node[i], node[j]
            if x != y:
                cands = [t for t in members[y] if t != j]
                if cands:
                    t = max(cands, key=lambda t: (ns[t][x] - cu[t].get(i, 0.0), -t))
                    swap(i, t)
                    swaps += 1
    while max_swaps is None or swaps < max_swaps:
        pairs = sorted(((ns[i][y], i, y) for i in range(n) for y in range(m) if y != node[i] and ns[i][y] > 0),
                       key=lambda e: (-e[0], inertia[e[1]], e[1], e[2]))
        done = False
        for _, i, y in pairs:
            for t in sorted(members[y], key=lambda t: (cu[i].get(t, 0.0), inertia[t], t)):
                if gain(i, t) > 1e-9:
                    swap(i, t)
                    swaps += 1
                    done = True
                    break
            if done:
                break
        if not done:
            break
    cut = sum(c for i in range(n) for t, c in cu[i].items() if node[i] != node[t]) / 2.0
    return Plan(tuple(node[:g.n_tasks]), None, {"swaps": swaps, "cut": cut, "k": k})


def reference_linear_clusters(costs):
    g = costs.graph
    n = g.n_tasks
    w, lat_m, per_m = level_weights(costs)
    left = [True] * n
    clusters = []
    rev = list(reversed(g.topo))
    while True:
        length = [0.0] * n
        nxt = [-1] * n
        any_left = False
        for i in rev:
            if not left[i]:
                continue
            any_left = True
            best, arg = 0.0, -1
            for j, d in g.succs[i]:
                if left[j]:
                    v = length[j] + (lat_m + d * per_m if (d or lat_m) else 0.0)
                    if arg < 0 or v > best or (v == best and j < arg):
                        best, arg = v, j
            length[i] = w[i] + best
            nxt[i] = arg
        if not any_left:
            return clusters
        head = max((i for i in range(n) if left[i]), key=lambda i: (length[i], -i))
        path = []
        while head >= 0:
            path.append(head)
            left[head] = False
            head = nxt[head]
        clusters.append(path)


# ---- inputs ------------------------------------------------------------------------------------------
@st.composite
def costs(draw):
    """Costs of a small DAG on m processors: integer exec times per (task, processor) and transfer
    terms, processors grouped on machines (a shared machine receives for free)."""
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 6))
    loads = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 3)), max_size=2 * n))
    edges = {(min(a, b), max(a, b)): float(d) for a, b, d in pairs if a != b}
    g = TaskGraph(list(range(n)), loads=[float(x) for x in loads], edges=[(a, b, d) for (a, b), d in edges.items()])
    c = costs_for(g, m, draw(st.sampled_from(["standard", "thesis"])))
    ex = [[float(x) for x in draw(st.lists(st.integers(0, 4), min_size=m, max_size=m))] for _ in range(n)]
    host = tuple(draw(st.lists(st.integers(0, 2), min_size=m, max_size=m)))
    lat = [[float(draw(st.integers(0, 2))) for _ in range(m)] for _ in range(m)]
    per = [[float(draw(st.integers(0, 2))) for _ in range(m)] for _ in range(m)]
    return dataclasses.replace(c, exec=ex, host=host, lat=lat, per=per)


def _plan(b, view):
    b.start(view, np.random.default_rng(1))
    return b.map(view)


def _larger():
    return [costs_for(layered(600, width=20, density=0.1, seed=1), 16), costs_for(in_tree(2, 9), 8, "thesis"),
            costs_for(layered(400, width=40, density=0.2, seed=2), 33)]


# ---- peft: the optimistic cost table per machine, not per processor pair -----------------------------
@settings(max_examples=examples(150), deadline=None)
@given(c=costs())
def test_peft_cost_table_and_plan_match_the_reference(c):
    assert optimistic_cost_table(c) == reference_oct(c)
    view = GraphView(c.n_nodes, c)
    assert _plan(PEFT(), view) == reference_peft(view)


@pytest.mark.parametrize("k", range(3))
def test_peft_matches_the_reference_on_larger_graphs(k):
    c = _larger()[k]
    view = GraphView(c.n_nodes, c)
    assert _plan(PEFT(), view) == reference_peft(view)


# ---- elastic-force: the forces kept sorted across swaps, not re-sorted per swap ----------------------
@settings(max_examples=examples(150), deadline=None)
@given(c=costs(), max_swaps=st.sampled_from([None, 0, 1, 3]))
def test_elastic_force_swaps_as_the_reference(c, max_swaps):
    view = GraphView(c.n_nodes, c)
    assert _plan(ElasticForce(max_swaps=max_swaps), view) == reference_elastic_force(view, max_swaps)


@pytest.mark.full  # scale: the identity on larger graphs
@pytest.mark.parametrize("k", range(3))
def test_elastic_force_matches_the_reference_on_larger_graphs(k):
    c = _larger()[k]
    view = GraphView(c.n_nodes, c)
    new = _plan(ElasticForce(), view)
    assert new == reference_elastic_force(view)
    assert new.info["swaps"] > 10  # the swap loop ran, not only the pre-pass


# ---- linear-clustering: longest paths recomputed for the taken path's ancestors only -----------------
@settings(max_examples=examples(200), deadline=None)
@given(c=costs())
def test_linear_clusters_match_the_reference(c):
    assert linear_clusters(c) == reference_linear_clusters(c)


@pytest.mark.parametrize("k", range(3))
def test_linear_clusters_match_the_reference_on_larger_graphs(k):
    c = _larger()[k]
    new = linear_clusters(c)
    assert new == reference_linear_clusters(c)
    assert len(new) > 20  # many passes, so many incremental updates
