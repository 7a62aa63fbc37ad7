"""Rows of a Mandelbrot image computed in parallel with ``dlbkit.map``.

Rows that cross the set cost up to a hundred times more than rows outside it (every point inside
runs to the iteration limit), so equal blocks of rows leave most workers idle: a classic case for
dynamic chunking. The image is checked against a serial computation and summarised; the summary
does not depend on the backend, the number of workers or the balancer (it is the same image).

    python examples/mandelbrot_rows.py                          # local worker processes
    python examples/mandelbrot_rows.py --balancer gss --workers 2
    mpiexec -n 4 python examples/mandelbrot_rows.py --backend mpi   # rank 0 + 3 worker ranks
"""

from __future__ import annotations

import argparse
import sys

import dlbkit

WIDTH, HEIGHT = 240, 96  # pixels
MAX_ITER = 256  # iterations per point at most
X0, X1, Y0, Y1 = -2.2, 0.8, -1.2, 1.2  # the region of the complex plane
SHADES = " .:-=+*#%@"  # ASCII thumbnail, from fast escape to inside the set


def row(y: int) -> list[int]:
    """Iteration counts of the points of row *y* (MAX_ITER for a point taken to be in the set)."""
    ci = Y0 + (Y1 - Y0) * (y + 0.5) / HEIGHT
    out = []
    for x in range(WIDTH):
        cr = X0 + (X1 - X0) * (x + 0.5) / WIDTH
        zr = zi = 0.0
        n = 0
        while n < MAX_ITER and zr * zr + zi * zi <= 4.0:
            zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
            n += 1
        out.append(n)
    return out


def thumbnail(image: list[list[int]], cols: int = 60, rows: int = 16) -> list[str]:
    """The image as ASCII art, each character the mean count of a block of pixels."""
    bw, bh = WIDTH // cols, HEIGHT // rows
    lines = []
    for r in range(rows):
        line = []
        for c in range(cols):
            block = [image[y][x] for y in range(r * bh, (r + 1) * bh) for x in range(c * bw, (c + 1) * bw)]
            level = sum(block) / (len(block) * MAX_ITER)
            line.append(SHADES[min(int(level * len(SHADES)), len(SHADES) - 1)])
        lines.append("".join(line).rstrip())
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("local", "mpi"), default="local")
    ap.add_argument("--workers", type=int, default=4, help="local worker processes (default 4)")
    ap.add_argument("--balancer", default="awf-c", help="a chunking balancer (dlbkit balancers --kind chunking)")
    args = ap.parse_args(argv)

    workers = args.workers if args.backend == "local" else None
    image = dlbkit.map(row, range(HEIGHT), balancer=args.balancer, backend=args.backend, workers=workers)
    if args.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:
            return 0  # every rank has the image; rank 0 reports

    serial = [row(y) for y in range(HEIGHT)]
    same = image == serial
    costs = [sum(r) for r in image]  # iterations per row: the work of each item
    inside = sum(n == MAX_ITER for r in image for n in r)
    print(f"Mandelbrot image {WIDTH}x{HEIGHT}, at most {MAX_ITER} iterations per point: "
          f"{HEIGHT} rows computed with dlbkit.map")
    print(f"identical to a serial computation: {'yes' if same else 'NO'}")
    print(f"points in the set: {inside} of {WIDTH * HEIGHT}; iterations: {sum(costs)}")
    print(f"iterations per row: {min(costs)} to {max(costs)} ({max(costs) / min(costs):.1f}x: uneven rows)")
    print()
    for line in thumbnail(image):
        print(line)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
