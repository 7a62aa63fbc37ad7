"""Linear clustering (Kim & Browne 1988) with modulo allocation: a chain-clustering baseline (002 §3.5.3)."""

from __future__ import annotations

import heapq

from dlbkit.families.graph.model.costs import GraphCosts, level_weights
from dlbkit.params import Options
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["LinearClustering", "linear_clusters", "ALLOCATIONS"]

#: how clusters go to processors: "modulo" (cluster k on processor k mod m, in the order they were
#: found: the thesis's baselines, "+ modulo allocation", 002 §3.5.3 Table 1) or "load" (largest
#: total execution time first, each to the processor of least total so far: LPT, ours)
ALLOCATIONS = ("modulo", "load")


def linear_clusters(costs: GraphCosts) -> list[list[int]]:
    """Kim & Browne's linear clustering: repeatedly take the longest path of the graph of the tasks
    not yet clustered (a path's length = its tasks' mean execution times + the mean transfer times of
    its edges: the upward rank's weights, :func:`~dlbkit.families.graph.model.costs.level_weights`, so under
    the thesis model the loads and the data at distance 1) as the next cluster, until none is left.
    Ties: the path
    whose first task has the lower index, then the lower successor. Clusters in the order found,
    each in path order."""
    g = costs.graph
    n = g.n_tasks
    w, lat_m, per_m = level_weights(costs)
    left = [True] * n
    clusters = []
    # longest path starting at each unclustered task, within the unclustered tasks, kept from one
    # cluster to the next: taking a path changes only the lengths of its tasks' ancestors, so only
    # those are recomputed, in reverse topological order (one pass over the whole graph per cluster
    # was 4 s at 10 000 tasks). A task's length and successor are the same function of its successors'
    # as in a full pass, so they are the values a full pass would give.
    length = [0.0] * n
    nxt = [-1] * n

    def longest(i: int) -> None:
        best, arg = 0.0, -1
        for j, d in g.succs[i]:
            if left[j]:
                v = length[j] + (lat_m + d * per_m if (d or lat_m) else 0.0)
                if arg < 0 or v > best or (v == best and j < arg):
                    best, arg = v, j
        length[i] = w[i] + best
        nxt[i] = arg

    rank = [0] * n  # position in reverse topological order: successors before predecessors
    for r, i in enumerate(reversed(g.topo)):
        rank[i] = r
        longest(i)
    # the head is the unclustered task of greatest (length, -index): a heap of (-length, index), an
    # entry stale once its task is clustered or its length moved (a fresh one was pushed then)
    heads = [(-length[i], i) for i in range(n)]
    heapq.heapify(heads)
    while True:
        while heads and not (left[heads[0][1]] and heads[0][0] == -length[heads[0][1]]):
            heapq.heappop(heads)
        if not heads:
            return clusters
        head = heads[0][1]
        path = []
        while head >= 0:
            path.append(head)
            left[head] = False
            head = nxt[head]
        clusters.append(path)
        dirty = [(rank[q], q) for i in path for q, _ in g.preds[i] if left[q]]
        heapq.heapify(dirty)
        done = -1
        while dirty:
            r, i = heapq.heappop(dirty)
            if r == done:
                continue
            done = r
            old = length[i]
            longest(i)
            if length[i] != old:
                heapq.heappush(heads, (-length[i], i))
                for q, _ in g.preds[i]:
                    if left[q]:
                        heapq.heappush(dirty, (rank[q], q))


@register
class LinearClustering(MappingBalancer):
    """Linear clustering, then clusters onto processors: the chain-clustering baseline 002 compares
    Max (k-1) Sum against (Table 1: Sarkar's and Darte's linear-cluster heuristics "+ modulo
    allocation"; note §6, R11).

    Source: Kim & Browne 1988, "A general approach to mapping of parallel computation upon
    multiprocessor architectures", Proc. ICPP vol. 3 (linear clustering: the critical path of the
    unclustered graph, computation and communication counted, becomes one cluster, repeated); 002
    §3.5.3 (the modulo allocation of clusters). Which chains are "critical" is measured with the mean
    costs (:func:`linear_clusters`); the order is left to the evaluator's list rule.

    Parameters: *allocation* (:data:`ALLOCATIONS`: ``"modulo"``, the thesis's; ``"load"``, LPT).

    Helps: graphs of communicating chains (002's computer-vision graph): a chain's messages stay on
    one processor. Backfires: with more processors than long chains the rest idle, and modulo
    allocation ignores loads and speeds (002 Table 1: the baselines saturate at 260 from 6 nodes on).
    """

    name = "linear-clustering"
    source = "Kim & Browne 1988; 002 §3.5.3 (modulo allocation)"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its mean costs",
                        "every task placed once, with its chain", "longest unclustered path is a cluster; "
                        "clusters modulo m (or largest first to the least loaded)")
    _parameter_constraints = {"allocation": [Options(*ALLOCATIONS)]}

    def __init__(self, *, allocation: str = "modulo"):
        self.allocation = allocation

    def map(self, view) -> Plan:
        costs = view.costs
        m = view.n_nodes
        clusters = linear_clusters(costs)
        a = [0] * costs.graph.n_tasks
        if self.allocation == "modulo":
            for k, cl in enumerate(clusters):
                for i in cl:
                    a[i] = k % m
        else:
            total = [0.0] * m
            mean = costs.mean_exec()
            for cl in sorted(clusters, key=lambda cl: -sum(mean[i] for i in cl)):
                p = min(range(m), key=lambda q: (total[q], q))
                for i in cl:
                    a[i] = p
                    total[p] += costs.exec[i][p]
        return Plan(tuple(a), None, {"clusters": len(clusters)})
