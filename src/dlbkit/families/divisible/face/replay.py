"""Replay a recorded real loop (``dlbkit.run_map(..., record=path)``, ``dlbkit run --record``, ``dlbkit.Loop``) in the
divisible family's simulator, with the balancer it used or any other (the family's ``Family.replay``).

A real run records every chunk (worker, items, when it was asked for, started and ended) and every item's
measured cost. A replay rebuilds, from that record alone, the simulator's picture of the run (a platform and a
workload) and simulates it with a chunking balancer through :func:`dlbkit.simulate`, so the recorded loads can
be tried under other policies.

The replay model (:func:`estimate`):

* **Workload**: the recorded items with their *measured* costs (seconds on the recording machine,
  before emulation's stretch), replayed exactly (the simulator's ``costs``).
* **Platform**: a master node that does not compute, plus one node per worker, in the order the
  master first served them (the first item of each worker's first chunk: the simulator serves
  requests that arrive together in node order, so the opening decisions go to the same workers).
* **Speed** (``model="measured"``, the default): worker i's emulated speed s_i times the ratio of
  the time its chunks should have taken (its items' costs at s_i under its recorded availability) to
  the time they did take. With a constant availability of 1 this is exactly
  Σ costs of i's items / Σ durations of i's chunks. It folds in everything the per-item timers miss:
  the emulation's oversleep, the per-chunk cost of calling the function and returning results, and
  contention for the CPU between items. The recorded availability (its pieces, up to the end of the
  run; its last level after it) is kept, so a varying background load stays varying.
  ``model="emulated"`` takes s_i and the recorded availability as they were set.
* **Network**: one request's round trip through the master is ``t_start - t_ask`` of every chunk but
  a worker's first (ask = the previous chunk's end); the mean of a worker's, split evenly between the
  request and the reply, is that worker's latency to the master (the engine's ``link_latency``), so
  a worker behind a slow link is replayed behind a slow link, not at the average of all (a worker
  with one chunk: the mean over every worker's round trips, the ``latency`` of the model). The
  master's per-decision overhead is 0: worker-side timestamps cannot
  separate the master's serial work from parallel delays (process wake-ups on a busy machine, most
  of a round trip), and charging the round trip to a serial master double-counts the queueing the
  recorded round trips already include (it over-predicted SS by up to 7.6%). A run in which no
  worker took a second chunk within a step (STATIC) has no round trip to measure: its latency is 0,
  and the wait before the first chunks counts as startup. ``latency=`` (one latency for every link)
  and ``overhead=`` override the estimates.
* **Startup**: the master is busy until the first recorded chunk starts, less the reply's latency:
  starting worker processes (``local``) or ranks (``mpi``). The engine's ``startup`` option models
  it: the master starts the workers one after another, an equal share of the time each, before its
  first decision, and no message is counted for it (it is not balancing traffic); a first chunk
  that starts one round trip after time 0, as in a simulation, means no startup.

Why ``measured``: on 11 sets of real runs (4 local workers emulating speeds 1, 1, 0.5, 0.25; 200–300
items of 0.5–3 ms of busy loop on a 2-core machine, idle and under heavy background CPU load) replaying
with the balancer used gave replay/real makespan ratios of SS 0.963–1.022, GSS 0.986–0.998, FAC2
0.983–0.998, AWF-C 0.945–1.024 and STATIC 0.984–0.998; ``emulated`` did as well on the balancers with
few chunks but fell to 0.935 on SS: with one item per chunk, hundreds of fixed per-chunk costs add
up, and only the measured speed sees them. Without the startup term AWF-C's error rose to 7% (short
runs spend 10–40 ms starting workers). Replaying a *simulated* run (item costs known, no master
overhead) reproduces it exactly, with either model (tests/face/test_record_replay.py).

A **time-stepping** recording (``dlbkit.Loop``: ``meta["time_steps"]``, :mod:`dlbkit.families.divisible.model.steps`)
replays as the simulator's ``steps``: the same model (speeds over all steps), step k's measured costs
in step k, the latency from round trips within a step (a gap across a step boundary is the step's
barrier, not a round trip); the caller's own time between two steps is not replayed, so the replay's
total is the steps back to back. Steps of different item counts cannot be replayed (a ConfigError).

Not replayed: faults (every worker stays alive; a worker that died is replayed at the speed of the
chunks it finished). Under MPI across machines the recorded times carry the ranks' clock offsets'
error (the start barrier's exit skew, :mod:`dlbkit.runtime.backends.mpi`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.families.divisible.model.links import link_latencies, round_trip_latency
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_seconds, makespan_report, measured_speed,
                                    pieces, recorded_balancer, speeds_text)
from dlbkit.families.simulate import simulate
from dlbkit.model.availability import Recorded
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["estimate", "replay_loop", "report", "ReplayModel", "MODELS"]

MODELS = ("measured", "emulated")
#: the replay network's bandwidth (bytes/s): no replayed message carries bytes
_BANDWIDTH = 1e9


@dataclass
class ReplayModel:
    """The simulator's picture of a recorded run (per recorded worker, indexed as in the trace)."""

    order: list[int]  # recorded workers in the order the master first served them
    speeds: list[float]  # replay speed per worker (work units, i.e. recorded seconds, per second)
    nominal: list[float]  # the recorded (emulated) speed factors
    availability: list[Recorded]
    latency: float  # seconds one way (half a request's round trip), over every worker's requests
    overhead: float  # master seconds per decision
    startup: float  # seconds the master is busy before its first decision
    costs: np.ndarray = field(repr=False)
    model: str = "measured"
    links: list[float] | None = None  # per worker, seconds one way: its own requests' (None: latency)

    def as_dict(self) -> dict:
        return {"model": self.model, "order": list(self.order), "speeds": [float(s) for s in self.speeds],
                "nominal_speeds": [float(s) for s in self.nominal], "latency": self.latency,
                "link_latency": None if self.links is None else [float(x) for x in self.links],
                "overhead": self.overhead, "startup": self.startup, "items": int(len(self.costs)),
                "total_work": float(self.costs.sum())}


