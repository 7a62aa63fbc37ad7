"""Real runs on emulated heterogeneous workers: efficiency of each chunking balancer.

Usage (local):  python benchmarks/bench_runtime_hetero.py [--items 1500] [--balancers a,b,...]
Usage (MPI):    mpiexec -n 5 python benchmarks/bench_runtime_hetero.py --backend mpi
Four workers with speed factors 1, 1, 0.5, 0.25 (a worker at speed s stretches its measured compute
to 1/s), items of uneven cost (a busy loop of about 0.4 to 4 ms on this machine). Efficiency is the
lower bound (measured work spread over the emulated speeds) over the real makespan.
"""

import argparse

import dlbkit
from dlbkit.balancers.registry import REGISTRY

SPEEDS = [1.0, 1.0, 0.5, 0.25]


def work(x):
    s = 0
    for i in range(8000 * (1 + (x * 7919) % 10)):
        s += i
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--backend", default="local")
    ap.add_argument("--balancers", default=",".join(sorted(n for n, c in REGISTRY.items() if c.kind == "chunking")))
    a = ap.parse_args()
    items = list(range(a.items))
    rows = []
    for name in a.balancers.split(","):
        r = dlbkit.run_map(work, items, balancer=name, emulate=SPEEDS, backend=a.backend, seed=1)
        rows.append((name, r.metrics["makespan"], r.metrics["efficiency"], int(r.metrics["chunks"])))
    if a.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:  # every rank gets the results; rank 0 reports
            return
    if rows:
        print(f"backend={a.backend}, speeds {SPEEDS}, {a.items} items")
        print(f"{'balancer':14s} {'makespan_s':>10s} {'efficiency':>10s} {'chunks':>7s}")
        for name, ms, eff, ch in sorted(rows, key=lambda r: -r[2]):
            print(f"{name:14s} {ms:10.3f} {eff:10.3f} {ch:7d}")


if __name__ == "__main__":
    main()
