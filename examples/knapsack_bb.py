"""0/1 knapsack by branch and bound with ``dlbkit.tree``: the best solution found is shared by all.

A task fixes the first i items (taken or left) of a list sorted by value per unit of weight. Its
*bound* is the best solution known to the worker; a task whose optimistic estimate (the greedy
fractional fill of the remaining capacity, Dantzig's bound) cannot beat it is pruned. Every
feasible task is itself a solution, returned as a new bound when it improves the best; improved
bounds reach the other workers through the coordinator. The optimum is checked against dynamic
programming. The summary depends neither on the backend, nor on the number of workers, nor on the
balancer (which tasks get pruned does, so the number of tasks expanded is not printed).

    python examples/knapsack_bb.py                                 # local worker processes
    python examples/knapsack_bb.py --items 40 --balancer random
    python examples/knapsack_bb.py --workers 4 --balancer gdem --topology torus   # dimension exchange
    mpiexec -n 4 python examples/knapsack_bb.py --backend mpi      # rank 0 + 3 worker ranks
"""

from __future__ import annotations

import argparse
import functools
import sys

import dlbkit


def instance(n: int) -> tuple[list[int], list[int], int]:
    """A deterministic, strongly correlated instance (value = weight + 10: hard for bounds)."""
    weights = [20 + (97 * i * i + 31 * i + 7) % 81 for i in range(n)]
    values = [w + 10 for w in weights]
    return weights, values, sum(weights) // 2


def dp(weights: list[int], values: list[int], capacity: int) -> int:
    """The optimum by dynamic programming over capacities."""
    best = [0] * (capacity + 1)
    for w, v in zip(weights, values):
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


def expand(task, bound, *, weights, values, capacity):
    """Children of *task* = (i, room, value, taken); a new bound when this solution is better."""
    i, room, value, taken = task
    new = (value, taken) if value > bound[0] else None
    # optimistic estimate: the remaining items in ratio order, the last one split (Dantzig 1957)
    estimate, r = value, room
    for w, v in zip(weights[i:], values[i:]):
        if w <= r:
            estimate, r = estimate + v, r - w
        else:
            estimate += v * r / w
            break
    if i == len(weights) or estimate <= max(bound[0], value):
        return [], 1, new
    leave = (i + 1, room, value, taken)
    children = [leave]
    if weights[i] <= room:  # last child runs first: the greedy choice finds good bounds early
        children.append((i + 1, room - weights[i], value + values[i], taken | (1 << i)))
    return children, 1, new


def better(a, b) -> bool:
    """Bounds are (value, items taken): a larger value is better."""
    return a[0] > b[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=32, help="items (default 32)")
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", type=int, default=3, help="local worker processes (default 3)")
    ap.add_argument("--balancer", default="steal", help="a migration balancer (dlbkit balancers --kind migration)")
    ap.add_argument("--topology", default="complete",
                    help="which workers are neighbours: complete, chain, ring, mesh, torus, hypercube, star")
    args = ap.parse_args(argv)

    weights, values, capacity = instance(args.items)
    order = sorted(range(args.items), key=lambda k: values[k] / weights[k], reverse=True)
    weights, values = [weights[k] for k in order], [values[k] for k in order]
    f = functools.partial(expand, weights=weights, values=values, capacity=capacity)
    workers = args.workers if args.backend == "local" else None
    tasks, (best, taken) = dlbkit.tree(f, (0, capacity, 0, 0), bound=(0, 0), better=better,
                                       balancer=args.balancer, backend=args.backend, workers=workers, seed=1,
                                       topology=args.topology)
    if args.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:
            return 0  # every rank has the result; rank 0 reports

    chosen = [k for k in range(args.items) if taken >> k & 1]
    weight = sum(weights[k] for k in chosen)
    optimum = dp(weights, values, capacity)
    ok = best == optimum == sum(values[k] for k in chosen) and weight <= capacity and tasks > 0
    print(f"0/1 knapsack: {args.items} items, capacity {capacity}, solved by branch and bound with dlbkit.tree")
    print(f"best value: {best} (dynamic programming: {optimum})")
    print(f"the best solution's items fit and add up to it: {'yes' if ok else 'NO'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
