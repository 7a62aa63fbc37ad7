"""dlbkit.Cluster against concurrent.futures.ProcessPoolExecutor (issue 15's two benchmarks).

Usage: python benchmarks/bench_cluster.py [--throughput] [--response] [--jobs 10000] [--stream-jobs 600]
       [--seed 1] [--repeat 1] [--json]

1. Throughput: ``f(x) = x + 1`` submitted *jobs* times on 2 nodes (2 worker processes), every result
   collected; jobs/s of ``Cluster(2).submit`` (nezha + gossip, decisions at the origins) and of
   ``ProcessPoolExecutor(2).submit``, side by side in one run, start-up included for both.
2. Response: four emulated nodes at speeds 1, 1, 0.5, 0.25 (sum 2.75), one job stream with Poisson
   arrivals at 0.8 of that capacity, job costs uniform in 5–50 ms of busy loop (mean 27.5 ms, as on a
   node of speed 1); mean and p95 response (submit → result in the client) of nezha, power-of-d,
   random-place and round-robin-place (the issue's four), speed-d, jsq and nezha-wait (nezha with
   load="wait", the expected completion (queue + 1)/(speed × slots)) on the Cluster, against a
   central FIFO queue: a ProcessPoolExecutor of 4 processes whose worker i is slowed to speed s_i (the same emulation: a
   process sleeps until its job has taken cost/s_i). The same arrival times and costs (one seed) for
   every run. The machine has 2 cores, so 4 nodes busy-looping share them: the emulated speeds are
   relative, the absolute times longer than on 4 free cores. With --repeat R every row runs R times,
   interleaved, and the medians are printed, each row's ratio taken to its own repetition's central
   queue (the machine's other load changes from one run to the next).
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
#: the issue's four, then two more: speed-d (d choices by expected completion, which reads the
#: nominal speeds every node's view holds) and jsq (the shortest queue of all, on stale views)
BALANCERS = ("nezha", "power-of-d", "random-place", "round-robin-place", "speed-d", "jsq")
#: extra rows: a label, the balancer and its parameters (nezha with the note's capacity-normalised load,
#: L = (queue + 1)/(speed × slots), 003 §5.2; not the seed's rule)
VARIANTS = {"nezha-wait": ("nezha", {"load": "wait"})}


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


def _central(times, costs) -> list[float]:
    counter = mp.Value("i", 0)
    with ProcessPoolExecutor(4, initializer=_init_pool, initargs=(counter,)) as p:
        wait([p.submit(inc, 0) for _ in range(8)])  # started before the clock
        return feed(lambda c: p.submit(spin_slowed, c), times, costs)


def _cluster(b, times, costs, seed) -> tuple[list[float], list[int]]:
    b, params = VARIANTS.get(b, (b, None))
    with dlbkit.Cluster(4, balancer=b, params=params, emulate=SPEEDS, seed=seed) as c:
        r = feed(lambda x: c.submit(spin, x), times, costs)
    return r, np.bincount([j.node for j in c.ps()], minlength=4).tolist()


def response(n: int, seed: int, repeat: int = 1) -> list[dict]:
    """Every configuration *repeat* times, interleaved (the machine's other load changes between runs:
    each repetition runs every row once, and a row's ratio is taken to that repetition's central
    queue); the medians over the repetitions."""
    times, costs = arrivals(n, seed)
    names = ["central FIFO (ProcessPoolExecutor)", *BALANCERS, *VARIANTS]
    runs: dict[str, list] = {k: [] for k in names}
    for _ in range(repeat):
        r = _central(times, costs)
        central = float(np.mean(r))
        runs[names[0]].append((central, float(np.percentile(r, 95)), 1.0, None))
        for b in (*BALANCERS, *VARIANTS):
            r, on = _cluster(b, times, costs, seed)
            runs[b].append((float(np.mean(r)), float(np.percentile(r, 95)), float(np.mean(r)) / central, on))
    rows = []
    for k in names:
        v = runs[k]
        rows.append({"balancer": k, "mean": float(np.median([x[0] for x in v])),
                     "p95": float(np.median([x[1] for x in v])), "ratio": float(np.median([x[2] for x in v])),
                     "ratios": [round(x[2], 3) for x in v], "means": [round(x[0], 4) for x in v],
                     "jobs_per_node": v[-1][3]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--throughput", action="store_true")
    ap.add_argument("--response", action="store_true")
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--stream-jobs", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="repetitions of the response benchmark, interleaved")
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
        out["response"] = response(a.stream_jobs, a.seed, a.repeat)
        if not a.json:
            for row in out["response"]:
                print(f"{row['balancer']:36s} mean {row['mean'] * 1e3:7.1f} ms  p95 {row['p95'] * 1e3:7.1f} ms  "
                      f"{row['ratio']:.2f} x central {row['ratios']}  {row['jobs_per_node'] or ''}")
    if a.json:
        print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
