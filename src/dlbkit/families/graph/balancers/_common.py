"""Shared pieces of the mappers: for the list schedulers, the earliest finish time of a task on a
processor (Topcuoglu, Hariri & Wu 2002 §4.1, eqs 5–6, on :class:`~dlbkit.families.graph.model.evaluate.Timeline`)
and the one list scheduler that HEFT, CPOP, PEFT and HLF differ only in the arguments of; for the
search mappers (simulated annealing, tabu search: 002 §6.1.2), the random start and the random
single-task move."""

from __future__ import annotations

import heapq
import math
from typing import Callable, Sequence

import numpy as np

from dlbkit.families.graph.model.evaluate import Timeline

__all__ = ["Timeline", "Arrivals", "plan_order", "list_schedule", "random_start", "random_move", "PRUNE_FROM"]

#: the fewest candidate processors for which :func:`list_schedule` tries them by a lower bound of
#: their key and stops early; with fewer, trying every one costs less than ordering them (numpy's
#: fixed cost per task). HEFT and HLF on 5 000 tasks: the same CPU time at 12 processors, the bound
#: 7-30% faster from 16, 10-20% slower at 4 and 8 (BENCHMARKS.md, branch `dataready`)
PRUNE_FROM = 16


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


class Arrivals:
    """When all of a task's inputs can be on each processor: eq. 5's second term, max over its
    predecessors j of finish_j + transfer(j → p), for every p at once (an array of n_nodes floats).

    A transfer from processor q is free to q's machine and ``lat[q][p] + data · per[q][p]`` to any
    other (:meth:`~dlbkit.families.graph.model.costs.GraphCosts.comm`). On a bare processor count or a complete
    platform every entry of q's rows off its machine is one latency and one per-unit time (a *flat*
    row): a predecessor then arrives at two times only, its finish on its own machine and its finish
    plus one transfer everywhere else, so the maximum is taken per machine, not per processor. A
    predecessor whose rows are not flat (a routed topology's hop counts, a hand-made table) is added
    as an array over the processors. Each arrival is the float ``comm`` gives (the same operations in
    the same order), and the maximum, started at 0.0 and moved only by a strictly later arrival (so
    never to a NaN), is the same float in any order: the answers are those of the per-processor loop
    over predecessors it replaced (kept in tests/families/graph/balancers/test_list_schedule_identity.py)."""

    def __init__(self, costs, n_nodes: int):
        m = self.m = n_nodes
        self.host, self.lat, self.per = costs.host, costs.lat, costs.per
        self.machine = np.unique(np.asarray(self.host[:m]), return_inverse=True)[1].reshape(-1)
        by_host: dict = {}
        for p in range(m):
            by_host.setdefault(self.host[p], []).append(p)
        # a machine's processors, as a slice when they are consecutive (the cheapest to assign to)
        self.procs = {h: slice(ps[0], ps[-1] + 1) if ps[-1] - ps[0] == len(ps) - 1 else np.asarray(ps)
                      for h, ps in by_host.items()}
        self.flat: dict = {}  # q -> (latency, per-unit time) off q's machine, or None: not flat

    def _flat(self, q: int):
        m = self.m
        off = self.machine != self.machine[q]
        if not off.any():  # one machine: no transfer from q is ever paid
            return 0.0, 0.0
        lat = np.asarray(self.lat[q][:m], dtype=float)[off]
        per = np.asarray(self.per[q][:m], dtype=float)[off]
        if (lat == lat[0]).all() and (per == per[0]).all():  # (a NaN equals nothing: not flat)
            k = int(off.argmax())
            return self.lat[q][k], self.per[q][k]  # the table's own numbers
        return None

    def __call__(self, preds, proc: list, finish: list) -> np.ndarray:
        """The data-ready time on every processor of a task whose predecessors (j, data) are *preds*,
        placed on ``proc[j]`` and finishing at ``finish[j]``."""
        host, flat = self.host, self.flat
        near: dict = {}  # machine -> the latest finish of a predecessor on it (free to its processors)
        far: dict = {}  # machine -> the latest arrival elsewhere of its predecessors with flat rows
        rows = []  # predecessors whose rows are not flat
        for j, d in preds:
            q = proc[j]
            f = finish[j]
            h = host[q]
            v = f + 0.0  # comm is 0.0 on one machine
            if v > near.get(h, 0.0):
                near[h] = v
            lp = flat.get(q, False)
            if lp is False:
                lp = flat[q] = self._flat(q)
            if lp is None:
                rows.append((q, d, f))
                continue
            v = f + (lp[0] + d * lp[1])
            if v > far.get(h, 0.0):
                far[h] = v
        # a processor off the machine of the latest far arrival (first, from machine h1) gets it; one
        # on h1 the latest from the other machines (second); either its own machine's near one if later
        h1, first, second = None, 0.0, 0.0
        for h, v in far.items():
            if v > first:
                h1, first, second = h, v, first
            elif v > second:
                second = v
        out = np.empty(self.m)
        out.fill(first)
        procs = self.procs
        for h, v in near.items():
            if h != h1 and v > first:
                out[procs[h]] = v
        if h1 is not None:
            v = near.get(h1, 0.0)
            out[procs[h1]] = v if v > second else second
        m = self.m
        for q, d, f in rows:
            v = f + (np.asarray(self.lat[q][:m], dtype=float) + d * np.asarray(self.per[q][:m], dtype=float))
            v[procs[host[q]]] = 0.0  # free on q's machine: counted in near
            np.copyto(out, v, where=v > out)
        return out


