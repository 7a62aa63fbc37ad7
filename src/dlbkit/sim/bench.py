"""Reference models of ../shared/benchmarks/MODELS.md, run through the general engines.

M1 is master–worker self-scheduling: the divisible engine with the SS balancer (chunk 1), a master
that does not compute, P workers of speeds 1 + (i mod 8), latency 1 ms, no bandwidth term.
"""

from __future__ import annotations

import time

from ..balancers.chunking.selfsched import SelfScheduling
from ..errors import ConfigError
from ..model.platform import Network, Node, Platform
from ..model.workload import CostModel, Divisible, m1_costs
from .divisible import simulate_divisible

__all__ = ["m1_platform", "run_m1", "MODELS"]

M1_LATENCY = 0.001  # seconds, MODELS.md "Common definitions"


def m1_platform(workers: int) -> Platform:
    nodes = [Node("master")] + [Node(f"w{i}", speed=float(1 + i % 8)) for i in range(workers)]
    # no bandwidth term in M1: messages carry no bytes, so any bandwidth gives latency only
    return Platform(nodes, Network(latency=M1_LATENCY, bandwidth=1.0, topology="star"), name=f"m1-{workers}")


def run_m1(workers: int, tasks: int) -> dict:
    if workers < 1:
        raise ConfigError("--workers", workers, "an integer >= 1")
    if tasks < 1:
        raise ConfigError("--tasks", tasks, "an integer >= 1")
    platform = m1_platform(workers)
    workload = Divisible(tasks, CostModel("constant"))
    costs = m1_costs(tasks)
    t0 = time.perf_counter()
    trace = simulate_divisible(platform, workload, SelfScheduling(size=1), master=0, costs=costs)
    wall = time.perf_counter() - t0
    makespan = max(trace.t_end)
    return {"model": "m1", "workers": workers, "tasks": tasks, "makespan": makespan,
            "events": trace.events, "wall_s": wall, "events_per_s": trace.events / wall if wall > 0 else float("inf")}


MODELS = {"m1": run_m1}
