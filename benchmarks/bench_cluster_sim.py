"""Issue 15's response workload in the stream simulator: the placement rules' own gap to a central
queue, without the runtime's costs (processes, pipes, the GIL, a shared machine).

Usage: python benchmarks/bench_cluster_sim.py [--jobs 20000] [--seeds 1 2 3] [--gossip 0.01] [--json]

The workload of ``benchmarks/bench_cluster.py --response``: four nodes of speeds 1, 1, 0.5, 0.25, one
slot each (2.75 node-seconds a second); Poisson arrivals at 0.8 of that capacity (80 jobs/s, 20 per
node as origin); job costs uniform in 5–50 ms at speed 1 (a node of speed s takes cost / s). One
recorded trace per seed (arrival time, origin, cost of every job: ``Stream(trace=...)``), the same
for every row, so every rule and the central queue serve exactly the same jobs.

Rows: the central FIFO queue (below), then ``nezha`` (``load`` "queue", the seed's rule, and "wait",
the expected completion (queue + 1)/(speed × slots)), ``power-of-d``, ``speed-d``, ``jsq``,
``random-place`` and ``round-robin-place`` (defaults otherwise), each with exact information and
with gossip every *gossip* seconds (``{"model": "gossip", "period": ...}``, as the Cluster's
default). Mean and p95 of the response (arrival to completion) over the jobs after the engine's
warm-up (the first 10%), and the mean over the central queue's.

The central queue: dlbkit's stream simulator has none (a placement there is final, made at the
arrival), so it is computed here by the exact recursion of a first-in-first-out queue in front of
the four workers: each job, in arrival order, goes to the worker that frees first (max(free_i,
arrival)); among workers idle at its arrival, the lowest index, which here is the fastest. That is
what ``ProcessPoolExecutor`` does up to which idle worker takes a job. Same jobs, same warm-up.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import dlbkit
from dlbkit import Node, Platform, Stream

SPEEDS = [1.0, 1.0, 0.5, 0.25]
RATE = 0.8 * sum(SPEEDS) / 0.0275  # jobs/s: 0.8 of the capacity over the mean cost (27.5 ms at speed 1)
WARMUP = 0.1  # the engine's default warm-up share (simulate_stream's *warmup*)
ROWS = [("nezha", "nezha", {}), ("nezha-wait", "nezha", {"load": "wait"}), ("power-of-d", "power-of-d", {}),
        ("speed-d", "speed-d", {}), ("jsq", "jsq", {}), ("random-place", "random-place", {}),
        ("round-robin-place", "round-robin-place", {})]


def jobs_of(n: int, seed: int) -> list[tuple]:
    """(arrival time, origin, cost, 1) of *n* jobs: Poisson at RATE, origins uniform (20 jobs/s each)."""
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.exponential(1 / RATE, n))
    origins = rng.integers(0, len(SPEEDS), n)
    costs = rng.uniform(0.005, 0.050, n)
    return [(float(t), int(o), float(c), 1) for t, o, c in zip(times, origins, costs)]


def central(rows: list[tuple]) -> np.ndarray:
    """Response of every job under one FIFO queue in front of all workers (module docstring)."""
    free = [0.0] * len(SPEEDS)
    out = np.empty(len(rows))
    for k, (a, _, c, _) in enumerate(rows):
        i = min(range(len(SPEEDS)), key=lambda j: (max(free[j], a), j))
        free[i] = max(free[i], a) + c / SPEEDS[i]
        out[k] = free[i] - a
    return out


def run(n: int, seeds: list[int], gossip: float) -> dict:
    platform = Platform([Node(f"n{i}", speed=s, cores=1) for i, s in enumerate(SPEEDS)])
    out = {"jobs": n, "seeds": seeds, "gossip_period": gossip, "rows": []}
    res: dict[tuple, list] = {}
    for seed in seeds:
        rows = jobs_of(n, seed)
        r = central(rows)[int(WARMUP * n):]
        c = float(r.mean())
        res.setdefault(("central FIFO", "-"), []).append((c, float(np.percentile(r, 95)), 1.0))
        wl = Stream(trace=rows)
        for label, b, params in ROWS:
            for info, name in ((None, "exact"), ({"model": "gossip", "period": gossip}, "gossip")):
                m = dlbkit.simulate(platform, wl, b, params=params, seed=seed, info=info).metrics
                res.setdefault((label, name), []).append((m["response_mean"], m["response_p95"],
                                                          m["response_mean"] / c))
    for (label, info), v in res.items():
        out["rows"].append({"balancer": label, "info": info, "mean": [x[0] for x in v], "p95": [x[1] for x in v],
                            "ratio": [x[2] for x in v]})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20_000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--gossip", type=float, default=0.01, help="gossip period (s) of the second column")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    out = run(a.jobs, a.seeds, a.gossip)
    if a.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{a.jobs} jobs, seeds {a.seeds}; mean / p95 ms (× central FIFO's mean), one column per seed")
    for row in out["rows"]:
        cells = "  ".join(f"{m * 1e3:7.1f} / {p * 1e3:7.1f} ({r:5.2f}×)" for m, p, r in
                          zip(row["mean"], row["p95"], row["ratio"]))
        print(f"{row['balancer']:18s} {row['info']:7s} {cells}")


if __name__ == "__main__":
    main()
