"""Reference models M1 and M2 (docs/reference-models.md), run through the general engines.

M1 is master–worker self-scheduling: the divisible engine with the SS balancer (chunk 1), a master
that does not compute, P workers of speeds 1 + (i mod 8), latency 1 ms, no bandwidth term.

The supermarket model (003 §3.2, Mitzenmacher 2001) is the job-stream engine
(:func:`~dlbkit.families.stream.sim.engine.simulate_stream`) on N identical servers of one slot with Poisson arrivals at
rate ρ·N, exponential service of mean 1, no transfer time, and the registered ``power-of-d`` balancer.

M2 is random work stealing: the asynchronous tree engine (:func:`~dlbkit.families.tree.sim.engine.simulate_tree_async`)
with the registered WorkStealing balancer (steal half), N flat tasks on worker 0, P workers of speeds
1 + (i mod 8) on a complete graph, latency 1 ms, no bandwidth term, in docs/reference-models.md's canonical order:
exact integer ticks of 1/8,400,000 s and the victims drawn from Python's Mersenne Twister.
"""

from __future__ import annotations

import operator
import random
import time

import numpy as np

from dlbkit.families.divisible.balancers.selfsched import SelfScheduling
from dlbkit.families.tree.balancers.steal import WorkStealing
from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.model.platform import MAX_NODES, Network, Node, Platform
from dlbkit.families.tree.model.workload import FlatTasks
from dlbkit.families.divisible.model.workload import MAX_ITEMS, CostModel, Divisible, m1_costs
from dlbkit.families.stream.balancers.power_of_d import PowerOfD
from dlbkit.families.stream.model.workload import MAX_JOBS, Stream
from dlbkit.families.divisible.sim.engine import simulate_divisible
from dlbkit.families.stream.sim.engine import MAX_SERVERS, simulate_stream
from dlbkit.families.tree.sim.engine import simulate_tree_async

__all__ = ["m1_platform", "run_m1", "run_supermarket", "m2_platform", "run_m2", "MersenneIntegers", "MODELS",
           "M2_TICKS_PER_SECOND", "check_workers", "check_tasks", "check_supermarket"]

M1_LATENCY = 0.001  # seconds, docs/reference-models.md "Both models"
#: docs/reference-models.md "Time base and ties": every M1/M2 time is a multiple of 1/8,400,000 s
M2_TICKS_PER_SECOND = 8_400_000


def m1_platform(workers: int) -> Platform:
    nodes = [Node("master")] + [Node(f"w{i}", speed=float(1 + i % 8)) for i in range(workers)]
    # no bandwidth term in M1: messages carry no bytes, so any bandwidth gives latency only
    return Platform(nodes, Network(latency=M1_LATENCY, bandwidth=1.0, topology="star"), name=f"m1-{workers}")


def check_workers(workers: int, model: str) -> None:
    """--workers of *model* (``m1``: beside its master; ``m2``: at least two, a thief needs a victim)
    within dlbkit's limits before anything is built (a billion workers was a long hang)."""
    least, most = (2, MAX_NODES) if model == "m2" else (1, MAX_NODES - 1)  # M1's master is a node beside them
    if isinstance(workers, bool) or not isinstance(workers, int) or not least <= workers <= most:
        raise ConfigError("--workers", workers, f"an integer in [{least}, {most:,}]"
                          + (" (M2 needs a victim; " if least > 1 else " (") + "dlbkit's limit on nodes)")


def check_tasks(tasks: int) -> None:
    """--tasks within dlbkit's limits (a trillion tasks was a MemoryError)."""
    check.size(tasks, "--tasks", MAX_ITEMS, "one cost per task is held in memory")


def run_m1(workers: int, tasks: int) -> dict:
    check_workers(workers, "m1")
    check_tasks(tasks)
    platform = m1_platform(workers)
    workload = Divisible(tasks, CostModel("constant"))
    costs = m1_costs(tasks)
    t0 = time.perf_counter()
    trace = simulate_divisible(platform, workload, SelfScheduling(size=1), master=0, costs=costs)
    wall = time.perf_counter() - t0
    makespan = max(trace.t_end)
    return {"model": "m1", "workers": workers, "tasks": tasks, "makespan": makespan,
            "events": trace.events, "wall_s": wall, "events_per_s": trace.events / wall if wall > 0 else float("inf")}


