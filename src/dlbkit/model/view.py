"""Views: what a deciding node knows when a balancer is asked for a decision.

Engines own a view and update it in place as measurements arrive (the simulator from its model, the
runtime from real timers); balancers only read it. Per-worker measurements are plain lists indexed by
worker, so the simulator's hot loop updates them cheaply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["LoopView", "TreeView", "SpmdView"]


@dataclass
class LoopView:
    """The master's knowledge of a divisible loop (what a chunking balancer decides from).

    Per worker i (lists of length ``n_workers``): ``items_done[i]``, ``chunks_done[i]``,
    ``compute_time[i]`` (measured seconds spent computing), ``sq_item_time[i]`` (sum of squared
    per-item times, for the standard deviation), ``overhead_time[i]`` (seconds between asking for work
    and starting it: scheduling overhead plus communication), ``last_chunk[i]``, ``last_time[i]``, and
    ``updated_at[i]`` (when those measurements were taken: their age is ``time - updated_at[i]``).

    ``speeds`` are the *nominal* worker speeds from the platform description (what a static or
    weighted technique may assume); the measurements are what adaptive techniques learn from.
    In the round-based mechanism (Sánchez et al.) ``round`` counts completed rounds and
    ``exe_time``/``calc_time``/``send_time``/``last_chunk`` describe the last round, ``order`` its
    send order. 004 calls ``calc_time`` t_calc, ``exe_time`` t_exe and items "information units".
    """

    n_items: int
    n_workers: int
    speeds: list[float]
    remaining: int = -1
    time: float = 0.0
    items_done: list[int] = field(default_factory=list)
    chunks_done: list[int] = field(default_factory=list)
    compute_time: list[float] = field(default_factory=list)
    sq_item_time: list[float] = field(default_factory=list)
    overhead_time: list[float] = field(default_factory=list)
    last_chunk: list[int] = field(default_factory=list)
    last_time: list[float] = field(default_factory=list)
    updated_at: list[float] = field(default_factory=list)
    round: int = 0
    exe_time: list[float] = field(default_factory=list)
    calc_time: list[float] = field(default_factory=list)
    send_time: list[float] = field(default_factory=list)
    order: list[int] = field(default_factory=list)

    def __post_init__(self):
        p = self.n_workers
        if self.remaining < 0:
            self.remaining = self.n_items
        for name in ("items_done", "chunks_done", "last_chunk"):
            if not getattr(self, name):
                setattr(self, name, [0] * p)
        for name in ("compute_time", "sq_item_time", "overhead_time", "last_time", "updated_at",
                     "exe_time", "calc_time", "send_time"):
            if not getattr(self, name):
                setattr(self, name, [0.0] * p)
        if not self.order:
            self.order = list(range(p))

    # --- derived estimates (read by adaptive balancers) ----------------------------------------
    def mean_item_time(self, i: int) -> float:
        """Measured mean seconds per item of worker i (NaN before its first result)."""
        n = self.items_done[i]
        return self.compute_time[i] / n if n else math.nan

    def std_item_time(self, i: int) -> float:
        """Measured standard deviation of seconds per item of worker i (NaN before two items)."""
        n = self.items_done[i]
        if n < 2:
            return math.nan
        mu = self.compute_time[i] / n
        return math.sqrt(max(self.sq_item_time[i] / n - mu * mu, 0.0))

    def mean_overhead(self, i: int) -> float:
        c = self.chunks_done[i]
        return self.overhead_time[i] / c if c else math.nan

    @property
    def assigned(self) -> int:
        return self.n_items - self.remaining


@dataclass
class TreeView:
    """A deciding node's knowledge of a task-tree computation (what a migration balancer reads).

    Per node i (lists of length ``n_nodes``): ``queue[i]``, the tasks waiting in its queue (Haron's
    load measure, 001 §2.1: queue length, not counting the task it is running); ``done[i]``, tasks it
    has completed; ``updated_at[i]``, when those two were measured (their age is ``time -
    updated_at[i]``: a node knows its own entry exactly and others' only as recently as a message
    brought them); ``neighbours[i]``, the nodes it may exchange work with (the topology; the complete
    graph by default); ``speeds[i]``, nominal speeds (1.0 by default); ``work[i]``, the estimated
    remaining work its waiting tasks stand for, in tree nodes (the sum of the workload's expected
    subtree sizes; all zero when the engine has no estimate, as for user trees in real runs).
    ``node`` is the deciding node
    (-1 for a central decision, e.g. :meth:`~dlbkit.balancers.base.MigrationBalancer.balance`).
    ``colours`` are the topology's edge colour classes (lists of disjoint node pairs, in exchange
    order; :func:`dlbkit.model.topology.edge_colouring`) when the engine knows the topology; empty
    means a dimension-exchange rule derives them from ``neighbours``.
    """

    n_nodes: int
    time: float = 0.0
    queue: list[int] = field(default_factory=list)
    updated_at: list[float] = field(default_factory=list)
    done: list[int] = field(default_factory=list)
    neighbours: list[list[int]] = field(default_factory=list)
    speeds: list[float] = field(default_factory=list)
    work: list[float] = field(default_factory=list)
    node: int = -1
    colours: list[list[tuple[int, int]]] = field(default_factory=list)

    def __post_init__(self):
        p = self.n_nodes
        if not self.queue:
            self.queue = [0] * p
        if not self.done:
            self.done = [0] * p
        if not self.updated_at:
            self.updated_at = [0.0] * p
        if not self.speeds:
            self.speeds = [1.0] * p
        if not self.work:
            self.work = [0.0] * p
        if not self.neighbours:
            self.neighbours = [[j for j in range(p) if j != i] for i in range(p)]

    def age(self, i: int) -> float:
        """Seconds since node i's entries were measured."""
        return self.time - self.updated_at[i]

    @property
    def waiting(self) -> int:
        """Tasks waiting over all nodes as known here (Haron's n(t), 001 §2.7)."""
        return sum(self.queue)


