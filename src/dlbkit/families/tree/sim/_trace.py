"""The :class:`~dlbkit.model.trace.Trace` of a finished asynchronous tree run (:mod:`dlbkit.families.tree.sim.engine`),
built from its state (:class:`~._tree_state.TreeState`) whichever loop ran it."""

from __future__ import annotations

from dlbkit.model.trace import Trace
from dlbkit.families.tree.sim._state import TreeState

__all__ = ["tree_trace"]


def tree_trace(run: TreeState, fast: bool) -> Trace:
    """The trace of *run* (*fast*: the specialised loop ran it): the busy stretches as intervals in
    seconds, the counters, the information layer's cost, and the family's figures in ``meta``."""
    sec = run.sec
    tr = Trace(run.P, list(range(run.P)), balancer=run.balancer.name, seed=run.seed, source="sim",
               family="tree", speeds=list(run.speeds), availability=run.availability, total_work=run.work,
               max_item=run.max_cost)
    w, first, count, ask, start, end = run.rows
    tr.node, tr.first, tr.count = w, first, count
    tr.t_ask, tr.t_start, tr.t_end = ([sec(x) for x in col] for col in (ask, start, end))
    tr.round_of = [-1] * len(w)
    tr.events, tr.messages, tr.bytes = run.events, run.messages, run.bytes
    tr.end_time = sec(run.makespan)
    if run.decided is not None:
        tr.decisions = run.decided
    if run.exact:  # the decider's view is the truth, and knowing it costs nothing
        tr.info_messages, tr.info_bytes, tr.info_age_mean = 0, 0.0, 0.0
    else:
        m = run.info
        tr.info_messages, tr.info_bytes, tr.info_age_mean = m.messages_, m.bytes_, m.age_mean
        tr.meta["info"] = {"model": m.name, **m.get_params(), "rounds": m.rounds_}
    if run.record and run.w_t[-1] != run.makespan:  # always end on the last completion
        run.w_t.append(run.makespan)
        run.w_n.append(run.waiting)
        run.w_q.append(list(map(len, run.dq)))
    waiting = list(zip((sec(x) for x in run.w_t), run.w_n)) if run.record else []
    queues = run.w_q if run.record else []
    tr.meta.update(mechanism="tree-async", balancer_params=run.balancer.get_params(),
                   order="df" if run.lifo else "bf", tasks=run.n_done, expanded=list(run.done),
                   steal_requests=run.steal_requests, steals=run.steals, tasks_moved=run.tasks_moved,
                   transfers=run.transfers, waiting=waiting, queues=queues, phases=run.phases,
                   makespan=tr.end_time, fast_path=fast, backoff=list(run.backoff),
                   ticks_per_second=run.tps, control_bytes=run.control_bytes, task_bytes=run.task_bytes)
    return tr
