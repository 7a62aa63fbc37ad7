"""Replay a recorded real SPMD run (``dlbkit.run_spmd(..., record=path)``, ``dlbkit.spmd``) in the SPMD family's
pipelined simulator, with the balancer it used or any other repartition rule (the family's ``Family.replay``:
:func:`replay_spmd`, and ``dlbkit replay``'s table, :func:`report`).

What a real SPMD run records, per iteration and worker (``trace.series``, loops × workers): ``loop_time``, the
seconds its ``step`` took (the emulated stretch included), and ``points``, the interior rows it held; every
row of the trace also says when the worker's halos were sent (``t_ask``) and its step began (``t_start``).

The replay model (:func:`estimate`), in the simulator's units (one row is one data point, DP):

* **Workload**: an :class:`~dlbkit.families.spmd.model.workload.Spmd` of the recorded iterations, starting from
  the recorded first split, exchanging ``halo`` rows with each neighbour per loop (``boundary``; ``boundary_k``
  0: slabs), on the recorded ``line`` layout, without CPU noise (the measured speeds are averages: the
  run's loop-to-loop variation is not replayed, and every replay is deterministic).
* **Platform**: one node per worker whose **speed** (DP/s) is the rows it computed over the seconds its steps
  took, Σ points / Σ loop_time over the iterations: a per-row cost, with the emulation's stretch and the step's
  fixed cost per call folded in. No availability (it is in the measured speed, and the simulator reads
  availability on its loop clock, not the run's) and no memory limit (no swapping).
* **Network**: the simulator starts a worker's loop when it and its neighbours have ended the previous one, and
  adds a latency per neighbour to the loop (000's pipeline). The recorded counterpart is the time from when a
  worker's block and its neighbours' blocks of the previous iteration were all computed to when its step began
  (the halos' trip through the coordinator, the wait for a slower neighbour left out); its mean over
  iterations and workers, over the neighbours' count, is the latency (:func:`exchange_latency`;
  ``latency=`` overrides it). The bandwidth is unlimited (the halo rows' bytes are not measured).
* **Startup**: the workers start their first iteration when the recorded run's first halos were sent (the time
  to start the processes); the replay's times are shifted by it, so replay/real compares like with like.

Transfers cost the simulator's latency plus nothing per DP (as the halos), where the runtime's moved rows
cross the coordinator; with the balancer's decisions made on the same loop times every window (the
recorded ``window``), a replay under the recorded balancer repeats its transfers when the measured speeds
differ as the real loop times did.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_seconds, makespan_report, recorded_balancer,
                                    speeds_text)
from dlbkit.families.spmd.model.workload import Spmd
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["estimate", "exchange_latency", "replay_spmd", "report"]

#: the replay network's bandwidth (bytes/s): the halos' bytes cross pipes and are not measured
_BANDWIDTH = 1e15


def estimate(trace: Trace, latency: float | None = None) -> dict:
    """The replay model of a recorded real SPMD run, as data (the module docstring): ``speeds`` (DP/s),
    ``latency``, ``startup``, ``split``, ``loops``, ``halo``, ``window``, ``layout``; a ConfigError naming the field
    for a recording that lacks them (a simulated run has no measured loop times to replay)."""
    lt, pts = trace.series.get("loop_time"), trace.series.get("points")
    if trace.source in ("sim", "replay") or trace.meta.get("halo") is None:
        raise ConfigError("trace meta.halo", trace.meta.get("halo", "<missing>"), "the halo of a real SPMD run "
                          "(dlbkit.spmd, run_spmd; a simulated run cannot be replayed)")
    P = trace.n_nodes
    lt = np.asarray(lt, dtype=float) if lt is not None else np.empty((0, P))
    pts = np.asarray(pts, dtype=float) if pts is not None else np.empty((0, P))
    if lt.ndim != 2 or lt.shape != pts.shape or lt.shape[1] != P or len(lt) == 0:
        raise ConfigError("trace series.loop_time", f"shape {lt.shape}", f"loops × {P} workers, with points alike")
    busy = lt.sum(axis=0)
    if not (busy > 0).all():
        raise ConfigError("trace series.loop_time", busy.tolist(), "a positive total per worker")
    speeds = (pts.sum(axis=0) / busy).tolist()
    layout = str(trace.meta.get("layout", "line"))
    if latency is None:
        latency = exchange_latency(trace, layout)
    else:
        check_seconds("latency", latency)
    startup = float(min(trace.t_ask)) if trace.n_intervals else 0.0
    return {"model": "measured", "speeds": [float(s) for s in speeds], "latency": float(latency),
            "startup": startup, "split": [int(p) for p in pts[0]], "loops": len(lt),
            "halo": int(trace.meta["halo"]), "window": int(trace.meta.get("window", 10)), "layout": layout,
            "items": int(pts[0].sum())}


def _neighbours(i: int, P: int, layout: str) -> list[int]:
    if layout == "ring" and P > 2:
        return [(i - 1) % P, (i + 1) % P]
    return [j for j in (i - 1, i + 1) if 0 <= j < P]


def exchange_latency(trace: Trace, layout: str = "line") -> float:
    """The per-neighbour latency of a recorded SPMD run: per iteration after the first and worker, the time from
    when its block and its neighbours' blocks of the previous iteration were all computed to when its step began
    (the halos' trip through the coordinator, without the wait for a slower neighbour), over its neighbours'
    count; the mean of these (0 for one worker or one iteration): the makespan sums them, so the mean, not a
    typical one (the median fell to 0.62 of the real makespan on a busy machine, the mean to 0.88)."""
    P = trace.n_nodes
    start: dict[tuple[int, int], float] = {}
    end: dict[tuple[int, int], float] = {}
    for k in range(trace.n_intervals):
        key = (int(trace.round_of[k]), int(trace.node[k]))
        start[key], end[key] = trace.t_start[k], trace.t_end[k]
    waits = []
    for (loop, i), t in start.items():
        nb = _neighbours(i, P, layout)
        before = [end.get((loop - 1, j)) for j in [i, *nb]]
        if nb and loop > 0 and None not in before:
            waits.append(max(0.0, t - max(before)) / len(nb))
    return float(np.mean(waits)) if waits else 0.0


def replay_spmd(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """A recorded real SPMD run in the pipelined simulator under *balancer* (default: the one it used, a
    repartition rule); see the module docstring. *latency* overrides the estimated per-neighbour latency (s)."""
    from dlbkit.families.spmd.sim.platform import simulate_spmd_platform

    m = estimate(trace, latency)
    platform = Platform([Node(f"w{w}", speed=s) for w, s in enumerate(m["speeds"])],
                        Network(latency=m["latency"], bandwidth=_BANDWIDTH), name="replay")
    workload = Spmd(points=tuple(m["split"]), loops=m["loops"], boundary=float(m["halo"]), boundary_k=0.0,
                    noise=0.0, layout=m["layout"])
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    tr = simulate_spmd_platform(platform, workload, b, seed=seed, window=m["window"])
    s = m["startup"]  # the replay's loops begin when the recorded run's did
    tr.t_ask = [t + s for t in tr.t_ask]
    tr.t_start = [t + s for t in tr.t_start]
    tr.t_end = [t + s for t in tr.t_end]
    tr.end_time = float(tr.end_time) + s
    tr.source = "replay"
    tr.meta.update(replay_of=trace.balancer, replay_model=m, balancer_params=b.get_params() if b else {})
    return ReplayResult(tr, b, platform=platform, recorded=trace, model=m)


def report(trace: Trace, named, *, seed: int | None, source: str, label) -> ReplayReport:
    """``dlbkit replay`` of an SPMD run (the family's ``Replay.report``): the makespan table (no efficiency: an
    SPMD run has no lower bound), under the line of the replay model."""
    m = estimate(trace)
    line = (f"model: measured speeds {speeds_text(m['speeds'])} DP/s; latency {m['latency'] * 1e3:.3g} ms per "
            f"neighbour; startup {m['startup'] * 1e3:.3g} ms")
    return makespan_report(trace, named, replay_spmd, seed=seed, source=source, label=label, model=m,
                           model_line=line, count=m["items"], unit="rows", efficiency=False)
