"""Wall time of push gossip among 1024 nodes for 10^4 periods, and of the Monte-Carlo Table 6 (003).

1. ``dlbkit.info.gossip_mc.gossip_stamps``: every node pushes its whole timestamped table to one peer a
   period (freshest wins), vectorised over the nodes with numpy (uint8 stamps from a sliding base, one
   n × n matrix). Prints wall seconds (and the process's CPU seconds: the machine may be shared), periods per second, entry merges per second (n² a period: every entry of every
   sent table is compared) and the mean age of an entry at the end (periods).
2. The information layer's per-message contract (``dlbkit.info.Gossip``: one InfoMessage of n entries
   per node and period, ``deliver`` merging each) on the same n for ``--layer-periods`` periods,
   extrapolated to the same period count.
3. ``pr_all_informed`` on Table 6's six columns, 10^5 trials each (``dlbkit reproduce nezha``'s rows).

    python benchmarks/bench_gossip.py [--nodes 1024] [--periods 10000] [--selection uniform|constrained]
                                      [--pull] [--layer-periods 20] [--skip-table6]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dlbkit.info import Gossip
from dlbkit.face.reproduce.nezha import TABLE6, TRIALS
from dlbkit.info.gossip_mc import gossip_stamps, pr_all_informed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1024)
    ap.add_argument("--periods", type=int, default=10_000)
    ap.add_argument("--selection", default="uniform", choices=["uniform", "constrained"])
    ap.add_argument("--pull", action="store_true")
    ap.add_argument("--layer-periods", type=int, default=20)
    ap.add_argument("--skip-table6", action="store_true")
    a = ap.parse_args()
    n, K = a.nodes, a.periods

    t0, c0 = time.perf_counter(), time.process_time()
    _, ages = gossip_stamps(n, K, np.random.default_rng(1), a.selection, a.pull)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"vectorised gossip: {n} nodes, {K} periods ({a.selection}{', push-pull' if a.pull else ''}): "
          f"{wall:.2f} s ({cpu:.2f} s CPU), {K / wall:.0f} periods/s, {n * n * K / wall / 1e6:.0f} M entry merges/s, "
          f"mean age at the end {ages[-1]:.2f} periods")

    if a.layer_periods:
        m = Gossip(period=1.0, selection=a.selection, pull=a.pull)
        m.start(n, [[]] * n, [0] * n, np.random.default_rng(1))
        loads = [0] * n
        t0 = time.perf_counter()
        for t in range(1, a.layer_periods + 1):
            for msg in m.round(float(t), loads):
                m.deliver(msg)
        w = time.perf_counter() - t0
        print(f"information layer (InfoMessage per node, deliver each): {a.layer_periods} periods in {w:.2f} s, "
              f"{w / a.layer_periods * 1e3:.1f} ms a period: {K} periods would take {w / a.layer_periods * K:.0f} s")

    if not a.skip_table6:
        t0 = time.perf_counter()
        for k, ((nn, N), col) in enumerate(TABLE6.items()):
            pr_all_informed(nn, N, len(col), TRIALS, np.random.default_rng(100 + k))
        print(f"Monte-Carlo Table 6: six columns, {TRIALS:,} trials each: {time.perf_counter() - t0:.2f} s")


if __name__ == "__main__":
    main()