@dataclass
class SpmdView:
    """What the workstations of a 1-D decomposed SPMD computation know (000 §7.3).

    The domain's data points (DP) are split into contiguous blocks, one per node in node order;
    each loop every node computes its block and exchanges boundaries with its neighbours (a line:
    0–1–…–(P−1); a ring adds (P−1)–0). Per node i, measured over the last measurement window:
    ``points[i]`` DP owned; ``loop_time[i]`` mean busy seconds per loop (000's T_actual: compute,
    swap and communication); ``speed[i]`` effective processing power F (DP/s, measured, so it folds
    in background load); ``free_memory[i]`` M_f, DP that still fit in RAM (≤ 0 once swapping);
    ``swap_cost[i]`` M_a, seconds per swapped DP; ``bandwidth[i]`` BW, DP/s of its link;
    ``updated_at[i]`` when it was measured. ``boundary`` is 000's K (extra boundary DP per DP moved).
    ``nominal_speed[i]`` is node i's static processing power from the platform description (DP/s,
    never updated; empty when unknown, as in a real run) — what a balancer that ignores the current
    load assumes, like LoopView's ``speeds``.
    A distributed balancer deciding for node i may read only i and its neighbours.
    """

    n_nodes: int
    points: list[int]
    loop_time: list[float]
    speed: list[float]
    free_memory: list[float]
    swap_cost: list[float]
    bandwidth: list[float]
    layout: str = "line"
    boundary: float = 0.0
    loop: int = 0
    time: float = 0.0
    updated_at: list[float] = field(default_factory=list)
    nominal_speed: list[float] = field(default_factory=list)

    def __post_init__(self):
        if not self.updated_at:
            self.updated_at = [0.0] * self.n_nodes

    def neighbours(self, i: int) -> list[int]:
        """Node i's neighbours on the line or ring (a ring of two is a line of two)."""
        P = self.n_nodes
        if self.layout == "ring" and P > 2:
            return [(i - 1) % P, (i + 1) % P]
        return [j for j in (i - 1, i + 1) if 0 <= j < P]
