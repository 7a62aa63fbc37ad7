"""Maximum (k-1) Sum: greedy clustering of communicating tasks into equal-count groups (002 §3.4–3.5)."""

from __future__ import annotations

import math
from numbers import Integral

from ...errors import ConfigError
from ...model.graph import MAX_TASKS
from ...params import Interval, Options
from ..base import MappingBalancer, Plan, Taxonomy
from ..registry import register

__all__ = ["MaxK1Sum", "max_k1_sum", "symmetric_comm"]

_R = 9  # decimals kept when comparing sums of floats (ties are ties)


def symmetric_comm(graph, n_total: int) -> list[dict[int, float]]:
    """Cu as a row per task: cu[i][j] = c_ij + c_ji (002 §3.4), null tasks (indices ≥ n) empty."""
    cu: list[dict[int, float]] = [dict() for _ in range(n_total)]
    for i in range(graph.n_tasks):
        for j, d in graph.succs[i]:
            cu[i][j] = cu[i].get(j, 0.0) + d
            cu[j][i] = cu[j].get(i, 0.0) + d
    return cu


def max_k1_sum(cu: list[dict[int, float]], loads: list[float], m: int, k: int, variant: str = "load"):
    """The clusters of 002 §3.5.1 as the worked example §3.5.2 computes them (the note's §5.2 reading):

    * P = Σ l / m and P/k once, from all tasks (null tasks have load 0); dev_i = P/k − l_i;
    * for each remaining task j, in order, scan the others cyclically (after j, then before j) and
      keep the k−1 best by gain G_i = c_ji + |DevSum| − |DevSum + dev_i| ("load") or G_i = c_ji
      ("equal", §3.4), DevSum being the deviations of the best k−2 kept so far; ties: larger c,
      then smaller inertia I = Σ cu + |dev| (note (ii)), then first seen;
    * S_j = Σ c_j,partners − |P − l_j − Σ l_partners| ("load") or Σ c_j,partners ("equal");
    * the task of largest S_j (first on ties) and its partners form the next cluster; repeat until k
      tasks remain, which form the last.

    Returns (clusters, rounds): clusters as lists of task indices in formation order; rounds[r] maps
    every task j remaining in round r to (S_j, partners)."""
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
            rec: list[tuple] = []
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


@register
class MaxK1Sum(MappingBalancer):
    """Maximum (k-1) Sum: m clusters of exactly k tasks, each chosen greedily to keep the most
    communication on one node while staying near the ideal per-node load.

    Source: 002 (Sinclair 1993) §3.4 (equal loads: the task whose k−1 largest communications sum
    highest, with its k−1 partners; partner ties → smallest inertia) and §3.5.1 (different loads: the
    gain G_i and score S_j with the ideal load P = Σ l / m), as the worked examples §3.4.1 and §3.5.2
    compute them; the reading of the damaged steps is the note's §5.2 (unified gain; DevSum over the
    best k−2; cyclic scan). k = ⌈n/m⌉, or *capacity* (k' ≥ n/m, §3.5.3): **null tasks** (no load, no
    communication) pad the graph to m·k tasks. Cluster r goes to processor r. The order is left to
    the evaluator's list rule. Communication is the graph's data both ways (c_ij + c_ji); loads are
    the tasks' loads (a cost table's row mean). O(m·n²·log k).

    Helps: throughput (002 §2.5 (c): total communication plus balance), clusters of chatty tasks.
    Backfires: chain-rich graphs (it ignores precedence, §3.5.3); exactly k tasks per node unless
    padded; speeds are ignored (equal count, not equal time).
    """

    name = "max-k1-sum"
    source = "002 §3.4–3.5 (Sinclair 1993)"
    taxonomy = Taxonomy("static (before the run)", "central", "global: loads and communication volumes",
                        "every task placed once (k per node)", "greedy maximum (k-1) sum of communication")
    _parameter_constraints = {"variant": [Options("load", "equal")], "capacity": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, variant: str = "load", capacity: int | None = None):
        self.variant = variant
        self.capacity = capacity

    def check_graph(self, n_tasks: int, n_processors: int) -> None:
        if self.capacity is None:
            return
        if self.capacity * n_processors < n_tasks:
            raise ConfigError(self.param_field("capacity"), self.capacity,
                              f"at least n/m = {n_tasks}/{n_processors} (every task needs a slot)")
        if self.capacity * n_processors > MAX_TASKS:  # the padded graph is a graph of m·k tasks
            raise ConfigError(self.param_field("capacity"), self.capacity,
                              f"at most {MAX_TASKS // n_processors:,} on {n_processors} processors (m × capacity "
                              f"tasks with the null ones: at most {MAX_TASKS:,}, dlbkit's task-graph limit)")

    def map(self, view) -> Plan:
        g = view.costs.graph
        m = view.n_nodes
        self.check_graph(g.n_tasks, m)
        k = self.capacity if self.capacity is not None else math.ceil(g.n_tasks / m)
        total = m * k
        loads = [g.weight(i) for i in range(g.n_tasks)] + [0.0] * (total - g.n_tasks)
        clusters, rounds = max_k1_sum(symmetric_comm(g, total), loads, m, k, self.variant)
        a = [0] * g.n_tasks
        for r, cl in enumerate(clusters):
            for t in cl:
                if t < g.n_tasks:
                    a[t] = r
        return Plan(tuple(a), None, {"k": k, "null_tasks": total - g.n_tasks,
                                     "clusters": [[g.ids[t] if t < g.n_tasks else None for t in cl] for cl in clusters]})
