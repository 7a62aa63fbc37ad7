"""Many seeded pipelined-SPMD runs, in parallel processes: 000's "1080 simulations with different seeds".

:func:`run_many` draws one HNOW per seed from a *scenario* (a function of a Generator, so random
heterogeneity is part of the seed), runs a fresh clone of the balancer on it and keeps only what
*measure* extracts from the trace (traces of thousands of runs are not shipped between processes).
Seeds are independent streams: seed s gives the ``SPMD_SWEEP`` streams (scenario, run) of
:mod:`dlbkit.families.spmd.model.seeding`, and ``run`` seeds the run's own ``SPMD`` streams.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, Callable, Iterable

import numpy as np

from dlbkit.families.spmd.model.hnow import Hnow
from dlbkit.families.spmd.model.seeding import SPMD_SWEEP
from dlbkit.model.seeding import streams
from dlbkit.families.spmd.sim.engine import DEFAULT_WINDOW, simulate_spmd
from dlbkit.families.spmd.model.metrics import summary

__all__ = ["run_many", "run_one"]


def run_one(seed: int, scenario: Hnow | Callable[[np.random.Generator], Hnow], balancer, *, loops: int,
            window: int = DEFAULT_WINDOW, measure: Callable = summary, noise: float | None = None) -> Any:
    """One run: the scenario drawn with seed *seed*, then ``measure(trace)``."""
    rs = streams(seed, SPMD_SWEEP)
    run = rs.seq("run")
    hnow = scenario if isinstance(scenario, Hnow) else scenario(rs.rng("scenario"))
    b = balancer.clone() if balancer is not None else None
    trace = simulate_spmd(hnow, b, loops=loops, window=window, seed=run, noise=noise)
    return measure(trace)


def run_many(scenario, balancer, seeds: Iterable[int], *, loops: int, window: int = DEFAULT_WINDOW,
             measure: Callable = summary, noise: float | None = None, processes: int | None = None) -> list:
    """``[run_one(s, ...) for s in seeds]``, spread over *processes* worker processes (default: one
    per CPU; 1 runs in this process). *scenario*, *balancer* and *measure* must pickle (module-level
    functions or :func:`functools.partial` of them). Results come back in seed order."""
    seeds = list(seeds)
    job = partial(run_one, scenario=scenario, balancer=balancer, loops=loops, window=window, measure=measure,
                  noise=noise)
    procs = processes or os.cpu_count() or 1
    if procs <= 1 or len(seeds) < 2:
        return [job(s) for s in seeds]
    chunk = max(1, math.ceil(len(seeds) / (4 * procs)))
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    with ProcessPoolExecutor(max_workers=procs, mp_context=ctx) as ex:
        return list(ex.map(job, seeds, chunksize=chunk))
