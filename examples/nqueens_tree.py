"""Count the solutions of the N-Queens puzzle with ``dlbkit.tree`` (divide and conquer).

A task is a partial board: the columns of the queens placed in the first rows. Expanding it yields
one child per safe square of the next row; a full board is a solution and contributes 1. The search
tree is very uneven (most branches die early), so the workers' shares are decided at run time by a
migration balancer (work stealing by default). The count is checked against a serial search; the
summary depends neither on the backend, nor on the number of workers, nor on the balancer.

    python examples/nqueens_tree.py                                # local worker processes
    python examples/nqueens_tree.py --n 9 --balancer random --workers 2
    mpiexec -n 4 python examples/nqueens_tree.py --backend mpi     # rank 0 + 3 worker ranks
"""

from __future__ import annotations

import argparse
import functools
import sys

import dlbkit


def expand(board: tuple[int, ...], n: int) -> tuple[list[tuple[int, ...]], int | None]:
    """Children of a partial *board* of an n x n puzzle, and 1 if the board is a solution."""
    row = len(board)
    if row == n:
        return [], 1
    safe = [c for c in range(n) if all(c != q and abs(c - q) != row - r for r, q in enumerate(board))]
    return [board + (c,) for c in safe], None


def serial(n: int) -> tuple[int, int]:
    """(solutions, tasks expanded) of the same search, depth-first in one process."""
    stack, solutions, tasks = [()], 0, 0
    while stack:
        children, value = expand(stack.pop(), n)
        tasks += 1
        solutions += value or 0
        stack.extend(children)
    return solutions, tasks


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8, help="board size (default 8)")
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", type=int, default=3, help="local worker processes (default 3)")
    ap.add_argument("--balancer", default="steal", help="a migration balancer (dlbkit balancers --kind migration)")
    args = ap.parse_args(argv)

    workers = args.workers if args.backend == "local" else None
    run = dlbkit.run_tree(functools.partial(expand, n=args.n), (), balancer=args.balancer, backend=args.backend,
                          workers=workers, seed=1)
    if args.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:
            return 0  # every rank has the result; rank 0 reports

    solutions, tasks = serial(args.n)
    same = run.value == solutions and run.tasks == tasks
    print(f"N-Queens, N = {args.n}: queens placed row by row, solutions counted with dlbkit.tree")
    print(f"solutions: {run.value} (serial search: {solutions})")
    print(f"tasks expanded: {run.tasks}, each exactly once (serial search: {tasks})")
    print(f"identical to the serial search: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
