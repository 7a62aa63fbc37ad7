"""A 2-D Jacobi heat-equation stencil, decomposed by rows and balanced by DLAH with ``dlbkit`` SPMD.

A plate whose top edge is held hot and whose other edges are cold relaxes towards steady state:
each iteration every interior point becomes the mean of its four neighbours. The grid's rows are
split into contiguous blocks, one per worker; each iteration the workers exchange one boundary row
with each neighbour. One worker is emulated four times slower (speed 0.25), so Osman's DLAH
balancer moves rows from it to its neighbours. The final field is checked against the serial loop
``u[1:-1] = step(u)`` (it is the same, bit for bit) and summarised; the summary does not depend on
the backend, the number of workers or timings.

    python examples/jacobi_heat.py                          # 4 local worker processes
    python examples/jacobi_heat.py --plot plots             # also plots/jacobi_loop_time.png, jacobi_rows.png
    mpiexec -n 3 python examples/jacobi_heat.py --backend mpi   # rank 0 + 2 worker ranks
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dlbkit import run_spmd

ROWS, COLS = 514, 256  # grid points, boundary rows and columns included
ITERATIONS = 300
WINDOW = 20  # iterations per measurement window (DLAH decides after each)
SLOW = 0.25  # emulated speed of the slow worker


def step(u: np.ndarray) -> np.ndarray:
    """One Jacobi sweep of the rows u[1:-1] (u carries one halo row above and below); columns 0 and
    -1 are fixed boundary values."""
    new = u[1:-1].copy()
    new[:, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return new


def initial() -> np.ndarray:
    u = np.zeros((ROWS, COLS))
    u[0, :] = 100.0  # the hot top edge; the other edges stay at 0
    return u


def plot(result, outdir: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    figs = [plt.figure(figsize=(7, 3.5)) for _ in range(2)]
    axes = [f.add_subplot() for f in figs]
    result.plot_loads(axes)
    axes[0].set_xlabel("iteration")
    axes[0].set_title("busy time per iteration (emulated slow-down included)")
    axes[1].set_title("rows owned by each worker")
    for f, name in zip(figs, ("jacobi_loop_time.png", "jacobi_rows.png")):
        f.tight_layout()
        f.savefig(outdir / name, dpi=100)
        plt.close(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", type=int, default=4, help="local worker processes (default 4)")
    ap.add_argument("--balancer", default="dlah", help="a repartition balancer (dlbkit balancers --kind repartition)")
    ap.add_argument("--plot", type=Path, metavar="DIR", help="write PNG plots of loop time and rows per worker")
    args = ap.parse_args(argv)

    if args.backend == "mpi":
        from mpi4py import MPI
        workers, rank = MPI.COMM_WORLD.Get_size() - 1, MPI.COMM_WORLD.Get_rank()
    else:
        workers, rank = args.workers, 0
    slow = min(2, workers - 1)  # the third worker (the last one when there are fewer)
    speeds = [SLOW if w == slow else 1.0 for w in range(workers)]
    result = run_spmd(step, initial(), iterations=ITERATIONS, balancer=args.balancer, backend=args.backend,
                      workers=workers if args.backend == "local" else None, window=WINDOW, emulate=speeds)
    if rank != 0:
        return 0  # every rank has the result; rank 0 reports

    serial = initial()
    for _ in range(ITERATIONS):
        serial[1:-1] = step(serial)
    diff = float(np.abs(result.domain - serial).max())
    first = result.trace.intervals()
    start_rows = int(first["count"][(first["node"] == slow) & (first["round"] == 0)][0])
    end_rows = result.rows[slow]
    print(f"Jacobi heat equation on a {ROWS}x{COLS} grid ({ROWS - 2} interior rows decomposed by row), "
          f"{ITERATIONS} iterations, balancer {args.balancer}, one worker at speed {SLOW}")
    print(f"final field equals the serial run (max |difference| < 1e-12): {'yes' if diff < 1e-12 else 'NO'}")
    print(f"the slow worker ends with fewer rows than it started with: {'yes' if end_rows < start_rows else 'no'}")
    print(f"mean temperature: {serial[1:-1, 1:-1].mean():.6f}; 8 rows below the hot edge, mid-width: "
          f"{serial[8, COLS // 2]:.6f}")
    if args.plot is not None:
        plot(result, args.plot)
    return 0 if diff < 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
