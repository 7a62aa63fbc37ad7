"""Overhead of dlbkit.map(backend="mpi") against mpi4py.futures on trivial items.

Usage:
  mpiexec -n 3 python benchmarks/bench_runtime_mpi.py dlbkit            # rank 0 + 2 worker ranks
  mpiexec -n 3 python -m mpi4py.futures benchmarks/bench_runtime_mpi.py futures
(mpi4py.futures with -n 3 gives one master and 2 workers, the same as dlbkit's layout.)
Prints the best wall time of --repeat runs for each configuration.
"""

import argparse

from mpi4py import MPI

from timing import best_of


def trivial(x):
    return x + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["dlbkit", "futures"])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    items = list(range(a.items))
    expect = [trivial(x) for x in items]
    if a.what == "dlbkit":
        import dlbkit
        for bal in ("awf-c", "fac2"):
            assert dlbkit.map(trivial, items, backend="mpi", balancer=bal) == expect
            t, _ = best_of(lambda: dlbkit.map(trivial, items, backend="mpi", balancer=bal), a.repeat)
            if MPI.COMM_WORLD.Get_rank() == 0:
                print(f"dlbkit.map backend=mpi balancer={bal:6s} {t:8.4f} s")
    else:
        from mpi4py.futures import MPIPoolExecutor
        with MPIPoolExecutor() as ex:
            for cs in (1000, 2500, 5000, 12500, 25000, 50000):
                assert list(ex.map(trivial, items, chunksize=cs)) == expect
                t, _ = best_of(lambda: list(ex.map(trivial, items, chunksize=cs)), a.repeat)
                print(f"mpi4py.futures map chunksize={cs:<6d}   {t:8.4f} s")


if __name__ == "__main__":
    main()
