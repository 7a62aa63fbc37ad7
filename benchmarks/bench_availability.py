"""Time to realise a Markov on/off availability far ahead (BENCHMARKS.md, "Run budgets").

Usage: python benchmarks/bench_availability.py [--until 99000] [--mean 0.1] [--repeat 3] [--reference]

One node's Markov load, sojourns of mean *mean* seconds each way, extended in one query to simulated
time *until* (as an engine does when a long task asks when it ends). Prints the segments and the best
of *repeat* wall times; with --reference also the sojourn-by-sojourn draw the blocks replaced
(tests/face/experiments/test_run_budget.py's ``reference_markov``: one ``rng.exponential`` per sojourn), and whether
the two trajectories are identical.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from dlbkit.model.availability import Markov
from timing import best_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--until", type=float, default=99_000.0)
    ap.add_argument("--mean", type=float, default=0.1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reference", action="store_true")
    a = ap.parse_args()
    spec = Markov(mean_free=a.mean, mean_busy=a.mean, low=0.5)

    def blocks():
        pw = spec.realise(np.random.default_rng(1))
        pw.level(a.until)
        return pw

    secs, pw = best_of(blocks, a.repeat)
    print(f"blocks:    {len(pw.times):,} segments to t = {a.until:g} s in {secs:.3f} s")
    if a.reference:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from test_run_budget import reference_markov

        def one_by_one():
            ref = reference_markov(spec, np.random.default_rng(1))
            ref.level(a.until)
            return ref

        rsecs, ref = best_of(one_by_one, a.repeat)
        same = list(ref.times) == list(pw.times) and list(ref.levels) == list(pw.levels)
        print(f"reference: {len(ref.times):,} segments in {rsecs:.3f} s; identical trajectory: {same}")


if __name__ == "__main__":
    main()
