"""Maximum (k-1) Sum: greedy clustering of communicating tasks into equal-count groups (002 §3.4–3.5)."""

from __future__ import annotations

import bisect
import math
from numbers import Integral

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.workload import MAX_TASKS
from dlbkit.params import Interval, Options
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["MaxK1Sum", "max_k1_sum", "symmetric_comm"]

_R = 9  # decimals kept when comparing sums of floats (ties are ties)
_CHUNK = 64  # tasks whose gains numpy computes at once (doubled while DevSum holds, halved when it moves)


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

    Inherently cubic: each of the m rounds scans, for each of its remaining tasks, all the others in
    sequence (the gain of a task depends on the partners kept before it), Θ(m·n²) = Θ(n³/k) pairs
    for n tasks; :func:`_partners` makes each pair a numpy element, not a Python step.

    Returns (clusters, rounds): clusters as lists of task indices in formation order; rounds[r] maps
    every task j remaining in round r to (S_j, partners)."""
    n = len(loads)
    P = sum(loads) / m
    pk = P / k
    dev = [pk - x for x in loads]
    inertia = [sum(cu[i].values()) + (abs(dev[i]) if variant == "load" else 0.0) for i in range(n)]
    rin = [round(x, _R) for x in inertia]
    dev_np = np.array(dev, dtype=float)
    remaining = list(range(n))
    clusters, rounds = [], []
    while len(remaining) > k:
        table = {}
        best = None
        where = {t: q for q, t in enumerate(remaining)}
        dev_rem = dev_np[remaining]
        size = len(remaining)
        for pos, j in enumerate(remaining):
            row = cu[j]
            order = remaining[pos + 1:] + remaining[:pos]
            dev_o = np.concatenate((dev_rem[pos + 1:], dev_rem[:pos]))
            c_o = np.zeros(size - 1)
            for t, c in row.items():
                q = where.get(t)
                if q is not None and q != pos:
                    c_o[(q - pos - 1) % size] = c
            partners = _partners(row, order, dev_o, c_o, dev, rin, k, variant == "load")
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


def _partners(row: dict, order: list, dev_o, c_o, dev: list, rin: list, k: int, load: bool) -> list:
    """The k−1 partners of one task j (row = cu[j]): the tasks of *order* (the cyclic scan) kept by
    :func:`max_k1_sum`'s rule, best first. dev_o and c_o are dev and c_j· along *order* (numpy).

    The kept list ``rec`` holds the k−1 smallest keys (−round(G), −round(c), round(I), seen, i) seen
    so far (keys are unique: *seen* differs), and DevSum changes only when a task enters its first
    k−2. So a task whose G is, beyond any rounding, below the last kept one's cannot enter (its
    *seen* is larger than every kept one's): numpy computes G for a run of tasks under the current
    DevSum and only the tasks that may enter go through the exact step, the same float operations
    as one by one (rounding of G to _R decimals, ties and the order of the DevSum sum included)."""
    kk, top = k - 1, k - 2
    if kk <= 0:
        return []
    rec: list[tuple] = []
    rec_dev: list[float] = []  # dev of rec's tasks, in rec's order: DevSum is a C-level sum of a slice
    ds = 0.0

    def step(seen: int) -> bool:
        """The exact scan step of task order[seen]; True when DevSum changed."""
        nonlocal ds
        i = order[seen]
        c = row.get(i, 0.0)
        gain = c + abs(ds) - abs(ds + dev[i]) if load else c
        key = (-round(gain, _R), -round(c, _R), rin[i], seen, i)
        if len(rec) == kk:
            if key > rec[-1]:
                return False
            rec.pop()
            rec_dev.pop()
        at = bisect.bisect(rec, key)
        rec.insert(at, key)
        rec_dev.insert(at, dev[i])
        if at < top:
            ds = sum(rec_dev[:top])  # the same values in the same order as one by one: the same float
            return load
        return False

    n_o = len(order)
    s = 0
    while s < n_o and len(rec) < kk:
        step(s)
        s += 1
    chunk = _CHUNK
    while s < n_o:
        b = min(n_o, s + chunk)
        g = (c_o[s:b] + abs(ds)) - np.abs(ds + dev_o[s:b]) if load else c_o[s:b]
        last = -rec[-1][0]  # round(G) of the last kept task
        # round(x, 9) is within 0.5e-9 (plus an ulp) of x: a margin of 1e-8 plus 1e-12 relative covers both
        maybe = np.flatnonzero(g >= last - (1e-8 + 1e-12 * (abs(last) + np.abs(g))))
        moved = False
        for q in maybe.tolist():
            if step(s + q):
                s += q + 1
                moved = True
                break
        if moved:  # G depends on DevSum: recompute from the next task, in a shorter run
            chunk = max(_CHUNK, chunk // 2)
        else:
            s = b
            chunk = min(chunk * 2, 1 << 16)
    return [r[4] for r in rec]


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
    the tasks' loads (a cost table's row mean). Cubic by its definition: m rounds, each scanning
    every pair of the remaining tasks in sequence, Θ(m·n²) = Θ(n³/k) pair steps
    (:func:`max_k1_sum`; BENCHMARKS.md, "Mapping balancers at scale").

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
