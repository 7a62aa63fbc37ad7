"""The job-stream family: independent jobs arriving at every node, placed by the node itself (003, Nezha)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping

import numpy as np

from dlbkit.model import check
from dlbkit.model.platform import Platform
from dlbkit.families.stream.model.bounds import stream_lower_bound
from dlbkit.families.stream.model.swf import SwfLog, check_width
from dlbkit.families.stream.model.workload import Stream, stream_from_dict
from dlbkit.families.stream.model.view import StreamView
from dlbkit.families.stream.sim.engine import StreamOptions, simulate_stream
import dlbkit.families.stream.balancers  # noqa: F401  (registers the family's balancers)
from dlbkit.families.registry import Engine, Family, Replay, deferred, register
from dlbkit.families.stream.face.describe import FILES
from dlbkit.families.stream.runtime import recording
from dlbkit.runtime.record import Recording

__all__ = ["FAMILY", "describe", "metrics"]


def describe(w: Stream) -> str:
    if isinstance(w.source, SwfLog):
        procs = f", MaxProcs {w.source.max_procs}" if w.source.max_procs is not None else ""
        return (f"{len(w.trace):,} jobs of the SWF log {Path(w.source.path).name} (width {w.source.width!r}"
                f"{procs}; {w.source.dropped:,} left out for no work)")
    if w.trace is not None:
        return f"a recorded stream of {len(w.trace):,} jobs"
    rate = f"{w.rates:g} jobs/s per node" if not isinstance(w.rates, tuple) else f"{sum(w.rates):g} jobs/s in all"
    extra = f", {len(w.bursts)} burst(s)" if w.bursts else ""
    return (f"{w.jobs:,} jobs of {w.width} task(s), Poisson arrivals at {rate}{extra}, {w.demand.kind} demand "
            f"of mean {w.demand.mean:g}")


#: the family's own metrics (``Family.own_metrics``; job streams, 003): per job after the warm-up, and the queues
#: over time; name -> (description, which direction is better)
OWN_METRICS = {
    "response_mean": ("mean response time of a job: arrival at its origin to its last task's end (s)", "lower"),
    "response_p50": ("median response time of a job (s)", "lower"),
    "response_p95": ("95th percentile of a job's response time (s)", "lower"),
    "response_p99": ("99th percentile of a job's response time (s)", "lower"),
    "slowdown_mean": ("mean of a job's response time over its longest task's time on its node at full availability",
                      "lower"),
    "queue_mean": ("time-average tasks in a node's system (waiting + running), per node, after the warm-up", "lower"),
    "queue_max": ("most tasks any node held at once", "lower"),
    "queue_maxdiff": ("largest difference between the longest and the shortest queue at a sampled time", "lower"),
    "convergence_time": ("from a start with initial (over-)loads: first time the longest and the shortest queue "
                         "differ by at most the engine's converge_maxdiff (s)", "lower"),
    "throughput": ("jobs completed per second, up to the last completion", "higher"),
    "utilisation": ("share of slot time spent serving tasks, up to the last completion", "higher"),
}


def response_times(trace) -> np.ndarray:
    """Response time of every job after the warm-up (completion − arrival)."""
    s = trace.series
    w = int(trace.meta.get("warmup_job", 0))
    return (s["job_done"] - s["job_time"])[w:]


def metrics(trace) -> dict:
    """The stream metrics (:data:`OWN_METRICS`), the makespan, its lower bound
    (:func:`~dlbkit.families.stream.model.bounds.stream_lower_bound`) and efficiency (their ratio), the moves
    and the information layer's cost; the rest of METRICS NaN."""
    from dlbkit.model.metrics import METRICS
    out = {k: math.nan for k in (*METRICS, *OWN_METRICS)}
    s = trace.series
    r = response_times(trace)
    if len(r):
        out["response_mean"] = float(r.mean())
        out["response_p50"], out["response_p95"], out["response_p99"] = (float(x) for x in np.percentile(r, [50, 95, 99]))
        w = int(trace.meta.get("warmup_job", 0))
        ideal = s["job_ideal"][w:]
        out["slowdown_mean"] = float(np.mean(r / np.where(ideal > 0, ideal, np.nan)))
    out["queue_mean"] = float(trace.meta.get("queue_mean", math.nan))
    out["convergence_time"] = float(trace.meta.get("convergence_time", math.nan))
    out["queue_max"] = float(s["queue_max"].max()) if len(s.get("queue_max", [])) else math.nan
    if "queue" in s and len(s["queue"]):
        q = s["queue"]
        out["queue_maxdiff"] = float((q.max(axis=1) - q.min(axis=1)).max())
    end = trace.end_time
    done = s["job_done"]
    out["makespan"] = float(end)
    out["lower_bound"] = lb = stream_lower_bound(trace)
    out["efficiency"] = lb / end if end > 0 and math.isfinite(lb) else math.nan
    out["throughput"] = float(np.isfinite(done).sum() / end) if end > 0 else math.nan
    slots = trace.meta.get("slots") or []
    if end > 0 and slots:
        out["utilisation"] = float(trace.meta.get("busy_time", 0.0) / (sum(slots) * end))
    out["tasks_moved"] = float(trace.meta.get("tasks_moved", 0))
    out["messages"] = float(trace.messages)
    out["bytes"] = float(trace.bytes)
    out["info_messages"], out["info_bytes"], out["info_age_mean"] = (trace.info_messages, trace.info_bytes,
                                                                     trace.info_age_mean)
    out["info_freshness"] = float(trace.meta.get("info_freshness", math.nan))
    return out


