"""The job-stream family's engine: jobs arrive at every node, the node places their tasks, the chosen
nodes serve them first-in, first-out, one task per slot (003's extended supermarket model on a
heterogeneous, non-dedicated platform).

Rules, as handlers on the :class:`~dlbkit.sim.kernel.Kernel` (the methods of one run object,
:class:`~dlbkit.families.stream.sim._run.StreamRun`; the service discipline's, a strategy of
:mod:`dlbkit.families.stream.sim._service`):

* **arrival** of job k at its origin o (times drawn up front by :meth:`Stream.arrivals
  <dlbkit.families.stream.model.workload.Stream.arrivals>`): the engine fills o's :class:`~dlbkit.families.stream.model.view.StreamView`
  (exact information: the true queues, read in place; an information model: what o's table holds,
  :meth:`~dlbkit.info.base.InfoModel.fill`) and asks the balancer where the job's tasks go
  (:func:`dlbkit.families.stream.balancers.decide.place`; a batch is placed on a copy of the queues that the
  balancer updates after each task unless *batch_update* is false). A task placed on another node
  reaches it after the transfer time (:func:`~dlbkit.sim.costs.message_time`: hops × latency +
  *task_bytes* / bandwidth); a task kept at its origin is there at once;
* a task that reaches node j joins its system (``queue[j]`` counts waiting and running tasks);
  if one of j's slots is free it starts, else it waits in j's FIFO queue;
* a task of demand w started at t on node j ends when j's speed × availability has done w units of
  work (:func:`~dlbkit.sim.costs.finish_time`: a constant rate divides, a varying availability is
  integrated exactly); then the slot takes the oldest waiting task. A job is done when its last task is;
* **late binding** (a balancer with ``late_binding`` true, ``batch-sampling``'s Sparrow option, FIFO
  only): the arrival sends a reservation to each node the balancer's ``probes(view, k)`` names; a
  reservation joins the node's queue as an entry; when it reaches a free slot the slot is held while
  the node asks the origin for a task (one latency each way, plus the task's bytes), or is freed by a
  cancel once the job's tasks are all sent (docs/streams.md, "Late binding").

**Hot loop.** The arrival handler inlines :func:`~dlbkit.families.stream.balancers.decide.place` for a single task
without recording (``balancer.place(view)`` and the check that the answer is a node: an answer that
is not a plain int goes to :func:`~dlbkit.families.stream.balancers.decide.checked_node`, which checks it as
:func:`~dlbkit.families.stream.balancers.decide.place` would without asking again; any other case calls the function);
``tests/families/stream/sim/test_stream.py`` compares both paths' traces.

**Fast path.** With exact information, one task per job, every node one slot of rate 1 (speed ×
constant availability) and nominal speed 1 (a job's ideal time is its demand), no transfer time, demands > 0, no queue samples, no trace intervals or
decision records, and the inlined decision, the run goes through :mod:`dlbkit.families.stream.sim._fast` (the
supermarket model's case, ``dlbkit bench supermarket``): the same balancer object places every job
on the same live view; a FIFO slot's departures follow in closed form, so one heap of departure
times replaces the kernel's queue; ties run in the kernel's order. An engine option the loop does not
know must be at its default. ``meta["path"]`` says which ran ("fast", or "kernel (why not)"); a tie
whose kernel order the loop cannot tell (exact ties of a recorded trace) starts the run again on the
kernel. ``tests/families/stream/sim/test_stream_fast.py`` proves the two paths give the same trace and placements.

**Information.** ``info`` None or "exact": deciders read the true queues (``updated_at[j]`` is when
node j's queue last changed). "gossip" and "neighbour": rounds every ``period`` seconds (URGENT
kernel events, so a decision at the instant a message lands sees it), messages delivered after their
transfer time, freshest wins; rounds stop after the last arrival. "periodic" is refused: only its
centre learns the loads, and every node decides here.

**Queue statistics.** The engine integrates the number of tasks in the system over time; the mean
per node is taken between the arrival of job ⌊warmup·J⌋ and the last arrival (the warm-up removes the
start from empty; the drain after the last arrival is excluded). With *samples* > 0 it records every
node's queue at *samples* evenly spaced times up to the last arrival (``series["queue"]``: the plot
of queue length per node over time, and the largest difference between nodes).

**Service** (option *service*). ``"fifo"`` (the default, 003's supermarket model): a node serves one
task per slot, first in, first out, at speed × availability. ``"ps"``: processor sharing, as the
seed's time-shared machines do (§6.3.2.2: a node of 4 CPUs running 7 tasks gives each 4/7 of a CPU):
k tasks on a node of c slots each progress at speed × availability × min(1, c/k), every task starting
service the moment it reaches the node. The engine keeps per node the service each present task has
received (all present tasks receive the same) and one pending departure, the task with the least work
left; a change of k moves that departure (the superseded event is skipped when it comes due).

**Initial loads** (the workload's ``initial``): tasks in each node's system at time 0, served like any
task, belonging to no job; with them the run's ``convergence_time`` is the first time at which the
largest difference between two nodes' queues is at most *converge_maxdiff* (003 §3.4.3.4's
convergence from "some over-loaded queues"; computed from the intervals, so it needs ``record=True``:
NaN if never, without initial loads, or with ``record=False``, and NaN alone does not say which).

Seeding: layout ``STREAM`` (arrivals, availability, balancer, info; the initial tasks' work is drawn
on the arrivals stream after the arrivals).
"""

