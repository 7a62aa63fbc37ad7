"""Replay a recorded real SPMD run (``dlbkit.run_spmd(..., record=path)``, ``dlbkit.spmd``) in the SPMD family's
pipelined simulator, with the balancer it used or any other repartition rule (the family's ``Family.replay``:
:func:`replay_spmd`, and ``dlbkit replay``'s table, :func:`report`).

What a real SPMD run records, per iteration and worker (``trace.series``, loops × workers): ``loop_time``, the
seconds its ``step`` took (the emulated stretch included), and ``points``, the interior rows it held; every
row of the trace also says when the worker's halos were sent (``t_ask``) and its step began (``t_start``).

The replay model (:func:`estimate`), in the simulator's units (one row is one data point, DP): the simulator
decides (each worker's loop times from its rows and speed, the balancer's transfers on them), and the runtime's
clock places those loops in time (:func:`runtime_finish_times`):

* **Workload**: an :class:`~dlbkit.families.spmd.model.workload.Spmd` of the recorded iterations, starting from
  the recorded first split, exchanging ``halo`` rows with each neighbour per loop (``boundary``; ``boundary_k``
  0: slabs), on the recorded ``line`` layout, without CPU noise (the measured speeds are averages: the
  run's loop-to-loop variation is not replayed, and every replay is deterministic).
* **Platform**: one node per worker whose **speed** (DP/s) is the rows it computed over the seconds its steps
  took, Σ points / Σ loop_time over the iterations: a per-row cost, with the emulation's stretch and the step's
  fixed cost per call folded in. No availability (it is in the measured speed, and the simulator reads
  availability on its loop clock, not the run's) and no memory limit (no swapping). The simulator's network
  costs nothing (no latency, unlimited bandwidth): its loop times are the steps' alone, as the recorded ones
  (and the runtime's balancing view) are, and the halos' and moves' times are the clock's below.
* **Clock** (the runtime's, :mod:`dlbkit.families.spmd.runtime.program`): the coordinator sends a worker its
  next step when it and its neighbours have finished the previous one, and every ``window`` iterations (a
  balancing round) when all workers have. So a worker's step begins **latency** after its inputs were all
  computed: the halos' round trip through the coordinator, once per step whatever the count of neighbours
  (:func:`exchange_latency`: the mean, over the recorded steps outside balancing rounds and the workers, of the
  time from when its block and its neighbours' blocks of the previous iteration were computed to when its step
  began; ``latency=`` overrides it). A balancing round's steps begin **barrier** after the last worker's previous
  step ended (the round's view, the balancer's decision, the dispatch), plus **move** per transfer of that
  round (a slab shipped and taken through the coordinator: two round trips), both means over the recorded
  rounds (:func:`round_costs`). A transfer the simulator decides at another loop (it restarts a worker's
  window after it moves) costs the move before both ends' next step.
* **Startup**: each worker's first step begins when the recorded one's did (the time to start the processes
  and send the first halos), so replay/real compares like with like.

What it leaves out (the tests' tolerance): the loop-to-loop variation of the steps' times (a worker's speed is
its mean), the per-call part of a step's cost (scaled with the rows as the per-row part is, when rows move), and
the simulator's own balancing schedule where it differs from the runtime's (after a transfer it measures a
fresh window from the loop after, the runtime from the next round), so that the replay's balancer may move
somewhat other rows at somewhat other loops than the real one did on its noisier measurements.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import (ReplayReport, ReplayResult, check_no_death, check_seconds, makespan_report,
                                    recorded_balancer, speeds_text)
from dlbkit.families.spmd.model.workload import Spmd
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Column, Trace

__all__ = ["estimate", "exchange_latency", "round_costs", "runtime_finish_times", "replay_spmd", "report"]

#: the replay network's bandwidth (bytes/s): the halos' bytes cross pipes and are not measured
_BANDWIDTH = 1e15


def estimate(trace: Trace, latency: float | None = None) -> dict:
    """The replay model of a recorded real SPMD run, as data (the module docstring): ``speeds`` (DP/s),
    ``latency`` (s per step), ``barrier`` and ``move`` (s per balancing round and per transfer), ``starts`` (each
    worker's first step, s) and ``startup`` (the earliest), ``split``, ``loops``, ``halo``, ``window``,
    ``rounds`` (the loops that begin a balancing round), ``layout``; a ConfigError naming the field for a
    recording that lacks them (a simulated run has no measured loop times to replay)."""
    check_no_death(trace, "the run went back to a checkpoint and carried on with one worker fewer, which one line "
                          "of workers does not describe")
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
    window = int(trace.meta.get("window", 10))
    rounds = _rounds(len(lt), window)
    recorded_rounds = [int(w["loop"]) for w in trace.meta.get("windows") or ()]
    if latency is None:
        latency = exchange_latency(trace, layout, recorded_rounds)
    else:
        check_seconds("latency", latency)
    barrier, move = round_costs(trace, latency, recorded_rounds)
    start, _end = _times(trace, len(lt))
    starts = [float(t) for t in start[0]]
    return {"model": "measured", "speeds": [float(s) for s in speeds], "latency": float(latency),
            "barrier": barrier, "move": move, "starts": starts, "startup": min(starts),
            "split": [int(p) for p in pts[0]], "loops": len(lt), "halo": int(trace.meta["halo"]), "window": window,
            "rounds": rounds, "layout": layout, "items": int(pts[0].sum())}


def _rounds(loops: int, window: int) -> list[int]:
    """The loops before which the runtime balances: window, 2·window, … below *loops*."""
    return list(range(window, loops, window)) if window >= 1 else []


def _neighbours(i: int, P: int, layout: str) -> list[int]:
    if layout == "ring" and P > 2:
        return [(i - 1) % P, (i + 1) % P]
    return [j for j in (i - 1, i + 1) if 0 <= j < P]


def _times(trace: Trace, loops: int) -> tuple[np.ndarray, np.ndarray]:
    """Each recorded step's start and end (loops × workers)."""
    start, end = np.zeros((loops, trace.n_nodes)), np.zeros((loops, trace.n_nodes))
    ct = trace.intervals()
    start[ct["round"], ct["node"]] = ct["t_start"]
    end[ct["round"], ct["node"]] = ct["t_end"]
    return start, end


def exchange_latency(trace: Trace, layout: str = "line", rounds=None) -> float:
    """The per-step latency of a recorded SPMD run: per iteration after the first that does not begin a
    balancing round (*rounds*: the loops that do; by default the recorded ``meta["windows"]``) and per worker,
    the time from when its block and its neighbours' blocks of the previous iteration were all computed to when
    its step began (the halos' trip through the coordinator, without the wait for a slower neighbour); the mean
    of these (0 for one iteration): the makespan sums them, so the mean, not a typical one (the median fell to
    0.62 of the real makespan on a busy machine, the mean to 0.88). Once per step, not per neighbour: the
    coordinator relays a worker's halos in one message, and the recorded waits of a worker with one neighbour
    and of one with two are alike (0.30 and 0.30–0.34 ms medians on 4 workers)."""
    if rounds is None:
        rounds = [int(w["loop"]) for w in trace.meta.get("windows") or ()]
    P = trace.n_nodes
    loops = int(max(trace.round_of)) + 1 if trace.n_intervals else 0
    start, end = _times(trace, loops)
    skip = set(rounds)
    waits = [max(0.0, start[k, i] - max(end[k - 1, j] for j in [i, *_neighbours(i, P, layout)]))
             for k in range(1, loops) if k not in skip for i in range(P)]
    return float(np.mean(waits)) if waits else 0.0


def round_costs(trace: Trace, latency: float, rounds=None) -> tuple[float, float]:
    """``(barrier, move)`` of a recorded SPMD run: per balancing round (*rounds*, by default the recorded ones),
    the mean over workers of the time from when the last worker's previous step ended to when each worker's step
    began; *barrier* is their mean over the rounds that moved no rows (*latency* if every round moved some),
    *move* the mean over the others of (that time − barrier) / the round's transfers (2 × *latency* if none
    moved any: a move is two round trips through the coordinator, a step's dispatch one), at least 0."""
    if rounds is None:
        rounds = [int(w["loop"]) for w in trace.meta.get("windows") or ()]
    loops = int(max(trace.round_of)) + 1 if trace.n_intervals else 0
    start, end = _times(trace, loops)
    moves: dict[int, int] = {}
    for t in trace.meta.get("transfers") or ():  # (round, src, dst, asked, moved)
        if int(t[4]) > 0:
            moves[int(t[0])] = moves.get(int(t[0]), 0) + 1
    still, moving = [], []
    for b in rounds:
        if 0 < b < loops:
            wait = float(np.mean(np.maximum(start[b] - end[b - 1].max(), 0.0)))
            (moving if moves.get(b) else still).append((wait, moves.get(b, 0)))
    barrier = float(np.mean([w for w, _ in still])) if still else float(latency)
    move = float(np.mean([max(0.0, w - barrier) / n for w, n in moving])) if moving else 2.0 * float(latency)
    return barrier, move


def runtime_finish_times(loop_time: np.ndarray, m: Mapping[str, Any], transfers=()) -> np.ndarray:
    """When each of a replay's loops ends (loops × workers) on the runtime's clock (the module docstring):
    worker i's first step begins at ``m["starts"][i]``; step k (> 0) ``m["latency"]`` after i and its
    neighbours ended step k − 1, or, for k in ``m["rounds"]``, ``m["barrier"]`` + ``m["move"]`` × that round's
    *transfers* after every worker ended it; a transfer ``(loop, src, dst, dp)`` decided at the end of a loop
    that does not end before a round costs its two ends ``m["move"]`` before their next step."""
    loops, P = loop_time.shape
    out = np.empty_like(loop_time)
    rounds = set(m["rounds"])
    at_round: dict[int, int] = {}
    extra = np.zeros((loops, P))
    for k, src, dst, _dp in transfers:
        if k + 1 >= loops:
            continue
        if k + 1 in rounds:
            at_round[k + 1] = at_round.get(k + 1, 0) + 1
        else:
            extra[k + 1, src] += m["move"]
            extra[k + 1, dst] += m["move"]
    nbs = [_neighbours(i, P, m["layout"]) for i in range(P)]
    begin = np.asarray(m["starts"], dtype=float)
    for k in range(loops):
        if k > 0:
            prev = out[k - 1]
            if k in rounds:
                begin = np.full(P, prev.max() + m["barrier"] + m["move"] * at_round.get(k, 0))
            else:
                begin = np.array([max(prev[j] for j in [i, *nbs[i]]) for i in range(P)]) + m["latency"]
            begin = begin + extra[k]
        out[k] = begin + loop_time[k]
    return out


def replay_spmd(trace: Trace, balancer: Balancer | str | None = None, params: Mapping[str, Any] | None = None,
                seed: int | None = None, *, latency: float | None = None) -> ReplayResult:
    """A recorded real SPMD run in the pipelined simulator under *balancer* (default: the one it used, a
    repartition rule), its loops placed on the runtime's clock; see the module docstring. *latency* overrides
    the estimated per-step latency (s)."""
    from dlbkit.families.spmd.sim.platform import simulate_spmd_platform

    m = estimate(trace, latency)
    platform = Platform([Node(f"w{w}", speed=s) for w, s in enumerate(m["speeds"])],
                        Network(latency=0.0, bandwidth=_BANDWIDTH), name="replay")
    workload = Spmd(points=tuple(m["split"]), loops=m["loops"], boundary=float(m["halo"]), boundary_k=0.0,
                    noise=0.0, layout=m["layout"])
    if seed is None:
        seed = trace.seed if trace.seed is not None else 0
    b = recorded_balancer(trace, balancer, params)
    tr = simulate_spmd_platform(platform, workload, b, seed=seed, window=m["window"])
    lt = np.asarray(tr.series["loop_time"], dtype=float)
    moved = [(int(k), int(src), int(dst), int(dp)) for k, _t, src, dst, dp in tr.transfers]
    finish = runtime_finish_times(lt, m, moved)
    tr.t_end = Column("d", finish.ravel())
    tr.t_start = Column("d", finish.ravel() - lt.ravel())
    tr.t_ask = Column("d", tr.t_start)
    tr.transfers = [(k, float(finish[k, src]), src, dst, dp) for k, src, dst, dp in moved]
    tr.end_time = float(finish.max()) if finish.size else m["startup"]
    tr.source = "replay"
    tr.meta.update(replay_of=trace.balancer, replay_model=m, balancer_params=b.get_params() if b else {})
    return ReplayResult(tr, b, platform=platform, recorded=trace, model=m)


def report(trace: Trace, named, *, seed: int | None, source: str, label) -> ReplayReport:
    """``dlbkit replay`` of an SPMD run (the family's ``Replay.report``): the makespan table (no efficiency: an
    SPMD run has no lower bound), under the line of the replay model."""
    m = estimate(trace)
    line = (f"model: measured speeds {speeds_text(m['speeds'])} DP/s; latency {m['latency'] * 1e3:.3g} ms per "
            f"step; balancing round {m['barrier'] * 1e3:.3g} ms + {m['move'] * 1e3:.3g} ms per move; startup "
            f"{m['startup'] * 1e3:.3g} ms")
    return makespan_report(trace, named, replay_spmd, seed=seed, source=source, label=label, model=m,
                           model_line=line, count=m["items"], unit="rows", efficiency=False)
