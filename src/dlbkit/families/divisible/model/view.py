"""The divisible family's view: what a chunking balancer reads of a loop in progress."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from dlbkit.model.view import View

__all__ = ["LoopView"]


@dataclass
class LoopView(View):
    """The master's knowledge of a divisible loop (what a chunking balancer decides from).

    Per node i (lists of length ``n_nodes``: the nodes that compute, which 004 calls workers): ``items_done[i]``, ``chunks_done[i]``,
    ``compute_time[i]`` (measured seconds spent computing), ``sq_item_time[i]`` (sum of squared
    per-item times, for the standard deviation), ``overhead_time[i]`` (seconds between asking for work
    and starting it: scheduling overhead plus communication), ``last_chunk[i]``, ``last_time[i]``, and
    ``updated_at[i]`` (when those measurements were taken: their age is ``time - updated_at[i]``).

    ``speeds`` are the *nominal* node speeds from the platform description (what a static or
    weighted technique may assume); the measurements are what adaptive techniques learn from.
    The master decides (``node`` = -1); every node is every other's neighbour.
    In the round-based mechanism (Sánchez et al.) ``round`` counts completed rounds and
    ``exe_time``/``calc_time``/``send_time``/``last_chunk`` describe the last round, ``order`` its
    send order. 004 calls ``calc_time`` t_calc, ``exe_time`` t_exe and items "information units".
    """

    n_items: int
    n_nodes: int
    speeds: list[float]
    remaining: int = -1
    time: float = 0.0
    node: int = -1
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
    neighbours: list[Sequence[int]] = field(default_factory=list)

    def __post_init__(self):
        p = self.n_nodes
        # ``neighbours`` stays empty: the master serves every worker and no chunking rule reads a
        # topology (not built: a loop may have 10^5 workers, and P² entries took minutes and GBs)
        self._fill(p, updated_at=0.0)
        if self.remaining < 0:
            self.remaining = self.n_items
        self._fill(p, items_done=0, chunks_done=0, last_chunk=0, compute_time=0.0, sq_item_time=0.0,
                   overhead_time=0.0, last_time=0.0, exe_time=0.0, calc_time=0.0, send_time=0.0)
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

    def measured_speed(self, i: int) -> float:
        """Items per second node i computed so far (NaN before its first result)."""
        c = self.compute_time[i]
        return self.items_done[i] / c if c > 0 else math.nan

    def mean_overhead(self, i: int) -> float:
        c = self.chunks_done[i]
        return self.overhead_time[i] / c if c else math.nan

    @property
    def assigned(self) -> int:
        return self.n_items - self.remaining
