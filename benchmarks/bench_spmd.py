"""Wall time of the pipelined-SPMD simulator (000): the Tables 8.6/8.7 experiment and one large run.

Usage: python benchmarks/bench_spmd.py [--processes N] [--seeds N]
Prints (1) the 1000-run E11 experiment of 000 §8.4.2 (10 WS ring, 700 loops each, step disturbance at
WS 0 from loop 100 to 600) with DLAH, and with all three balancers of Tables 8.6/8.7; (2) one
500-workstation run of 700 loops on a complete random HNOW with DLAH (and without balancing).
"""

import argparse
import os
import time

import numpy as np

from dlbkit.balancers.registry import make
from dlbkit.face.reproduce.osman2003 import complete_scenario, e11_scenario
from dlbkit.families.spmd.sim.engine import simulate_spmd
from dlbkit.families.spmd.sim.experiment import run_many


def _steps_dp(trace):
    return int(trace.steps.sum()), trace.dp_exchanged


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seeds", type=int, default=1000)
    args = ap.parse_args()
    print(f"CPUs: {os.cpu_count()}, processes: {args.processes}")
    total = 0.0
    for name in ("dlah", "homogeneous-diffusion", "processor-only"):
        t = time.perf_counter()
        r = np.asarray(run_many(e11_scenario, make(name), range(args.seeds), loops=700, measure=_steps_dp,
                                processes=args.processes), float)
        dt = time.perf_counter() - t
        total += dt
        print(f"E11 {args.seeds} runs x 10 WS x 700 loops, {name:22s} {dt:7.2f} s  "
              f"(mean steps {r[:, 0].mean():.3f}, mean DP {r[:, 1].mean():.4g})")
    print(f"E11 Tables 8.6/8.7, all three balancers ({3 * args.seeds} runs): {total:7.2f} s")
    hnow = complete_scenario(np.random.default_rng(0), n=500)
    for label, b in (("DLAH", make("dlah")), ("no balancing", None)):
        t = time.perf_counter()
        tr = simulate_spmd(hnow, b, loops=700, seed=0)
        dt = time.perf_counter() - t
        print(f"one run, 500 WS x 700 loops, {label:13s} {dt:7.3f} s  ({len(tr.transfers)} transfers, "
              f"makespan {tr.makespan:.4g} s)")


if __name__ == "__main__":
    main()