def estimate(trace: Trace, model: str = "measured") -> ReplayModel:
    """The replay model of a recorded real run (see the module docstring)."""
    if model not in MODELS:
        raise ConfigError("replay model", model, "one of " + ", ".join(repr(m) for m in MODELS))
    if trace.family != "divisible":  # the model is a loop's: chunks of items
        raise ConfigError("trace family", trace.family, "a loop recording (dlbkit.map, run_map, Loop, dlbkit run)")
    costs = trace.meta.get("item_cost")
    if costs is None and trace.source in ("local", "mpi", "dask") and trace.n_intervals == 0:  # a real run of no items
        raise ConfigError("trace chunks", 0, "a run that computed at least one item")
    if costs is None:
        raise ConfigError("trace item_cost", "<missing>",
                          "the measured per-item costs of a real run (a simulated trace cannot be replayed)")
    costs = np.asarray(costs, dtype=float)
    if len(costs) == 0 or trace.n_intervals == 0:
        raise ConfigError("trace chunks", trace.n_intervals, "a run that computed at least one item")
    P = trace.n_nodes
    if len(trace.speeds) != P or len(trace.availability) != P:
        raise ConfigError("trace speeds", len(trace.speeds), f"one speed and availability per worker ({P})")
    cum = np.concatenate(([0.0], np.cumsum(costs)))
    until = max(max(trace.t_end), float(trace.end_time))
    rows_of: list[list[int]] = [[] for _ in range(P)]
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        rows_of[trace.node[k]].append(k)
    speeds, avail, served = [], [], []
    first_start = math.inf
    for w in range(P):
        rows = rows_of[w]
        s = float(trace.speeds[w])
        a = pieces(trace.availability[w], until)
        served.append(trace.first[rows[0]] if rows else math.inf)
        if rows:
            first_start = min(first_start, trace.t_start[rows[0]])
        if model == "measured" and rows:
            s = measured_speed(s, a, ((float(cum[trace.first[k] + trace.count[k]] - cum[trace.first[k]]),
                                       trace.t_start[k], trace.t_end[k]) for k in rows))
        speeds.append(float(s))
        avail.append(a)
    latency = round_trip_latency(trace)  # within a time step: a gap across steps is the step's barrier
    round_trip = 2 * latency
    overhead = 0.0
    # the first chunk starts a request's round trip after the master is free: any more is startup
    startup = first_start - latency - overhead if first_start - round_trip - overhead > 1e-9 * first_start else 0.0
    order = sorted(range(P), key=served.__getitem__)
    return ReplayModel(order, speeds, [float(s) for s in trace.speeds], avail, latency, overhead, startup,
                       costs, model, link_latencies(trace))


