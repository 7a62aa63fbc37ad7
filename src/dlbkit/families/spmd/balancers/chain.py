"""The optimal contiguous partition of a 1-D domain over a line (or ring) of nodes: the reference
that no neighbour-only diffusion can beat."""

from __future__ import annotations

import heapq
import math
from numbers import Integral, Real
from typing import Sequence

from dlbkit.errors import ConfigError
from dlbkit.params import Interval
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import register
from dlbkit.families.spmd.balancers.hnow_cost import NodeCost, node_cost, solve_level

__all__ = ["optimal_chain_partition", "partition_transfers", "OptimalChain"]


def optimal_chain_partition(costs: Sequence[NodeCost], total: int | None = None, *,
                            min_points: int = 1) -> tuple[list[int], float]:
    """Whole-DP counts (one block per node, in node order) minimising the largest predicted loop time.

    Node k's time with w DP is ``costs[k].predict(w − costs[k].points)``, monotone piecewise linear
    (eq 7.9). *total* defaults to the DP held now; every node keeps at least *min_points*.
    Returns (counts, bottleneck time).

    Exact, in O(P log P): the real relaxation Σ_k max(min_points, w_k(T)) = total is solved exactly
    over the kinks (:func:`~.hnow_cost.solve_level`) and gives a lower bound T₀ on the optimum T*;
    w_k = max(min_points, ⌊w_k(T₀)⌋) is then below an optimal allocation, and the at most P missing
    DP are added one at a time to the node whose time after one more DP is smallest (a heap). That
    greedy step never exceeds T*, because while DP are missing some node is below ⌊w_k(T*)⌋. The
    answer is exact up to float rounding of the times (no search tolerance). The contiguous
    partition of a chain (000 §4.6 proves NP-completeness only for unrelated indivisible tasks;
    notes/000 §3.5) is therefore polynomial.
    """
    n = len(costs)
    total = int(round(sum(c.points for c in costs))) if total is None else int(total)
    if n == 0 or n * min_points > total:
        raise ConfigError("total DP of the chain", total, f"at least {min_points} per node ({n} nodes)")

    def absolute(k: int, w: float) -> float:
        return costs[k].predict(w - costs[k].points)

    def share(k: int, t: float) -> float:
        return max(min_points, costs[k].points_for(t) + costs[k].points)

    kinks = [absolute(k, min_points) for k in range(n)] + [t for c in costs for t in c.kinks()]
    t0 = solve_level(lambda t: sum(share(k, t) for k in range(n)), kinks, total)
    # floors taken a hair low: one DP too few is repaired by the greedy step, one too many would not be
    w = [max(min_points, math.floor(share(k, t0) - 1e-9 * max(1.0, abs(share(k, t0))))) for k in range(n)]
    heap = [(absolute(k, w[k] + 1), k) for k in range(n)]
    heapq.heapify(heap)
    for _ in range(total - sum(w)):
        _, k = heapq.heappop(heap)
        w[k] += 1
        heapq.heappush(heap, (absolute(k, w[k] + 1), k))
    return w, max(absolute(k, w[k]) for k in range(n))


def partition_transfers(current: Sequence[int], target: Sequence[int], *, ring: bool = False) -> list[Transfer]:
    """Neighbour-to-neighbour transfers turning block sizes *current* into *target* (same total).

    On a line, the flow across the edge k–(k+1) is the difference of the prefix sums. On a *ring* the
    flows may all be shifted by one constant (the flow on the edge (P−1)–0); the median shift moves
    the fewest DP. The transfers come in an order in which they can be made one after another with
    every node keeping at least one DP (a node forwards only what it has already received); O(P²).
    """
    n = len(current)
    if sum(current) != sum(target) or len(target) != n:
        raise ConfigError("target partition", list(target), f"{n} block sizes summing to {sum(current)}")
    flow, acc = [], 0
    for k in range(n - 1):
        acc += current[k] - target[k]
        flow.append(acc)  # DP from k to k + 1 (negative: from k + 1 to k)
    edges = [(k, k + 1) for k in range(n - 1)]
    if ring and n > 2:
        theta = sorted(flow + [0])[n // 2]
        flow = [f - theta for f in flow] + [-theta]  # the last entry: from n − 1 to 0
        edges.append((n - 1, 0))
    pending = [(a, b, f) if f > 0 else (b, a, -f) for (a, b), f in zip(edges, flow) if f != 0]
    held, out = list(current), []
    while pending:
        # a node that has received all it forwards can send now (flows on a path have no cycle)
        t = next((t for t in pending if held[t[0]] - t[2] >= 1), pending[0])
        pending.remove(t)
        held[t[0]] -= t[2]
        held[t[1]] += t[2]
        out.append(Transfer(*t))
    return out


@register
class OptimalChain(RepartitionBalancer):
    """Optimal chain partition: a central rule that moves the domain, in one step, to the contiguous
    partition minimising the largest predicted loop time (eq 7.9 cost model, as DLAH uses).

    Source: the chains-on-chains / divisible-load view of 000's problem (Osman 2003 §4.3–4.6;
    notes/000 §3.5, §10: the reference baseline "no diffusion can beat"); exact method in
    :func:`optimal_chain_partition`. It reads every node (``central = True``; engines pass node = -1)
    and returns neighbour-to-neighbour transfers (:func:`partition_transfers`), so blocks stay
    contiguous. With *rel_tol* > 0 it acts only when the bottleneck now exceeds the optimum by more
    than *rel_tol* of it (with 0 it always moves to the computed optimum, so float ties between equally
    good partitions, or measurement noise, may move a few DP every window). Helps: balance in one step, the least bottleneck any partition can reach under
    the model. Backfires: needs global information each window (not scalable, 000 §4.6's objection),
    moves DP across many hops at once, and trusts the model as much as DLAH does.
    """

    name = "optimal-chain"
    source = "Osman 2003 (000) §4.3–4.6 problem; notes/000_osman.md §3.5, §10 (optimal reference)"
    taxonomy = Taxonomy("periodic (every measurement window)", "central", "global loop times and HNOW parameters",
                        "optimal contiguous partition (min max predicted loop time)",
                        "contiguous DP shifted between neighbours")
    central = True
    _parameter_constraints = {"min_points": [Interval(Integral, 1, None)],
                              "rel_tol": [Interval(Real, 0, None)]}

    def __init__(self, *, min_points: int = 1, rel_tol: float = 0.0):
        self.min_points = min_points  # every node keeps a block: the pipeline needs all nodes
        self.rel_tol = rel_tol

    def decide(self, view, node: int = -1) -> list[Transfer]:
        costs = [node_cost(view, k) for k in range(view.n_nodes)]
        if view.n_nodes < 2 or sum(view.points) < view.n_nodes * self.min_points:
            return []
        target, best = optimal_chain_partition(costs, min_points=self.min_points)
        if self.rel_tol > 0 and max(view.loop_time) <= best * (1 + self.rel_tol):
            return []
        return partition_transfers(list(view.points), target, ring=view.layout == "ring")
