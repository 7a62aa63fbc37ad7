"""Replay a recorded real run in the simulator, with the balancer it used or any other.

A real run (``dlbkit.run_map(..., record=path)``, ``dlbkit run --record``) records every chunk
(worker, items, when it was asked for, started and ended) and every item's measured cost. A replay
rebuilds, from that record alone, the simulator's picture of the run (a platform and a workload) and
simulates it with a chunking balancer through the public API (:func:`dlbkit.simulate`), so the recorded loads can be tried under other
policies (DESIGN.md: "record the run, and replay the recorded loads in the simulator").

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
  a worker's first (ask = the previous chunk's end); its mean, split evenly between the request and
  the reply, is the latency. The master's per-decision overhead is 0: worker-side timestamps cannot
  separate the master's serial work from parallel delays (process wake-ups on a busy machine, most
  of a round trip), and charging the round trip to a serial master double-counts the queueing the
  recorded round trips already include (it over-predicted SS by up to 7.6%). A run in which no
  worker took a second chunk within a step (STATIC) has no round trip to measure: its latency is 0,
  and the wait before the first chunks counts as startup. ``latency=`` and ``overhead=`` override
  the estimates.
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

A **graph** run (``dlbkit.run_graph(..., record=path)``, trace family ``graph``) replays into the graph
simulator instead (:func:`replay_graph`): its DAG with each task's measured cost as its load, one
node per worker at its recorded (emulated) speed and availability, transfers of the recorded data
volumes plus a latency, the median over tasks of how long a ready task waited on an idle worker (the
coordinator's dispatch; ``latency=`` overrides it); a static mapper's plan is timed by the ``static``
engine, an online mapper runs on the ``dynamic`` engine.

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
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dlbkit.face.api import simulate
from dlbkit.families.result import Result
from dlbkit.balancers.base import Balancer
from dlbkit.balancers.registry import REGISTRY, resolve
from dlbkit.errors import ConfigError
from dlbkit.model.availability import Piecewise, Recorded
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.runtime.record import load_trace
from dlbkit.families.divisible.sim.auto import round_trip_latency

__all__ = ["replay", "compare", "estimate", "check_replayable", "REPLAY_KINDS", "replay_graph", "replay_stream",
           "dispatch_latency", "ReplayModel",
           "ReplayResult", "MODELS"]

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
    latency: float  # seconds one way (half a request's round trip)
    overhead: float  # master seconds per decision
    startup: float  # seconds the master is busy before its first decision
    costs: np.ndarray = field(repr=False)
    model: str = "measured"

    def as_dict(self) -> dict:
        return {"model": self.model, "order": list(self.order), "speeds": [float(s) for s in self.speeds],
                "nominal_speeds": [float(s) for s in self.nominal], "latency": self.latency,
                "overhead": self.overhead, "startup": self.startup, "items": int(len(self.costs)),
                "total_work": float(self.costs.sum())}


class ReplayResult(Result):
    """A replay's :class:`~dlbkit.families.result.Result`, with the recorded run it replays (*recorded*) and the
    model used (*model*)."""

    def __init__(self, trace: Trace, balancer, *, platform=None, recorded: Trace | None = None,
                 model: ReplayModel | None = None):
        super().__init__(trace, balancer, platform=platform)
        self.recorded = recorded
        self.model = model

    @property
    def real_makespan(self) -> float:
        return self.recorded.makespan if self.recorded is not None and len(self.recorded.t_end) else math.nan

    @property
    def ratio(self) -> float:
        """Simulated makespan / real makespan."""
        real = self.real_makespan
        return self.makespan / real if real > 0 else math.nan


def _as_trace(trace_or_path: Trace | str | Path) -> Trace:
    if isinstance(trace_or_path, Trace):
        return trace_or_path
    if isinstance(trace_or_path, (str, Path)):
        return load_trace(trace_or_path)
    raise ConfigError("trace", type(trace_or_path).__name__, "a Trace or the path of a recorded trace file")


def _pieces(a: Any, until: float) -> Recorded:
    if isinstance(a, Recorded):
        return a
    if isinstance(a, Piecewise):
        times, levels = a.segments_until(until)
        return Recorded(tuple(float(t) for t in times), tuple(float(x) for x in levels))
    raise ConfigError("trace.availability", a, "realised availabilities (Piecewise)")


def estimate(trace: Trace, model: str = "measured") -> ReplayModel:
    """The replay model of a recorded real run (see the module docstring)."""
    if model not in MODELS:
        raise ConfigError("replay model", model, "one of " + ", ".join(repr(m) for m in MODELS))
    check_replayable(trace)
    costs = trace.meta.get("item_cost")
    if costs is None and trace.source in ("local", "mpi") and trace.n_intervals == 0:  # a real run of no items
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
        a = _pieces(trace.availability[w], until)
        served.append(trace.first[rows[0]] if rows else math.inf)
        if rows:
            first_start = min(first_start, trace.t_start[rows[0]])
        if model == "measured" and rows:
            pw = a.realise()
            expected = taken = 0.0
            for k in rows:
                f, n, t0 = trace.first[k], trace.count[k], trace.t_start[k]
                expected += pw.finish(t0, float(cum[f + n] - cum[f]) / s) - t0
                taken += trace.t_end[k] - t0
            if expected > 0 and taken > 0:
                s *= expected / taken
        speeds.append(float(s))
        avail.append(a)
    latency = round_trip_latency(trace)  # within a time step: a gap across steps is the step's barrier
    round_trip = 2 * latency
    overhead = 0.0
    # the first chunk starts a request's round trip after the master is free: any more is startup
    startup = first_start - latency - overhead if first_start - round_trip - overhead > 1e-9 * first_start else 0.0
    order = sorted(range(P), key=served.__getitem__)
    return ReplayModel(order, speeds, [float(s) for s in trace.speeds], avail, latency, overhead, startup,
                       costs, model)


#: the balancer kinds a recording of each replayable family is replayed under (its engines' kinds)
REPLAY_KINDS = {"divisible": ("chunking",), "graph": ("mapping", "graph-online"), "stream": ("placement",)}


def check_replayable(trace: Trace) -> None:
    """A ConfigError naming what can be replayed, for a recording of another family."""
    if trace.family not in REPLAY_KINDS:  # e.g. dlbkit.spmd(record=): kept for its plots, not replayable
        raise ConfigError("trace family", trace.family, "a recording dlbkit replays: a loop (dlbkit.map, run_map, "
                          "Loop, dlbkit run), a task graph (dlbkit.graph, run_graph) or a job stream (Cluster, "
                          "dlbkit cluster)")


def _balancer(trace: Trace, balancer: Balancer | str | None, params: Mapping | None) -> Balancer:
    kind = REPLAY_KINDS.get(trace.family)
    recorded = dict(trace.meta.get("balancer_params") or {})
    if balancer is None or (isinstance(balancer, str) and balancer.lower() == trace.balancer):
        if not trace.balancer:
            raise ConfigError("balancer", None, "a balancer name (the trace does not name the one it used)")
        try:
            return resolve(trace.balancer, {**recorded, **dict(params or {})}, kind=kind)
        except ConfigError as e:
            if balancer is None and not params:
                own = "" if str(trace.balancer).lower() in REGISTRY else (
                    " (a balancer of your own: import the module that registers it first: `import MODULE` "
                    "in Python, `dlbkit replay --import MODULE` on the command line)")
                raise ConfigError(f"recorded {e.field}", e.value, e.allowed + own) from None
            raise
    return resolve(balancer, params, kind=kind)


def replay(trace_or_path: Trace | str | Path, balancer: Balancer | str | None = None,
           params: Mapping[str, Any] | None = None, seed: int | None = None, *, model: str | None = None,
           latency: float | None = None, overhead: float | None = None) -> ReplayResult:
    """Simulate a recorded run's loads under *balancer* (default: the one it used); a
    :class:`ReplayResult` (``.makespan``, ``.metrics``, ``.trace``, ``.ratio`` to the real makespan).

    *trace_or_path*: a Trace (``RunResult.trace``) or a file written by ``RunResult.save`` /
    ``record=``. *balancer*: a registered name or object; with no name or the recorded name, the
    recorded parameters apply, updated by *params*. *seed*: for randomised balancers (default the
    recorded seed, else 0). *model*: ``"measured"`` (None: the default) or ``"emulated"`` speeds
    (module docstring); *latency* / *overhead* override the estimated network latency and master
    overhead (seconds). A task graph takes *latency* only and a job stream none of the three: they
    replay on their recorded speeds (a ConfigError names an option given for them).

    Example::

        dlbkit.run_map(f, items, balancer="fac2", record="run.json")
        replay("run.json").ratio               # about 1: the replay reproduces the real makespan
        replay("run.json", "awf-c").makespan   # what AWF-C would have done with the same loads
    """
    trace = _as_trace(trace_or_path)
    check_replayable(trace)
    loop_only = {"model": model, "overhead": overhead, **({"latency": latency} if trace.family == "stream" else {})}
    for name, v in loop_only.items():
        if trace.family != "divisible" and v is not None:  # not silently ignored
            raise ConfigError(name, v, f"absent for a {'task-graph' if trace.family == 'graph' else 'job-stream'} "
                              f"recording (a loop recording's option: a {trace.family} replays on its recorded speeds)")
    if trace.family == "graph":
        return replay_graph(trace, balancer, params, seed, latency=latency)
    if trace.family == "stream":
        return replay_stream(trace, balancer, params, seed)
    m = estimate(trace, model or "measured")
    for name, v in (("latency", latency), ("overhead", overhead)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
            raise ConfigError(name, v, "a finite number of seconds >= 0")
    if latency is not None:
        m.latency = float(latency)
    if overhead is not None:
        m.overhead = float(overhead)
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = _balancer(trace, balancer, params)
    P = trace.n_nodes
    nodes = [Node("master")] + [Node(f"w{w}", speed=m.speeds[w], availability=m.availability[w]) for w in m.order]
    platform = Platform(nodes, Network(latency=m.latency, bandwidth=_BANDWIDTH), name="replay")
    steps = trace.meta.get("time_steps")
    if steps:  # a time-stepping run (dlbkit.Loop): the same steps, one after another (model.steps)
        sizes = {int(s["items"]) for s in steps}
        if len(sizes) != 1:
            raise ConfigError("trace time_steps", sorted(sizes), "steps of one item count (the simulator runs "
                              "the same loop every step)")
        n = sizes.pop()
        tr = simulate(platform, Divisible(n), b, seed=seed, master=0, master_overhead=m.overhead,
                      costs=m.costs.reshape(len(steps), n), startup=m.startup, steps=len(steps)).trace
    else:
        tr = simulate(platform, Divisible(len(m.costs)), b, seed=seed, master=0, master_overhead=m.overhead,
                      costs=m.costs, startup=m.startup).trace
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


def replay_stream(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                  seed: int | None = None, *, info: Any = None) -> ReplayResult:
    """A job stream recorded by :class:`dlbkit.Cluster` (``record=``, trace family ``stream``) in the
    stream simulator: every job at its recorded submit time and origin, with its measured cost (seconds
    of the recording machine, before emulation's stretch) as its demand, on one node per cluster node
    at its emulated speed with its slots as cores, placed by *balancer* (default: the recorded one) with the information
    model *info* (default: the recorded one, e.g. ``{"model": "gossip", "period": 0.01}``; ``"exact"``
    for the ideal). Not replayed: the recorded nodes' faults (every node stays alive), the time a
    job spends crossing the pipes (the network's default latency per forward instead), and
    availability traces (the nominal speeds only)."""
    from dlbkit.families.stream.model.workload import Stream  # noqa: PLC0415 - only for a stream replay
    s = trace.series
    if not len(s.get("job_time", ())):
        raise ConfigError("trace", "no jobs", "a stream recording with at least one finished job")
    order = np.argsort(s["job_time"], kind="stable")
    rows = tuple((max(0.0, float(s["job_time"][k])), int(s["job_origin"][k]), max(float(s["demand"][k]), 1e-9), 1)
                 for k in order)
    n = trace.n_nodes
    speeds = list(trace.speeds) or [1.0] * n
    slots = list(trace.meta.get("slots") or [1] * n)  # a cluster node's slots are a simulated node's cores
    platform = Platform([Node(f"n{k}", speed=float(speeds[k]), cores=int(slots[k])) for k in range(n)], Network(),
                        name="replay")
    if info is None:
        info = dict(trace.meta.get("info_params") or {"model": trace.meta.get("info") or "exact"})
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = _balancer(trace, balancer, params)
    r = simulate(platform, Stream(trace=rows, name="recorded"), b, seed=seed, info=info)
    r.trace.source = "replay"
    r.trace.meta.update(replay_of=trace.balancer, balancer_params=b.get_params())
    return ReplayResult(r.trace, b, platform=platform, recorded=trace)


def replay_graph(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                 seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """Simulate a recorded real graph run (``dlbkit.run_graph``) under *balancer* (default: the one it
    used) in the graph simulator; see the module docstring."""
    from dlbkit.families.graph.balancers.base import OnlineMapping
    from dlbkit.families.graph.model.workload import TaskGraph
    from dlbkit.families.graph.sim.static import simulate_graph
    from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic

    dag, costs = trace.meta.get("dag"), trace.meta.get("item_cost")
    if not isinstance(dag, Mapping) or costs is None:
        raise ConfigError("trace meta.dag", "<missing>", "the DAG and measured task costs of a real graph run")
    tasks = dag.get("tasks", [])
    if len(tasks) != len(costs):
        raise ConfigError("trace item_cost", f"{len(costs)} costs", f"one per task of meta.dag ({len(tasks)})")
    edges = tuple((e["from"], e["to"], e.get("data", 0.0)) for e in dag.get("edges", []))
    g = TaskGraph(tuple(t["id"] for t in tasks), loads=tuple(float(c) for c in costs), edges=edges,
                  name=str(dag.get("name", "graph")))
    if latency is None:
        latency = dispatch_latency(trace)
    elif isinstance(latency, bool) or not isinstance(latency, (int, float)) or not math.isfinite(latency) or latency < 0:
        raise ConfigError("latency", latency, "a finite number of seconds >= 0")
    P = trace.n_nodes
    until = max([float(trace.end_time)] + [float(t) for t in trace.t_end])
    nodes = [Node(f"w{w}", speed=float(trace.speeds[w]) if trace.speeds else 1.0,
                  availability=_pieces(trace.availability[w], until) if trace.availability else Recorded((0.0,), (1.0,)))
             for w in range(P)]
    platform = Platform(nodes, Network(latency=float(latency), bandwidth=1.0), name="replay")
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = _balancer(trace, balancer, params)
    engine = simulate_graph_dynamic if isinstance(b, OnlineMapping) else simulate_graph
    tr = engine(platform, g, b, seed=seed)
    tr.source = "replay"
    tr.meta.update(replay_of=trace.balancer, replay_latency=float(latency), balancer_params=b.get_params())
    return ReplayResult(tr, b, platform=platform, recorded=trace)


def dispatch_latency(trace: Trace) -> float:
    """The median wait of a task that was ready on an idle worker (from ready, or the worker's previous
    end, to its start): the coordinator's dispatch, what the replay charges as a transfer's latency."""
    last: dict[int, float] = {}
    waits = []
    for k in sorted(range(trace.n_intervals), key=trace.t_start.__getitem__):
        w = trace.node[k]
        ready = max(trace.t_ask[k], last.get(w, 0.0))
        if trace.t_start[k] >= ready:
            waits.append(trace.t_start[k] - ready)
        last[w] = trace.t_end[k]
    return float(np.median(waits)) if waits else 0.0


def compare(trace_or_path: Trace | str | Path, balancers: Sequence[str | Balancer] = (),
            params: Mapping[str, Any] | None = None, seed: int | None = None, *,
            model: str | None = None) -> list[dict]:
    """Replay the recorded balancer (as recorded), then each of *balancers* (with *params*, e.g. from
    ``dlbkit replay --param``); one row per replay, the recorded one first.

    Each row: ``balancer``, ``params``, ``makespan`` (simulated), ``efficiency`` (its lower bound /
    makespan), ``recorded`` (True for the balancer the run used), and for that row ``real_makespan``
    and ``ratio`` (replay / real; None on the other rows). A named balancer equal to the recorded one
    with no *params* is the recorded row and is not repeated.
    """
    trace = _as_trace(trace_or_path)
    rows = []
    seen: list = []
    for b in [None, *balancers]:
        if b is None:
            r = replay(trace, None, None, seed, model=model)
        else:
            if isinstance(b, str) and b.lower() == trace.balancer and not params:
                continue
            r = replay(trace, b, params, seed, model=model)
        key = (r.balancer.name, sorted(r.balancer.get_params().items(), key=lambda kv: kv[0]))
        if key in seen:
            continue
        seen.append(key)
        rows.append({"balancer": r.balancer.name, "params": r.balancer.get_params(), "makespan": r.makespan,
                     "efficiency": r.metrics["efficiency"], "recorded": b is None,
                     "real_makespan": r.real_makespan if b is None else None,
                     "ratio": r.ratio if b is None else None})
    return rows
