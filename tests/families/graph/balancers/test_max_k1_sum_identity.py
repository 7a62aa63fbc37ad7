"""max_k1_sum's numpy-filtered scan decides exactly as the one-task-at-a-time scan it replaced.

The reference below is the implementation before the speed-up (kept verbatim in its logic), so a change
of any partner, cluster, S_j or tie can be caught: same clusters, same rounds (S_j and partners), for
both variants, on hypothesis graphs (ties included: integer loads and data, null tasks) and on a few
fixed larger ones."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit.families.graph.balancers.max_k1_sum import max_k1_sum, symmetric_comm
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.generate import in_tree, layered

from support.profiles import examples

_R = 9


def reference_max_k1_sum(cu, loads, m, k, variant="load"):
    n = len(loads)
    P = sum(loads) / m
    pk = P / k
    dev = [pk - x for x in loads]
    inertia = [sum(cu[i].values()) + (abs(dev[i]) if variant == "load" else 0.0) for i in range(n)]
    remaining = list(range(n))
    clusters, rounds = [], []
    while len(remaining) > k:
        table = {}
        best = None
        for pos, j in enumerate(remaining):
            row = cu[j]
            rec = []
            ds = 0.0
            for seen, i in enumerate(remaining[pos + 1:] + remaining[:pos]):
                c = row.get(i, 0.0)
                gain = c + abs(ds) - abs(ds + dev[i]) if variant == "load" else c
                rec.append((-round(gain, _R), -round(c, _R), round(inertia[i], _R), seen, i))
                rec.sort()
                del rec[k - 1:]
                ds = sum(dev[r[4]] for r in rec[:k - 2])
            partners = [r[4] for r in rec]
            s = sum(row.get(t, 0.0) for t in partners)
            if variant == "load":
                s -= abs(P - loads[j] - sum(loads[t] for t in partners))
            table[j] = (s, partners)
            if best is None or round(s, _R) > round(best[0], _R):
                best = (s, j, partners)
        rounds.append(table)
        cluster = [best[1]] + best[2]
        clusters.append(cluster)
        taken = set(cluster)
        remaining = [t for t in remaining if t not in taken]
    clusters.append(remaining)
    return clusters, rounds


def _inputs(g, m, capacity=None):
    k = capacity or math.ceil(g.n_tasks / m)
    total = m * k
    loads = [g.weight(i) for i in range(g.n_tasks)] + [0.0] * (total - g.n_tasks)
    return symmetric_comm(g, total), loads, m, k


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 40))
    # small integers make equal gains, equal c and equal inertias common: the tie rules are exercised
    loads = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(0, 3)), max_size=3 * n))
    edges = {(min(a, b), max(a, b)): float(d) for a, b, d in pairs if a != b}
    g = TaskGraph(list(range(n)), loads=[float(x) for x in loads], edges=[(a, b, d) for (a, b), d in edges.items()])
    m = draw(st.integers(1, n + 2))
    return g, m


@settings(max_examples=examples(150), deadline=None)
@given(gm=graphs(), variant=st.sampled_from(["load", "equal"]), pad=st.integers(0, 3))
def test_max_k1_sum_matches_the_one_by_one_scan_on_small_graphs(gm, variant, pad):
    g, m = gm
    cu, loads, m, k = _inputs(g, m, math.ceil(g.n_tasks / m) + pad)
    assert max_k1_sum(cu, loads, m, k, variant) == reference_max_k1_sum(cu, loads, m, k, variant)


@pytest.mark.full  # scale: the identity on larger graphs (the small ones stay in the fast tier)
@pytest.mark.parametrize("graph, m, variant", [
    (layered(250, width=20, density=0.1, seed=1), 8, "load"),      # k = 32: long kept lists, DevSum moves often
    (layered(300, width=20, density=0.1, seed=1), 64, "load"),     # k = 5, null tasks
    (layered(300, width=10, density=0.3, seed=3), 16, "equal"),
    (in_tree(2, 8), 16, "load"),                                    # equal loads and data: ties everywhere
    (in_tree(3, 5), 11, "equal"),
])
def test_max_k1_sum_matches_the_one_by_one_scan_on_larger_graphs(graph, m, variant):
    cu, loads, m, k = _inputs(graph, m)
    assert max_k1_sum(cu, loads, m, k, variant) == reference_max_k1_sum(cu, loads, m, k, variant)
