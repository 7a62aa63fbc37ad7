"""A stream of CPU jobs from two users on a decentralised cluster (``dlbkit.Cluster``).

Two "users" (two threads of this script) submit jobs at Poisson arrival times: user A many short
jobs at origins 0 and 1, user B fewer, longer ones at origins 2 and 3; job costs are lognormal
(seconds of busy loop on a node of speed 1). The cluster has 4 emulated nodes of speeds 1, 1, 0.5
and 0.5, and node 1 loses three quarters of its CPU to another user half-way through the run (its
availability steps to 0.25). Every node places the jobs that arrive at it with the balancer, from
what gossip has told it of the others' queues; the script prints the response-time percentiles
(submit → result) per balancer and where the jobs ran before and after the step.

    python examples/job_stream.py
    python examples/job_stream.py --seconds 8 --balancers nezha,random-place
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np

import dlbkit
from dlbkit import Network, Node, Platform, Step

SPEEDS = [1.0, 1.0, 0.5, 0.5]


def burn(cost: float) -> float:
    """*cost* seconds of CPU (a busy loop): the job."""
    end = time.perf_counter() + cost
    x = 0
    while time.perf_counter() < end:
        x += 1
    return cost


def user(cluster, rate, mean, origins, seconds, seed, out):
    """Submit jobs of lognormal cost (mean *mean* s) at Poisson rate *rate* for *seconds*."""
    rng = np.random.default_rng(seed)
    sigma = 0.8
    mu = np.log(mean) - sigma ** 2 / 2
    t0 = time.perf_counter()
    t, k = 0.0, 0
    while True:
        t += rng.exponential(1 / rate)
        if t > seconds:
            return
        delay = t0 + t - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sent = time.perf_counter()
        f = cluster.submit(burn, float(rng.lognormal(mu, sigma)), origin=origins[k % len(origins)])
        f.add_done_callback(lambda f, sent=sent: out.append(time.perf_counter() - sent))
        k += 1


def run(balancer: str, seconds: float, seed: int) -> tuple[list[float], np.ndarray, np.ndarray]:
    half = seconds / 2
    nodes = [Node(f"n{i}", speed=s, availability=Step(at=half, level=0.25) if i == 1 else 1.0)
             for i, s in enumerate(SPEEDS)]
    platform = Platform(nodes, Network(), name="two users")
    responses: list[float] = []
    with dlbkit.Cluster(4, balancer=balancer, emulate=platform, info={"model": "gossip", "period": 0.01},
                        seed=seed) as c:
        # capacity 3 node-seconds per second; A: 40 jobs/s of 30 ms = 1.2, B: 6 jobs/s of 150 ms = 0.9
        users = [threading.Thread(target=user, args=(c, 40.0, 0.03, [0, 1], seconds, seed, responses)),
                 threading.Thread(target=user, args=(c, 6.0, 0.15, [2, 3], seconds, seed + 1, responses))]
        for u in users:
            u.start()
        for u in users:
            u.join()
    jobs = c.ps()
    before = np.bincount([j.node for j in jobs if j.submitted < half], minlength=4)
    after = np.bincount([j.node for j in jobs if j.submitted >= half], minlength=4)
    return responses, before, after


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="how long the users submit (default 6)")
    ap.add_argument("--balancers", default="nezha,power-of-d,random-place,round-robin-place")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(f"4 nodes of speeds {SPEEDS}; node 1 at 25% from {a.seconds / 2:g} s; two users, {a.seconds:g} s of arrivals")
    print(f"{'balancer':20s} {'jobs':>5s} {'p50 ms':>8s} {'p90 ms':>8s} {'p99 ms':>8s}   jobs per node before | after")
    for b in a.balancers.split(","):
        r, before, after = run(b.strip(), a.seconds, a.seed)
        p50, p90, p99 = np.percentile(r, [50, 90, 99]) * 1e3
        print(f"{b:20s} {len(r):5d} {p50:8.0f} {p90:8.0f} {p99:8.0f}   {before.tolist()} | {after.tolist()}")


if __name__ == "__main__":
    main()
