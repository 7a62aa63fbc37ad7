"""Trace: the record of one run, in one format for simulated and real runs.

Columnar lists (appended in engines' hot loops, turned into numpy arrays on demand):
* ``chunks``: one row per chunk of work: worker, first item, count, ``t_ask`` (worker asked / was
  ready), ``t_start`` (work arrived), ``t_end`` (computation finished), round (-1 outside rounds);
* ``rounds``: per round and worker, the round mechanism's measurements;
* messages and bytes spent on balancing (requests, replies carrying work, results).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Trace"]

CHUNK_COLUMNS = ("worker", "first", "count", "t_ask", "t_start", "t_end", "round")
ROUND_COLUMNS = ("round", "worker", "count", "t_send", "send_time", "calc_time", "exe_time")


@dataclass
class Trace:
    """What happened in a run; metrics are computed from it (see :mod:`dlbkit.model.metrics`)."""

    n_workers: int
    worker_nodes: list[int]
    balancer: str = ""
    seed: int | None = None
    source: str = "sim"  # "sim" or a runtime backend name
    worker: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    count: list[int] = field(default_factory=list)
    t_ask: list[float] = field(default_factory=list)
    t_start: list[float] = field(default_factory=list)
    t_end: list[float] = field(default_factory=list)
    round_of: list[int] = field(default_factory=list)
    rounds: list[tuple] = field(default_factory=list)
    messages: int = 0
    bytes: float = 0.0
    events: int = 0
    end_time: float = 0.0  # when the master holds every result
    #: the information layer's cost and the mean age of the loads deciders read (NaN: the engine
    #: has no information layer; dlbkit.info)
    info_messages: float = math.nan
    info_bytes: float = math.nan
    info_age_mean: float = math.nan
    #: per-worker speed and realised availability, total work and the largest item (for bounds)
    speeds: list[float] = field(default_factory=list)
    availability: list[Any] = field(default_factory=list)
    total_work: float = 0.0
    max_item: float = 0.0
    meta: dict = field(default_factory=dict)

    def add_chunk(self, worker: int, first: int, count: int, t_ask: float, t_start: float, t_end: float,
                  round: int = -1) -> None:
        """Append one chunk row (engines with a hot loop append to the columns directly)."""
        self.worker.append(worker)
        self.first.append(first)
        self.count.append(count)
        self.t_ask.append(t_ask)
        self.t_start.append(t_start)
        self.t_end.append(t_end)
        self.round_of.append(round)

    def chunk_table(self) -> dict[str, np.ndarray]:
        return {"worker": np.asarray(self.worker, dtype=np.int64), "first": np.asarray(self.first, dtype=np.int64),
                "count": np.asarray(self.count, dtype=np.int64), "t_ask": np.asarray(self.t_ask),
                "t_start": np.asarray(self.t_start), "t_end": np.asarray(self.t_end),
                "round": np.asarray(self.round_of, dtype=np.int64)}

    def round_table(self) -> dict[str, np.ndarray]:
        cols = list(zip(*self.rounds)) if self.rounds else [[] for _ in ROUND_COLUMNS]
        return {name: np.asarray(col) for name, col in zip(ROUND_COLUMNS, cols)}

    @property
    def n_chunks(self) -> int:
        return len(self.worker)

    def story(self, item: int) -> dict | None:
        """Which chunk processed *item*: worker, chunk bounds and times (None if never processed)."""
        for k in range(self.n_chunks):
            if self.first[k] <= item < self.first[k] + self.count[k]:
                return {c: getattr(self, "round_of" if c == "round" else c)[k] for c in CHUNK_COLUMNS}
        return None
