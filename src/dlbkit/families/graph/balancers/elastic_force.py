"""Elastic Force: pairwise swaps that lower the total inter-node communication (002 §3.1–3.3)."""

from __future__ import annotations

import bisect
import math
from numbers import Integral

from dlbkit.params import Interval
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers.max_k1_sum import symmetric_comm

__all__ = ["ElasticForce"]

_EPS = 1e-9  # a swap must lower the cut by more than this (sums of floats)


@register
class ElasticForce(MappingBalancer):
    """Elastic Force: start from an equal split, then keep swapping the pair of tasks that the
    largest "force" pulls apart, while a swap lowers the system energy (the communication cut).

    Source: 002 (Sinclair 1993) §3.2–3.3, steps 1–11. Equal count: the graph is padded with null
    tasks to m·k (k = ⌈n/m⌉) and split into consecutive blocks (step 1). Pre-pass (step 2): a task
    that talks to exactly one other task j (one non-zero in its row of Cu) swaps with the task on
    j's node, other than j, most attracted to its own node. Then (steps 3–10): force
    F[i][y] = communication between task i and the tasks on node y ≠ its own; in decreasing F
    (ties: smaller inertia I(i) = Σ cu, then index), for the pair (i, y) try the tasks k on y by
    increasing attraction P(i,k) = cu_ik, then increasing inertia; the first swap with gain
    S(i,x,k,y) = M(i,x,y) + M(k,y,x) − 2 cu_ik > 0 is made (M summed over tasks, the note's erratum
    to §3.2.9); stop when no pair gains (step 11). Communication is c_ij + c_ji; loads are ignored
    (the thesis assumes equal loads). *max_swaps* bounds the work (None: until no swap gains).

    Helps: minimises the cut (002 §2.5 (c)) for equal-load tasks; a refiner.
    Backfires: ignores loads, speeds and precedence ("not a realistic algorithm ... for large
    numbers of tasks", §3.3); local minimum of a greedy swap search. Each round walks the (task,
    node) forces in order (kept sorted across swaps: a swap moves only its neighbours' keys) and
    tries partners on the node, and swaps continue while one gains: super-linear by its definition
    (BENCHMARKS.md, "Mapping balancers at scale"); *max_swaps* bounds it.
    """

    name = "elastic-force"
    source = "002 §3.1–3.3 (Sinclair 1993)"
    taxonomy = Taxonomy("static (before the run)", "central", "global: communication volumes",
                        "every task placed once (k per node), then pairwise swaps", "largest force, least-bound partner")
    _parameter_constraints = {"max_swaps": [None, Interval(Integral, 0, None)]}

    def __init__(self, *, max_swaps: int | None = None):
        self.max_swaps = max_swaps

    def map(self, view) -> Plan:
        g = view.costs.graph
        m = view.n_nodes
        k = math.ceil(g.n_tasks / m)
        n = m * k
        cu = symmetric_comm(g, n)
        node = [t // k for t in range(n)]
        members = [set(range(y * k, (y + 1) * k)) for y in range(m)]
        ns = [[0.0] * m for _ in range(n)]  # ns[i][y] = Σ cu[i][t] over t on y
        for i in range(n):
            for t, c in cu[i].items():
                ns[i][node[t]] += c
        inertia = [sum(cu[i].values()) for i in range(n)]

        def swap(i: int, t: int) -> None:
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

        def gain(i: int, t: int) -> float:
            x, y = node[i], node[t]
            return ns[i][y] - ns[i][x] + ns[t][x] - ns[t][y] - 2.0 * cu[i].get(t, 0.0)

        swaps = 0
        for i in range(g.n_tasks):  # step 2, the pre-pass
            if len(cu[i]) == 1:
                j = next(iter(cu[i]))
                x, y = node[i], node[j]
                if x != y:
                    cands = [t for t in members[y] if t != j]
                    if cands:
                        t = max(cands, key=lambda t: (ns[t][x] - cu[t].get(i, 0.0), -t))
                        swap(i, t)
                        swaps += 1
        # the (task, node) forces in the order a round tries them, kept sorted across swaps: a swap
        # changes the forces of i's and t's neighbours on x and y, and which node is i's and t's own, so
        # only those keys move (re-sorting all n·m of them every round was 40 s at 2 000 × 256). A key is
        # unique per (i, y), so the order is the one sorted() gave.
        def key(i: int, y: int):
            f = ns[i][y]
            return (-f, inertia[i], i, y) if y != node[i] and f > 0 else None

        keys = {}
        for i in range(n):
            for y in range(m):
                kk = key(i, y)
                if kk is not None:
                    keys[i, y] = kk
        order = sorted(keys.values())

        def swap_and_resort(i: int, t: int) -> None:
            x, y = node[i], node[t]
            touched = {i, t, *cu[i], *cu[t]}
            for u in touched:
                for z in (x, y):
                    old = keys.pop((u, z), None)
                    if old is not None:
                        del order[bisect.bisect_left(order, old)]
            swap(i, t)
            for u in touched:
                for z in (x, y):
                    kk = key(u, z)
                    if kk is not None:
                        keys[u, z] = kk
                        bisect.insort(order, kk)

        while self.max_swaps is None or swaps < self.max_swaps:
            done = False
            for _, _, i, y in order:
                # a pair whose node holds no gaining partner is passed without sorting its members
                # (gain has no side effect: the first gaining one in the sorted order is the same)
                # gain(i, t) inlined, left to right as there (a = its first difference): the same floats
                x, nsi, cui = node[i], ns[i], cu[i]
                a = nsi[y] - nsi[x]
                if not any(a + ns[t][x] - ns[t][y] - 2.0 * cui.get(t, 0.0) > _EPS for t in members[y]):
                    continue
                for t in sorted(members[y], key=lambda t: (cu[i].get(t, 0.0), inertia[t], t)):
                    if gain(i, t) > _EPS:
                        swap_and_resort(i, t)  # the loop over order stops here: it is not read again
                        swaps += 1
                        done = True
                        break
                if done:
                    break
            if not done:
                break
        cut = sum(c for i in range(n) for t, c in cu[i].items() if node[i] != node[t]) / 2.0
        return Plan(tuple(node[:g.n_tasks]), None, {"swaps": swaps, "cut": cut, "k": k})
