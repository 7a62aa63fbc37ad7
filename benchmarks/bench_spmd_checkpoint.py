"""What surviving a dead worker costs an SPMD run: its checkpoints (each worker's whole block sent to the
coordinator) by default (one per CHECKPOINT_S = 30 s of run) and every 10 iterations, against none
(checkpoint=0).

Usage: python benchmarks/bench_spmd_checkpoint.py [--rows 2000] [--cols 2000] [--iterations 40]
       [--workers 2] [--rounds 4]
A 5-point average over a rows × cols float64 field, the same run under the three settings in turn, round
after round (the machine is shared), each round's ratios to none printed; and the serial loop's wall for
scale.
"""

import argparse
import statistics
import time

import numpy as np

import dlbkit


def stencil(u):
    return (u[:-2] + u[1:-1] + u[2:] + np.roll(u[1:-1], 1, axis=1) + np.roll(u[1:-1], -1, axis=1)) / 5


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--cols", type=int, default=2000)
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    a = ap.parse_args()
    u = np.random.default_rng(0).random((a.rows, a.cols))
    t0 = time.perf_counter()
    serial = u.copy()
    for _ in range(a.iterations):
        serial[1:-1] = stencil(serial)
    print(f"serial loop: {time.perf_counter() - t0:.3f} s ({a.rows} x {a.cols}, {a.iterations} iterations)")

    def run(checkpoint):
        t0 = time.perf_counter()
        r = dlbkit.run_spmd(stencil, u, iterations=a.iterations, workers=a.workers, checkpoint=checkpoint)
        wall = time.perf_counter() - t0
        assert np.array_equal(r.domain, serial)
        return wall

    ratios = {"default": [], "every 10": []}
    for k in range(a.rounds):
        default, every, none = run(None), run(10), run(0)
        ratios["default"].append(default / none)
        ratios["every 10"].append(every / none)
        print(f"round {k}: default {default:.3f} s, every 10 iterations {every:.3f} s, none {none:.3f} s; "
              f"ratios {default / none:.3f}, {every / none:.3f}")
    print("median ratio to none: " + ", ".join(f"{k} {statistics.median(v):.3f}" for k, v in ratios.items())
          + f"; a checkpoint sends {u[1:-1].nbytes / 1e6:.0f} MB to the coordinator")


if __name__ == "__main__":
    main()