class MersenneIntegers:
    """A stand-in for a numpy Generator whose ``integers(n)`` is exactly ``random.Random(seed).randrange(n)``
    (docs/reference-models.md M2's RNG), so that WorkStealing's ``neighbours[rng.integers(len(neighbours))]`` draws
    M2's victims. ``randrange``'s algorithm is reproduced with ``getrandbits`` (same stream, fewer
    calls); ``integers(low, high)`` and ``size=`` draw the same way, one value after another.
    """

    def __init__(self, seed: int | None = None):
        self.random = random.Random(seed)
        self._bits = self.random.getrandbits

    def integers(self, low, high=None, size=None):
        if high is None and size is None and low.__class__ is int and low > 0:
            # random.Random._randbelow_with_getrandbits (once per steal attempt in M2: kept lean)
            bits = self._bits
            k = low.bit_length()
            r = bits(k)
            while r >= low:
                r = bits(k)
            return r
        if high is None and size is None:
            n = operator.index(low)
            if n <= 0:
                raise ValueError(f"integers: high must be > 0; got {n}")
            return self.integers(n)
        lo, hi = (0, operator.index(low)) if high is None else (operator.index(low), operator.index(high))
        if size is None:
            return lo + self.integers(hi - lo)
        return np.array([lo + self.integers(hi - lo) for _ in range(int(np.prod(size)))],
                        dtype=np.int64).reshape(size)


def m2_platform(workers: int) -> Platform:
    nodes = [Node(f"w{i}", speed=float(1 + i % 8)) for i in range(workers)]
    # no bandwidth term in M2: run_m2 sends zero-byte messages, so they take exactly the latency
    return Platform(nodes, Network(latency=M1_LATENCY, bandwidth=1.0, topology="complete"), name=f"m2-{workers}")


def run_m2(workers: int, tasks: int, seed: int = 1, *, record: bool = True) -> dict:
    """M2 (docs/reference-models.md): makespan, model events, wall time (the simulation only), events per second and
    successful steals (non-empty replies received)."""
    check_workers(workers, "m2")
    check_tasks(tasks)
    platform = m2_platform(workers)
    workload = FlatTasks(m1_costs(tasks).tolist())
    balancer = WorkStealing()
    t0 = time.perf_counter()
    trace = simulate_tree_async(platform, workload, balancer, seed=seed, rng=MersenneIntegers(seed),
                                ticks_per_second=M2_TICKS_PER_SECOND, control_bytes=0, task_bytes=0,
                                record=record, backoff="off")  # M2's thieves ask again at once
    wall = time.perf_counter() - t0
    return {"model": "m2", "workers": workers, "tasks": tasks, "makespan": trace.end_time,
            "events": trace.events, "wall_s": wall,
            "events_per_s": trace.events / wall if wall > 0 else float("inf"),
            "successful_steals": trace.meta["steals"]}


def check_supermarket(*, servers: int | None = None, load: float | None = None, choices: int | None = None,
                      jobs: int | None = None, replace: bool = True) -> None:
    """The supermarket model's options, each checked only if given (None: not given), in the order of
    ``dlbkit bench supermarket``'s flags."""
    if servers is not None:
        check.size(servers, "--servers", MAX_SERVERS, "servers of a job stream")
    if load is not None and (isinstance(load, bool) or not isinstance(load, (int, float)) or not 0 < load < 1):
        raise ConfigError("--load", load, "a number in (0, 1) (the supermarket model is stable below 1)")
    if choices is not None:
        if isinstance(choices, bool) or not isinstance(choices, int) or choices < 1:
            raise ConfigError("--choices", choices, "an integer >= 1")
        if not replace and servers is not None and choices > servers:
            raise ConfigError("--choices", choices, f"at most --servers ({servers}) without --replace")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or not 10 <= jobs <= MAX_JOBS):
        raise ConfigError("--jobs", jobs, f"an integer in [10, {MAX_JOBS:,}] (the warm-up is the first 10%; "
                          "dlbkit's limit: arrivals are drawn up front)")


def run_supermarket(servers: int, load: float, choices: int = 2, jobs: int = 1_000_000, seed: int = 1, *,
                    replace: bool = True) -> dict:
    """The supermarket model through the general stream engine: the time-average jobs in system per
    server after a warm-up of the first 10% of jobs (up to the last arrival), the mean response time
    of the jobs after the warm-up, model events (arrivals and departures), wall time of the simulation
    and events per second."""
    check_supermarket(servers=servers, load=load, choices=choices, jobs=jobs, replace=replace)
    workload = Stream(rates=float(load), jobs=jobs)
    balancer = PowerOfD(d=choices, replace=replace)
    t0 = time.perf_counter()
    trace = simulate_stream(servers, workload, balancer, seed=seed, samples=0, record=False)
    wall = time.perf_counter() - t0
    s = trace.series
    w = trace.meta["warmup_job"]
    resp = (s["job_done"] - s["job_time"])[w:]
    return {"model": "supermarket", "servers": servers, "load": load, "choices": choices, "replace": replace,
            "jobs": jobs, "seed": seed, "mean_jobs_per_server": trace.meta["queue_mean"],
            "mean_response": float(resp.mean()), "events": trace.events, "wall_s": wall,
            "events_per_s": trace.events / wall if wall > 0 else float("inf")}


MODELS = {"m1": run_m1, "m2": run_m2, "supermarket": run_supermarket}
