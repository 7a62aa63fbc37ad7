"""Shared pieces of the mappers: for the list schedulers, the earliest finish time of a task on a
processor (Topcuoglu, Hariri & Wu 2002 §4.1, eqs 5–6, on :class:`~dlbkit.model.graph_eval.Timeline`)
and the one list scheduler that HEFT, CPOP, PEFT and HLF differ only in the arguments of; for the
search mappers (simulated annealing, tabu search: 002 §6.1.2), the random start and the random
single-task move."""

from __future__ import annotations

import heapq
from typing import Callable, Sequence

from ...model.graph_eval import Timeline

__all__ = ["Timeline", "data_ready", "plan_order", "list_schedule", "random_start", "random_move"]


def random_start(view, rng) -> tuple[int, int, list[int]]:
    """(tasks n, processors m, an allocation): each task on a processor drawn uniformly from *rng*, one
    draw per task in task order: the start of the search mappers (002 §6.1.2: SA and tabu search)."""
    n, m = view.costs.graph.n_tasks, view.n_nodes
    return n, m, [int(x) for x in rng.integers(m, size=n)]


def random_move(rng, alloc: list, n: int, m: int) -> tuple[int, int]:
    """A single-task move of allocation *alloc* (002 §6.1.2's neighbourhood), drawn from *rng*: task i
    uniform among the n, then processor p uniform among the m − 1 other than ``alloc[i]``. Needs m ≥ 2."""
    i = int(rng.integers(n))
    p = int(rng.integers(m - 1))
    return i, p + (p >= alloc[i])


def data_ready(costs, i: int, p: int, proc: list, finish: list) -> float:
    """When all of task i's inputs can be on processor p: max over predecessors j of
    finish_j + transfer(j → p) (eq. 5's second term)."""
    t = 0.0
    for j, d in costs.graph.preds[i]:
        v = finish[j] + costs.comm(d, proc[j], p)
        if v > t:
            t = v
    return t


def plan_order(start: list, finish: list, rank_position: list) -> tuple:
    """A global order from planned start times: by (start, finish, position in the priority list); a
    topological order whenever the planned schedule respects precedence (a successor starts after its
    predecessor finishes; equal times fall back to the priority list, itself topological)."""
    return tuple(sorted(range(len(start)), key=lambda i: (start[i], finish[i], rank_position[i])))


def list_schedule(costs, n_nodes: int, priority: Sequence[float], *, ready_queue: bool = True,
                  insertion: bool = True, allowed: Callable[[int], Sequence[int]] | None = None,
                  extra: Callable[[int, int], float] | None = None,
                  by_start: bool = False, fixed: dict | None = None,
                  release: float = 0.0) -> tuple[list, list, list, list]:
    """Place every task, one at a time, by decreasing *priority* (ties: the lower task index): from a
    ready queue (a task enters once all its predecessors are placed: CPOP, PEFT), or with
    *ready_queue* False from the one sorted list (HEFT, whose upward rank already orders every task
    after its predecessors). Each task goes to the processor, of ``allowed(i)`` (default: all),
    that minimises its finish time plus ``extra(i, p)`` (PEFT's optimistic cost; default 0), ties to
    the lower processor, at the earliest start its inputs and the processor's timeline allow (in a
    gap with *insertion*); with *by_start*, the processor where it can start earliest instead (HLF).
    Return (processor, start, finish, placement position) per task.

    *fixed* ``{task: (processor, start, finish)}``: tasks already decided (a replanning mapper's
    finished, running and committed tasks, :mod:`dlbkit.balancers.graph_online.replanning_heft`):
    they occupy their processors' timelines and feed their successors' data-ready times, and only
    the other tasks are placed (sorted-list form only), none before *release* (the time of the
    replan). Their placement position is -1."""
    g = costs.graph
    n = g.n_tasks
    lines = [Timeline() for _ in range(n_nodes)]
    proc, start, finish, pos = [0] * n, [0.0] * n, [0.0] * n, [0] * n
    every = range(n_nodes)
    if fixed:
        if ready_queue:
            raise ValueError("list_schedule: fixed tasks need the sorted-list form (ready_queue=False)")
        for i, (p, s0, f0) in fixed.items():
            proc[i], start[i], finish[i], pos[i] = p, s0, f0, -1
            lines[p].add(s0, f0)
    if ready_queue:
        npred = [len(p) for p in g.preds]
        heap = [(-priority[i], i) for i in g.entries]
        heapq.heapify(heap)

        def tasks():
            while heap:
                i = heapq.heappop(heap)[1]
                yield i
                for j, _ in g.succs[i]:
                    npred[j] -= 1
                    if npred[j] == 0:
                        heapq.heappush(heap, (-priority[j], j))
    else:
        def tasks():
            todo = range(n) if not fixed else (i for i in range(n) if i not in fixed)
            yield from sorted(todo, key=lambda i: (-priority[i], i))
    for seq, i in enumerate(tasks()):
        row = costs.exec[i]
        best = None
        for p in (allowed(i) if allowed is not None else every):
            dr = data_ready(costs, i, p, proc, finish)
            st = lines[p].earliest(dr if dr >= release else release, row[p], insertion)
            key = st if by_start else st + row[p] + (extra(i, p) if extra is not None else 0.0)
            if best is None or key < best[0]:
                best = (key, st, p)
        _, st, p = best
        proc[i], start[i], finish[i], pos[i] = p, st, st + row[p], seq
        lines[p].add(st, finish[i])
    return proc, start, finish, pos