def replay_loop(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                seed: int | None = None, *, model: str | None = None, latency: float | None = None,
                overhead: float | None = None) -> ReplayResult:
    """A recorded loop in the divisible simulator under *balancer* (default: the one it used); see the module
    docstring. *model*: ``"measured"`` (None: the default) or ``"emulated"`` speeds; *latency* / *overhead*
    override the estimated network latency and master overhead (seconds)."""
    m = estimate(trace, model or "measured")
    for name, v in (("latency", latency), ("overhead", overhead)):
        if v is not None:
            check_seconds(name, v)
    if latency is not None:
        m.latency, m.links = float(latency), None
    if overhead is not None:
        m.overhead = float(overhead)
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    P = trace.n_nodes
    nodes = [Node("master")] + [Node(f"w{w}", speed=m.speeds[w], availability=m.availability[w]) for w in m.order]
    platform = Platform(nodes, Network(latency=m.latency, bandwidth=_BANDWIDTH), name="replay")
    links = None if m.links is None else {f"w{w}": m.links[w] for w in m.order}
    steps = trace.meta.get("time_steps")
    if steps:  # a time-stepping run (dlbkit.Loop): the same steps, one after another (model.steps)
        sizes = {int(s["items"]) for s in steps}
        if len(sizes) != 1:
            raise ConfigError("trace time_steps", sorted(sizes), "steps of one item count (the simulator runs "
                              "the same loop every step)")
        n = sizes.pop()
        tr = simulate(platform, Divisible(n), b, seed=seed, master=0, master_overhead=m.overhead,
                      costs=m.costs.reshape(len(steps), n), startup=m.startup, steps=len(steps),
                      link_latency=links).trace
    else:
        tr = simulate(platform, Divisible(len(m.costs)), b, seed=seed, master=0, master_overhead=m.overhead,
                      costs=m.costs, startup=m.startup, link_latency=links).trace
    # back to the recorded numbering: replay worker j is recorded worker order[j]
    pos = {w: j for j, w in enumerate(m.order)}
    tr.node = [m.order[j] for j in tr.node]
    tr.speeds = [tr.speeds[pos[w]] for w in range(P)]
    tr.availability = [tr.availability[pos[w]] for w in range(P)]
    tr.node_of = [tr.node_of[pos[w]] for w in range(P)]
    tr.source = "replay"
    tr.meta.update(replay_of=trace.balancer, replay_model=m.as_dict(), item_cost=m.costs.tolist(),
                   balancer_params=b.get_params())
    return ReplayResult(tr, b, platform=platform, recorded=trace, model=m)


def report(trace: Trace, named, *, seed: int | None, source: str, label, model: str | None = None) -> ReplayReport:
    """``dlbkit replay`` of a loop (the family's ``Replay.report``): the makespan table, under the line of the
    replay model (*model*, ``--model``: measured or emulated speeds)."""
    m = estimate(trace, model or "measured").as_dict()
    line = (f"model: {m['model']} speeds {speeds_text(m['speeds'])}; latency {m['latency'] * 1e3:.3g} ms; master "
            f"overhead {m['overhead'] * 1e3:.3g} ms; startup {m['startup'] * 1e3:.3g} ms")

    def replay(t, b, params, s):
        return replay_loop(t, b, params, s, model=model)

    return makespan_report(trace, named, replay, seed=seed, source=source, label=label, model=m, model_line=line,
                           count=m["items"], unit="items")
