"""Predicting each candidate chunking balancer's next time step by simulating it on what the last step
measured: the engine side of ``balancer="auto"`` (:class:`~dlbkit.families.divisible.balancers.auto.Auto`
decides from these predictions). Every engine that runs time steps calls :func:`after_step` after a
step of a balancer that declares ``predicts_between_steps`` (the divisible simulator's ``steps``,
``dlbkit.Loop``, ``dlbkit.map`` with a recording), with the divisible simulator as *simulate*: this
module is below that engine (the engine imports it), so the simulator is passed in, not imported.

The model of the next step (:func:`predict`): the last step's items with their measured costs (work
units: seconds at speed 1), in their order; one worker per measured worker, whose balancer sees its
nominal speed (as in the real run: WF's weights, AWF's prior) and who computes at its measured speed
(a constant availability level = measured / nominal, all levels scaled so the largest is 1); every
message between a worker and the master its own ``latency`` (one per worker: a slow link stays one
slow link, not an average spread over all; one number: every worker's); no start-up, and every
worker's first request already at the master (a
persistent pool's workers are up and asking). A candidate that
carries state across steps (``Balancer.carries_state``: AWF, AF, …) is simulated for two steps and
judged on the second, so it is judged with what it would have learned; what it carried out of the
first is returned as the state it starts from if chosen.

Speed (:data:`~dlbkit.families.divisible.balancers.auto.Auto` ``max_items``): a loop longer than *max_items*
is coarsened into blocks of ⌈N / max_items⌉ consecutive items (their costs summed), so a
prediction simulates at most *max_items* items per candidate whatever N (BENCHMARKS.md: the time for
10⁵ items on 16 workers over every candidate, and the error coarsening costs). Carried states are
then not returned (a block's mean time is not an item's).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from dlbkit.balancers.registry import make
from dlbkit.model.availability import Constant
from dlbkit.model.check import HUGE, TINY
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.workload import Divisible

__all__ = ["predict", "measured_speeds", "coarsen", "after_step"]


def coarsen(costs: np.ndarray, max_items: int) -> tuple[np.ndarray, int]:
    """*costs* in blocks of g = ⌈N / max_items⌉ consecutive items, summed; (block costs, g)."""
    n = len(costs)
    g = max(1, math.ceil(n / max_items))
    if g == 1:
        return costs, 1
    pad = (-n) % g
    c = np.concatenate((costs, np.zeros(pad))) if pad else costs
    return c.reshape(-1, g).sum(axis=1), g


def measured_speeds(trace: Trace, costs: Sequence[float]) -> list[float]:
    """Each worker's speed in a step: work units (item costs) it computed per second of its chunks
    (NaN for a worker that computed nothing). *trace*: the step's intervals, items counted from 0."""
    cum = np.concatenate(([0.0], np.cumsum(np.asarray(costs, dtype=float))))
    work = np.zeros(trace.n_nodes)
    busy = np.zeros(trace.n_nodes)
    for w, f, n, t0, t1 in zip(trace.node, trace.first, trace.count, trace.t_start, trace.t_end):
        work[w] += cum[f + n] - cum[f]
        busy[w] += t1 - t0
    return [float(a / b) if b > 0 and a > 0 else math.nan for a, b in zip(work, busy)]


def predict(costs: Sequence[float], speeds: Sequence[float], nominal: Sequence[float], candidates: Sequence[str],
            *, simulate: Callable[..., Trace], latency: float | Sequence[float] = 0.0,
            max_items: int = 2048) -> tuple[list[tuple[str, float]], dict]:
    """Each candidate's predicted makespan for a step of items of *costs* on workers of measured
    *speeds* (work units per second; NaN: not measured, taken as its nominal share of the measured
    ones) whose balancers see *nominal* speeds; (``[(name, makespan)]`` best first, the state each
    carrying candidate would start from: name → state or None). *simulate*: the divisible engine,
    :func:`dlbkit.families.divisible.sim.engine.simulate_divisible` (passed in: that engine calls this module between
    steps, so this module cannot import it). See the module docstring."""
    costs = np.asarray(costs, dtype=float)
    block, g = coarsen(costs, max_items)
    nominal = [float(s) for s in nominal]
    measured = [float(s) for s in speeds]
    ok = [i for i, s in enumerate(measured) if math.isfinite(s) and s > 0]
    scale = (sum(measured[i] / nominal[i] for i in ok) / len(ok)) if ok else 1.0
    rate = [measured[i] if i in ok else nominal[i] * scale for i in range(len(nominal))]
    ratio = [r / s for r, s in zip(rate, nominal)]
    top = max(ratio)
    # nodes: the master, then one per worker at speed nominal·top, available ratio/top of the time; kept
    # within dlbkit's magnitudes (a speed at the limit measures a rounding above it: 1e30 → 1.0000000000000009e30)
    nodes = [Node("master", 1.0)] + [Node(f"w{i}", min(max(s * top, TINY), HUGE),
                                          availability=Constant(min(1.0, max(r / top, TINY))))
                                     for i, (s, r) in enumerate(zip(nominal, ratio))]
    # one per worker: each worker's own link to the master, in place of the network's one latency
    links = {f"w{i}": max(float(x), 0.0) for i, x in enumerate(latency)} if isinstance(latency, Sequence) else None
    platform = Platform(nodes, Network(0.0 if links is not None else max(float(latency), 0.0), 1e18), name="prediction")
    workload = Divisible(len(block))
    out, seeds = [], {}
    for name in candidates:
        b = make(name, {}, "candidate")
        if b.carries_state:
            tr = simulate(platform, workload, b, costs=np.vstack((block, block)), steps=2, link_latency=links)
            s1 = tr.meta["time_steps"][1]
            out.append((name, float(s1["end"] - s1["start"])))
            seeds[name] = tr.meta["carried"][0] if g == 1 else None
        else:
            tr = simulate(platform, workload, b, costs=block, requests_waiting=True, link_latency=links)
            out.append((name, float(tr.end_time)))
    order = sorted(range(len(out)), key=lambda i: (out[i][1], i))
    return [out[i] for i in order], seeds


def after_step(auto, state: dict, step: Trace, costs: Sequence[float], nominal: Sequence[float],
               latency: float | Sequence[float], duration: float, evaluate: bool = True, *,
               simulate: Callable[..., Trace]) -> dict:
    """What every engine does between two steps of a run whose balancer declares
    ``predicts_between_steps`` (``balancer="auto"``; the divisible simulator's ``steps``,
    ``dlbkit.Loop``, ``dlbkit.map`` with a recording): measure the step
    (*step*: its trace, items from 0; *costs*: its items' costs; *duration*: its makespan), ask *auto*
    whether an evaluation is due, predict the candidates if so, and book it all in
    ``step.meta["auto"]``; the state the next step starts from (*state*: what *auto* carried;
    *simulate*: as for :func:`predict`)."""
    speeds = measured_speeds(step, costs)
    used = state["chosen"]
    before = dict(state.get("predictions") or [])
    record = {"used": used, "measured": float(duration), "predicted": before.get(used),
              "speeds": speeds, "evaluated": None}
    state = auto.observe(state, speeds, duration)
    reason = auto.due(state) if evaluate else None  # no step follows the last one
    if reason is not None:
        preds, seeds = predict(costs, speeds, nominal, auto.candidate_names(), simulate=simulate, latency=latency,
                               max_items=auto.max_items)
        state = auto.evaluated(state, speeds, preds, seeds)
        record.update(evaluated=reason, predictions=[[n, m] for n, m in preds])
    record["next"] = state["chosen"]
    step.meta["auto"] = record
    return state

