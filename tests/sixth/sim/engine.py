"""The bags family's engine: one dispatcher places the tasks one at a time, each node runs its own in order.

Handlers on the core kernel (:mod:`dlbkit.sim.kernel`): ``dispatch`` places task k on the node the
balancer picks (:func:`sixth.balancers.decide.pick`) and schedules task k + 1 *dispatch_time* seconds
later; ``done`` ends a node's running task and starts its next. A completion is URGENT, so a placement
at the same instant already sees the node's load fall. Compute time is the core's
(:func:`dlbkit.sim.costs.finish_time`: work over speed, integrated over the node's availability).

Trace (family ``bags``): one interval per task (``first`` = its index, ``t_ask`` = when it was placed,
``t_start``/``t_end`` on its node); ``messages``: one per task sent to a node; ``meta["placement"]``: the
node of each task.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from numbers import Real
from typing import Any

from sixth.balancers import decide
from sixth.model.seeding import BAGS
from sixth.model.view import BagView
from sixth.model.workload import Bag

from dlbkit.errors import ConfigError
from dlbkit.model.seeding import streams
from dlbkit.model.trace import Trace
from dlbkit.sim.costs import finish_time
from dlbkit.sim.kernel import URGENT, Kernel
from dlbkit.sim.options import EngineOptions, Interval, option
from dlbkit.sim.progress import ticker
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["BagsOptions", "simulate_bags"]


@dataclass(frozen=True)
class BagsOptions(EngineOptions):
    """The dispatch engine's options, declared once (:mod:`dlbkit.sim.options`): the experiment file's
    ``[engine]`` keys, their help and their checks follow from these fields. Python-only: *progress*,
    *record_decisions*."""

    dispatch_time: float = option(0.0, "seconds the dispatcher spends per placement (default 0: every task "
                                       "placed at time 0)", Interval(Real, 0.0, None))
    progress: Any = option(None)
    record_decisions: bool = option(False)


def simulate_bags(platform, workload: Bag, balancer, *, seed=0, options: BagsOptions | None = None, **kwargs) -> Trace:
    """The trace of *workload*'s tasks placed by *balancer* (a bagging balancer) on *platform*'s nodes."""
    if not isinstance(workload, Bag):
        raise ConfigError("workload", type(workload).__name__, "a Bag")
    o = BagsOptions.of(options, kwargs, "simulate_bags")
    return _Run(platform, workload, balancer, seed, o.dispatch_time, ticker(o.progress), o.record_decisions).run()


class _Run:
    """One run's state: the kernel, the view, each node's queue and the trace."""

    def __init__(self, platform, workload: Bag, balancer, seed, dispatch_time: float, tick, record: bool):
        st = streams(seed, BAGS)
        n = platform.n_nodes
        self.sizes = workload.sizes
        self.work = list(self.sizes)
        if workload.jitter:  # drawn only when asked, so exact sizes cost no draw
            u = st.rng("jitter").uniform(-1.0, 1.0, workload.n_tasks)
            self.work = [s * (1.0 + workload.jitter * x) for s, x in zip(self.sizes, u)]
        self.speeds = [nd.speed for nd in platform.nodes]
        self.avail = platform.realise_availability(st.rng("availability"))
        self.view = BagView(n, list(self.speeds), remaining=workload.n_tasks)
        self.balancer = balancer
        balancer.start(self.view, st.rng("balancer"))
        self.trace = Trace(n_nodes=n, node_of=list(range(n)), balancer=balancer.name,
                           seed=seed if isinstance(seed, int) else None, family="bags")
        self.decisions = self.trace.decisions if record else None
        self.queues = [deque() for _ in range(n)]
        self.busy = [False] * n
        self.placed_at = [0.0] * workload.n_tasks
        self.placement = [0] * workload.n_tasks
        self.dispatch_time, self.tick, self.done_count = dispatch_time, tick, 0
        self.k = Kernel(tolerance=SIMULTANEITY_TOLERANCE)

    def run(self) -> Trace:
        self.k.schedule(0.0, self.dispatch, 0)
        self.k.run()
        tr = self.trace
        tr.speeds, tr.availability = self.speeds, self.avail
        tr.total_work, tr.max_item = float(sum(self.work)), float(max(self.work))
        tr.messages, tr.events, tr.end_time = len(self.work), self.k.processed, tr.makespan
        tr.meta["placement"] = self.placement
        if self.tick is not None:
            self.tick.finish(len(self.work))
        return tr

    def dispatch(self, t: float, task: int) -> None:
        v = self.view
        v.time, v.next_size = t, self.sizes[task]
        node = decide.pick(self.balancer, v, self.decisions)
        v.loads[node] += self.sizes[task]
        v.tasks[node] += 1
        v.remaining -= 1
        self.placed_at[task], self.placement[task] = t, node
        self.queues[node].append(task)
        if not self.busy[node]:
            self.start(t, node)
        if task + 1 < len(self.sizes):
            self.k.schedule(t + self.dispatch_time, self.dispatch, task + 1)

    def start(self, t: float, node: int) -> None:
        task = self.queues[node].popleft()
        self.busy[node] = True
        end = finish_time(self.avail[node], t, self.work[task], self.speeds[node])
        self.trace.add_interval(node, task, 1, self.placed_at[task], t, end)
        self.k.schedule(end, self.done, node, task, priority=URGENT)

    def done(self, t: float, node: int, task: int) -> None:
        v = self.view
        self.busy[node] = False
        # an idle node holds nothing: exactly 0, not what subtracting its sizes leaves in the last bits
        v.loads[node] = v.loads[node] - self.sizes[task] if self.queues[node] else 0.0
        v.updated_at[node] = t
        self.done_count += 1
        if self.tick is not None:
            self.tick(self.done_count, len(self.sizes))
        if self.queues[node]:
            self.start(t, node)