from __future__ import annotations

from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.stream.balancers.base import PlacementBalancer
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.stream.sim._run import StreamRun
from dlbkit.families.stream.sim.options import CONVERGE_MAXDIFF, INFO_REFUSED, SERVICES, StreamOptions
from dlbkit.info.registry import resolve as resolve_info
from dlbkit.model import check
from dlbkit.model.platform import Platform
from dlbkit.families.stream.model.seeding import STREAM
from dlbkit.model.seeding import streams
from dlbkit.model.trace import Trace
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_stream", "StreamOptions", "INFO_REFUSED", "SERVICES", "CONVERGE_MAXDIFF", "MAX_SERVERS"]

#: the most servers a job stream given as a count (the supermarket model's) may have
MAX_SERVERS = 1_000_000

def simulate_stream(platform: Platform | int, workload: Stream, balancer: PlacementBalancer, *, seed: Any = 0,
                    options: StreamOptions | None = None, **kwargs: Any) -> Trace:
    """Run *workload* on *platform* (a Platform, or a node count: identical nodes of speed 1 with one
    slot, full availability and no transfer time, the supermarket model's servers) with the placement
    *balancer*; return the Trace (module docstring). The options are a
    :class:`~dlbkit.families.stream.sim.options.StreamOptions` (*options*), or its fields as keywords
    (over *options*, if both): *info*: an information model (name, table or object; None: exact).
    *task_bytes*: bytes a task carries to another node. *warmup*: the share of jobs whose arrival opens
    the queue statistics. *samples*: queue snapshots. *batch_update*: a decider counts its own placements
    within a batch. *record*: one interval per task in the trace (off for benchmarks). *inline*: the hot
    loop's inlined decision (off: always through :func:`decide.place`; the two give the same trace).
    *service*: "fifo" or "ps" (module docstring). *converge_maxdiff*: the queue difference at or below
    which a run started with initial loads has converged (``convergence_time`` needs *record* true: with
    ``record=False`` it is NaN, as for a run that never converges)."""
    o = StreamOptions.of(options, kwargs, "simulate_stream")
    if not isinstance(workload, Stream):
        raise ConfigError("workload", type(workload).__name__, "a Stream")
    if not isinstance(balancer, PlacementBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer), "a placement balancer")
    model = resolve_info(o.info)
    if model.name in INFO_REFUSED:
        raise ConfigError("info.model", model.name, "a model that tells every node the loads: "
                          + INFO_REFUSED[model.name])
    st = streams(seed, STREAM)
    if not isinstance(platform, Platform):
        platform = check.size(platform, "platform", MAX_SERVERS, "servers of a job stream")
    run = StreamRun(platform, workload, balancer, model, st, seed=seed, options=o, tolerance=SIMULTANEITY_TOLERANCE)
    return run.run(StreamOptions, {name: getattr(o, name) for name in o.names()})