def plan_order(start: list, finish: list, rank_position: list) -> tuple:
    """A global order from planned start times: by (start, finish, position in the priority list); a
    topological order whenever the planned schedule respects precedence (a successor starts after its
    predecessor finishes; equal times fall back to the priority list, itself topological)."""
    return tuple(sorted(range(len(start)), key=lambda i: (start[i], finish[i], rank_position[i])))


def list_schedule(costs, n_nodes: int, priority: Sequence[float], *, ready_queue: bool = True,
                  insertion: bool = True, allowed: Callable[[int], Sequence[int]] | None = None,
                  extra: Sequence[Sequence[float]] | None = None,
                  by_start: bool = False, fixed: dict | None = None,
                  release: float = 0.0) -> tuple[list, list, list, list]:
    """Place every task, one at a time, by decreasing *priority* (ties: the lower task index): from a
    ready queue (a task enters once all its predecessors are placed: CPOP, PEFT), or with
    *ready_queue* False from the one sorted list (HEFT, whose upward rank already orders every task
    after its predecessors). Each task goes to the processor, of ``allowed(i)`` (default: all),
    that minimises its finish time plus ``extra[i][p]`` (PEFT's optimistic cost table; default 0),
    ties to the lower processor (``allowed(i)`` lists processors in increasing order), at the
    earliest start its inputs (:class:`Arrivals`) and the processor's timeline allow (in a gap with
    *insertion*); with *by_start*, the processor where it can start earliest instead (HLF). Return
    (processor, start, finish, placement position) per task.

    A processor is tried only if it might win: a task cannot start before its inputs arrive (nor
    before *release*, nor, without insertion, before the processor's last end), so that time plus its
    execution time (plus ``extra``) bounds its key from below, with the same float additions
    (rounding never reverses an order). From :data:`PRUNE_FROM` candidates on, processors are tried
    by increasing (bound, index), and the search stops at the first whose bound, with its index,
    cannot beat the best key found; the winner is the one every processor's key would have chosen.
    A bound that is not finite stops nothing: then every processor is tried, in index order.

    *fixed* ``{task: (processor, start, finish)}``: tasks already decided (a replanning mapper's
    finished, running and committed tasks, :mod:`dlbkit.families.graph.balancers.replanning_heft`):
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
    arrivals = Arrivals(costs, n_nodes)
    ex = np.asarray(costs.exec, dtype=float)  # for the bounds (the keys add the table's own numbers)
    ext = np.asarray(extra, dtype=float) if extra is not None else None
    # without insertion a start is max(ready, the processor's last end): the bound is then the key
    tail = None if insertion else np.array([line.ends[-1] if line.ends else -math.inf for line in lines])
    for seq, i in enumerate(tasks()):
        row = costs.exec[i]
        ready = arrivals(g.preds[i], proc, finish)
        cand = allowed(i) if allowed is not None else every
        order, bound = cand, None  # every candidate, in index order
        if len(cand) >= PRUNE_FROM:
            lb = np.maximum(ready, release)
            if tail is not None:
                np.maximum(lb, tail, out=lb)
            if not by_start:
                lb += ex[i, :n_nodes]
                if ext is not None:
                    lb += ext[i, :n_nodes]
            order, bound = _by_bound(lb, cand, every)
        ready = ready.tolist()
        best = None
        for p in order:
            if bound is not None and best is not None and (bound[p] > best[0] or (bound[p] == best[0] and p > best[2])):
                break  # neither this processor nor any after it can beat the best
            dr = ready[p]
            st = lines[p].earliest(dr if dr >= release else release, row[p], insertion)
            key = st if by_start else st + row[p] + (extra[i][p] if extra is not None else 0.0)
            if best is None or key < best[0] or (key == best[0] and p < best[2]):
                best = (key, st, p)
        _, st, p = best
        proc[i], start[i], finish[i], pos[i] = p, st, st + row[p], seq
        lines[p].add(st, finish[i])
        if tail is not None:
            tail[p] = lines[p].ends[-1]
    return proc, start, finish, pos


def _by_bound(lb, cand: Sequence[int], every: range) -> tuple:
    """(the candidates by increasing (bound *lb*, index), the bounds as floats); (cand, None) when a
    bound is not finite (a NaN has no place in that order)."""
    order = lb.argsort(kind="stable").tolist()  # equal bounds by index; a NaN last, -inf first
    bound = lb.tolist()
    if not (math.isfinite(bound[order[0]]) and math.isfinite(bound[order[-1]])):
        return cand, None
    if cand != every:
        keep = set(cand)
        order = [p for p in order if p in keep]
    return order, bound
