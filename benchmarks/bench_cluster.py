"""dlbkit.Cluster against concurrent.futures.ProcessPoolExecutor (issue 15's two benchmarks).

Usage: python benchmarks/bench_cluster.py [--throughput] [--response] [--jobs 10000] [--stream-jobs 600]
       [--seed 1] [--json]

1. Throughput: ``f(x) = x + 1`` submitted *jobs* times on 2 nodes (2 worker processes), every result
   collected; jobs/s of ``Cluster(2).submit`` (nezha + gossip, decisions at the origins) and of
   ``ProcessPoolExecutor(2).submit``, side by side in one run, start-up included for both.
2. Response: four emulated nodes at speeds 1, 1, 0.5, 0.25 (sum 2.75), one job stream with Poisson
   arrivals at 0.8 of that capacity, job costs uniform in 5–50 ms of busy loop (mean 27.5 ms, as on a
   node of speed 1); mean and p95 response (submit → result in the client) of nezha, power-of-d,
   random-place and round-robin-place on the Cluster, against a central FIFO queue: a
   ProcessPoolExecutor of 4 processes whose worker i is slowed to speed s_i (the same emulation: a
   process sleeps until its job has taken cost/s_i). The same arrival times and costs (one seed) for
   every run. The machine has 2 cores, so 4 nodes busy-looping share them: the emulated speeds are
   relative, the absolute times longer than on 4 free cores.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor, wait

import numpy as np

import dlbkit

SPEEDS = [1.0, 1.0, 0.5, 0.25]


def inc(x):
    return x + 1


def spin(cost):
    end = time.perf_counter() + cost
    while time.perf_counter() < end:
        pass
    return cost


# --- the central queue's emulated workers: worker i of the pool takes cost / speeds[i] -----------
_slot = None


def _init_pool(counter):
    global _slot
    with counter.get_lock():
        _slot = counter.value
        counter.value += 1


def spin_slowed(cost):
    t0 = time.perf_counter()
    spin(cost)
    t1 = time.perf_counter()
    delay = t0 + (t1 - t0) / SPEEDS[_slot] - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
    return cost


def throughput(jobs: int) -> dict:
    out = {}
    t0 = time.perf_counter()
    with ProcessPoolExecutor(2) as p:
        fs = [p.submit(inc, i) for i in range(jobs)]
        assert [f.result() for f in fs] == list(range(1, jobs + 1))
    out["processpool_jobs_per_s"] = jobs / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    with dlbkit.Cluster(2, seed=1) as c:
        fs = [c.submit(inc, i) for i in range(jobs)]
        assert [f.result() for f in fs] == list(range(1, jobs + 1))
    out["cluster_jobs_per_s"] = jobs / (time.perf_counter() - t0)
    m = c.result().trace
    out["cluster_forwarded"] = int(m.meta["tasks_moved"])
    out["cluster_info_messages"] = int(m.info_messages)
    out["ratio"] = out["cluster_jobs_per_s"] / out["processpool_jobs_per_s"]
    return out


def arrivals(n: int, seed: int):
    rng = np.random.default_rng(seed)
    costs = rng.uniform(0.005, 0.050, n)
    rate = 0.8 * sum(SPEEDS) / 0.0275  # jobs/s: 0.8 of the capacity, 2.75 node-seconds a second / mean cost
    gaps = rng.exponential(1 / rate, n)
    return np.cumsum(gaps), costs


def feed(submit, times, costs) -> list[float]:
    """Submit at the arrival times; the response time of each job (submit → result seen)."""
    done = {}
    t0 = time.perf_counter()
    fs = []
    for k, (t, c) in enumerate(zip(times, costs)):
        delay = t0 + t - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sent = time.perf_counter()
        f = submit(float(c))
        f.add_done_callback(lambda f, sent=sent, k=k: done.__setitem__(k, time.perf_counter() - sent))
        fs.append(f)
    wait(fs)
    time.sleep(0.05)  # callbacks run in the executor's thread: let the last ones land
    return [done[k] for k in range(len(fs))]


def response(n: int, seed: int) -> list[dict]:
    times, costs = arrivals(n, seed)
    rows = []
    counter = mp.Value("i", 0)
    with ProcessPoolExecutor(4, initializer=_init_pool, initargs=(counter,)) as p:
        wait([p.submit(inc, 0) for _ in range(8)])  # started before the clock
        r = feed(lambda c: p.submit(spin_slowed, c), times, costs)
    rows.append({"balancer": "central FIFO (ProcessPoolExecutor)", "mean": float(np.mean(r)),
                 "p95": float(np.percentile(r, 95))})
    for b in ("nezha", "power-of-d", "random-place", "round-robin-place"):
        with dlbkit.Cluster(4, balancer=b, emulate=SPEEDS, seed=seed) as c:
            r = feed(lambda x: c.submit(spin, x), times, costs)
        on = np.bincount([j.node for j in c.ps()], minlength=4).tolist()
        rows.append({"balancer": b, "mean": float(np.mean(r)), "p95": float(np.percentile(r, 95)), "jobs_per_node": on})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("--response", action="store_true")
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--stream-jobs", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    both = not (a.throughput or a.response)
    out = {"cpus": os.cpu_count()}
    if a.throughput or both:
        out["throughput"] = throughput(a.jobs)
        if not a.json:
            t = out["throughput"]
            print(f"trivial jobs, {a.jobs} submits, 2 nodes: ProcessPoolExecutor {t['processpool_jobs_per_s']:.0f} "
                  f"jobs/s, Cluster {t['cluster_jobs_per_s']:.0f} jobs/s (ratio {t['ratio']:.2f}; "
                  f"{t['cluster_forwarded']} forwarded, {t['cluster_info_messages']} load messages)")
    if a.response or both:
        out["response"] = response(a.stream_jobs, a.seed)
        if not a.json:
            central = out["response"][0]["mean"]
            for row in out["response"]:
                print(f"{row['balancer']:40s} mean {row['mean'] * 1e3:8.1f} ms  p95 {row['p95'] * 1e3:8.1f} ms  "
                      f"({row['mean'] / central:.2f} x central)  {row.get('jobs_per_node', '')}")
    if a.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
