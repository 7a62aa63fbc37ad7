"""A Monte-Carlo estimate of pi in seeded batches of uneven size, computed with ``dlbkit.map``.

Batch b draws ``size(b)`` points uniformly in the unit square from its own generator, seeded with
(SEED, b), and counts those inside the quarter circle. Each batch's count depends only on its seed,
never on which worker drew it or when, so the estimate is the same on any backend, with any number
of workers and any balancer, and equals a serial run's exactly (checked). Batch sizes vary tenfold:
the uneven items a dynamic balancer evens out.

    python examples/montecarlo_batches.py                        # local worker processes
    python examples/montecarlo_batches.py --balancer fac2 --workers 2
    mpiexec -n 4 python examples/montecarlo_batches.py --backend mpi
"""

from __future__ import annotations

import argparse
import math
import random
import sys

import dlbkit

SEED = 2024
BATCHES = 64
BASE = 4000  # points per batch: BASE * (1 + (7 * b) % 10), from 4,000 to 40,000


def size(b: int) -> int:
    return BASE * (1 + (7 * b) % 10)


def batch(b: int) -> tuple[int, int]:
    """(points inside the quarter circle, points drawn) of batch *b*."""
    # random.Random(int).random() is reproducible across Python versions (the random module's
    # documented guarantee), so the counts, and this example's output, are too
    draw = random.Random(SEED * 1_000_003 + b).random
    n = size(b)
    inside = 0
    for _ in range(n):
        x = draw()
        y = draw()
        if x * x + y * y <= 1.0:
            inside += 1
    return inside, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", type=int, default=4, help="local worker processes (default 4)")
    ap.add_argument("--balancer", default="awf-c", help="a chunking balancer (dlbkit balancers --kind chunking)")
    args = ap.parse_args(argv)

    workers = args.workers if args.backend == "local" else None
    counts = dlbkit.map(batch, range(BATCHES), balancer=args.balancer, backend=args.backend, workers=workers)
    if args.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:
            return 0  # every rank has the counts; rank 0 reports

    serial = [batch(b) for b in range(BATCHES)]
    same = counts == serial
    inside = sum(c for c, _ in counts)
    total = sum(n for _, n in counts)
    pi = 4.0 * inside / total
    stderr = 4.0 * math.sqrt((inside / total) * (1 - inside / total) / total)
    sizes = [size(b) for b in range(BATCHES)]
    print(f"Monte-Carlo estimate of pi: {BATCHES} seeded batches of {min(sizes):,} to {max(sizes):,} points "
          f"({total:,} points), computed with dlbkit.map")
    print(f"identical to a serial run: {'yes' if same else 'NO'}")
    print(f"points inside the quarter circle: {inside:,}")
    print(f"pi ~ {pi:.6f} +- {stderr:.6f} (one standard error); |pi - estimate| = {abs(math.pi - pi):.6f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
