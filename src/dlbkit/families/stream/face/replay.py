"""Replay a job stream recorded by :class:`dlbkit.Cluster` in the job-stream family's simulator (its ``Family.replay``:
:func:`replay_stream`, and ``dlbkit replay``'s table of response times, :func:`report`)."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from dlbkit.balancers.base import Balancer
from dlbkit.errors import ConfigError
from dlbkit.families.replay import ReplayReport, ReplayResult, recorded_balancer, trust, trust_line
from dlbkit.families.result import Result
from dlbkit.families.simulate import simulate
from dlbkit.families.stream.model.workload import Stream
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.trace import Trace

__all__ = ["replay_stream", "report"]


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
    b = recorded_balancer(trace, balancer, params)
    r = simulate(platform, Stream(trace=rows, name="recorded"), b, seed=seed, info=info)
    r.trace.source = "replay"
    r.trace.meta.update(replay_of=trace.balancer, balancer_params=b.get_params())
    return ReplayResult(r.trace, b, platform=platform, recorded=trace)



def report(trace: Trace, named, *, seed: int | None, source: str, label, info=()) -> ReplayReport:
    """``dlbkit replay`` of a job stream recorded by ``dlbkit cluster --record`` (the family's ``Replay.report``):
    the recorded jobs in the stream simulator under the recorded balancer and information model, each of
    *named* under the recorded model, and the recorded balancer under each information model of *info*
    (``--info``); mean and p95 response times, against the real ones."""
    real = Result(trace, trace.balancer).metrics
    recorded_info = dict(trace.meta.get("info_params") or {"model": trace.meta.get("info") or "exact"})
    runs = [(None, None, None)] + [(b, p, None) for b, p in named] + [(None, None, {"model": m}) for m in info]
    rows = []
    for b, params, model in runs:
        r = replay_stream(trace, b, params, seed, info=model)
        rows.append({"balancer": r.balancer.name, "info": (model or recorded_info)["model"],
                     "response_mean": r.metrics["response_mean"], "response_p95": r.metrics["response_p95"]})
    data = {"trace": str(source), "balancer": trace.balancer, "info": recorded_info,
            "jobs": len(trace.series["job_time"]), "real_response_mean": real["response_mean"],
            "real_response_p95": real["response_p95"], "rows": rows}
    heading = (f"replay of {source}: a job stream of {data['jobs']} jobs on {trace.n_nodes} nodes "
               f"({trace.balancer}, {recorded_info['model']}); real response (submit to the job's end on its node) "
               f"mean {real['response_mean'] * 1e3:.4g} ms, p95 {real['response_p95'] * 1e3:.4g} ms")
    data["trust"] = trust(rows[0]["response_mean"], real["response_mean"])
    lines = [heading, trust_line(trace.balancer, data["trust"], "mean response")]
    table = [[r["balancer"], r["info"], f"{r['response_mean'] * 1e3:.4g}", f"{r['response_p95'] * 1e3:.4g}"]
             for r in rows]
    return ReplayReport(data, lines, ["balancer", "info", "mean response (ms)", "p95 (ms)"], table, [24, 10, 18, 10])