def sample_view() -> StreamView:
    """4 nodes with queues 2, 0, 1, 3 as seen from node 0."""
    return StreamView(4, queue=[2, 0, 1, 3])


def check_fit(platform: Platform, workload: Stream) -> None:
    """Rates (one per node) and a trace's origins must name the platform's nodes; an SWF log's jobs must
    fit in the platform's slots."""
    workload.check_fit([n.name for n in platform.nodes])
    check_width(workload, sum(n.cores for n in platform.nodes))


def check_balancer(platform: Platform, balancer, path: str, workload=None, options=None) -> None:
    """A placement rule's own checks against the node count, run by starting it on an empty view of the
    platform (``power-of-d`` and ``speed-d``: d at most n without replacement)."""
    with check.within(path):
        balancer.start(StreamView(len(platform.nodes)), np.random.default_rng(0))


def parse(table: Mapping, path: str = "workload") -> Stream:
    return stream_from_dict(table, path)


FAMILY = register(Family(
    name="stream",
    summary="independent jobs (single tasks or parallel batches) arriving at every node over time, each "
            "placed by the node it arrives at from what it knows of the others' queues",
    source="003 (Nezha); Mitzenmacher 2001 (the supermarket model)",
    workloads=(Stream,),
    view=StreamView,
    kind="placement",
    engines=(Engine("events", "event-driven: arrivals, placement at the origin, transfer, FIFO service per slot "
                    "(or processor sharing) at speed × availability, departures; optional information model",
                    "dlbkit.families.stream.sim.engine.simulate_stream", simulate_stream, StreamOptions),),
    run=deferred("dlbkit.families.stream.face.cluster", "Cluster"),
    runtime="dlbkit.Cluster",
    metrics=metrics,
    own_metrics=OWN_METRICS,
    metric_names=("response_mean", "response_p50", "response_p95", "response_p99", "slowdown_mean", "queue_mean",
                  "queue_max", "queue_maxdiff", "convergence_time", "throughput", "utilisation", "makespan", "lower_bound",
                  "efficiency", "tasks_moved",
                  "messages", "bytes", "info_messages", "info_bytes", "info_age_mean", "info_freshness"),
    metric_text={"makespan": "time the last task left its node (s)",
                 "lower_bound": "no run ends earlier: the most of the fluid bound of every suffix of the arrivals (the "
                                "work arriving from a job's arrival on, over the slots' capacity), each task's arrival "
                                "plus its fastest time on one slot, and the largest task alone (s; "
                                "dlbkit.families.stream.model.bounds)",
                 "messages": "tasks sent away from their job's origin, plus late binding's probes, requests "
                             "and replies",
                 "bytes": "bytes of the tasks sent between nodes (task_bytes each)",
                 "tasks_moved": "tasks sent from the node their job arrived at to another (a placement that "
                                "takes no time, zero latency and task_bytes, is not counted)"},
    # the makespan beside its lower bound and their ratio (a bound equal for every balancer, as a log's is,
    # is stated once below the table)
    table_metrics=("response_mean", "response_p95", "response_p99", "makespan", "lower_bound", "efficiency",
                   "queue_mean", "utilisation", "tasks_moved", "info_bytes", "info_age_mean", "throughput",
                   "slowdown_mean", "response_p50", "queue_max", "queue_maxdiff", "convergence_time", "messages",
                   "bytes", "info_messages", "info_freshness"),
    figures=deferred("dlbkit.families.stream.face.plots", "figures"),
    figure_kinds=("queues", "response_cdf"),
    figure_captions={"queues": ("queues", "Per run: tasks in each node's system over time (a heat map: waiting and "
                                "running);"),
                     "response_cdf": ("response CDF", "the response-time CDF of the jobs after the warm-up.")},
    bar_metrics=("response_mean", "queue_mean"),
    parse=parse,
    describe=describe,
    files=FILES,
    check_fit=check_fit,
    check_balancer=check_balancer,
    file_keys=("trace", "swf"),  # read from the experiment file's folder
    sample_view=sample_view,
    replay=Replay(deferred("dlbkit.families.stream.face.replay", "replay_stream"),
                  recorded_by="a job stream (Cluster, dlbkit cluster)", noun="job-stream",
                  report=deferred("dlbkit.families.stream.face.replay", "report"), cli_flags=("info",)),
    recording=Recording(check=recording.check),
))
