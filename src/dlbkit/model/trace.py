"""Trace: the record of one run, in one format for every family, simulated and real.

Columnar lists (appended in engines' hot loops, or set once as arrays; turned into numpy arrays on
demand):

* **intervals**: one row per stretch of work a node did: ``node``, ``first`` and ``count`` (which
  work: items of a loop, a task, the data points a node held in an SPMD loop), ``t_ask`` (the node
  asked for it or was ready), ``t_start``, ``t_end``, ``round_of`` (the round, SPMD loop or
  iteration it belongs to; -1 outside rounds);
* **rounds**: per round and node, the round mechanism's measurements (004 §2.2);
* **transfers**: one row per move of work that balancing decided and carried out: ``(round, time, src,
  dst, n)`` (round -1 outside rounds; time NaN where the engine counts loops, not seconds);
* **decisions**: when the engine was asked to record them, one :class:`Decision` per call of a
  balancer: which node decided what, from a view of which age;
* **series**: named arrays of a family's per-round measurements (SPMD: ``loop_time`` and ``points``,
  loops × nodes; a task tree's ``waiting``), and ``meta`` for the rest.

Metrics are computed from a trace (:mod:`dlbkit.model.metrics`, and each family's own, see
``dlbkit families``); plots draw it (:mod:`dlbkit.plots`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Trace", "Decision", "INTERVAL_COLUMNS", "ROUND_COLUMNS", "TRANSFER_COLUMNS"]

INTERVAL_COLUMNS = ("node", "first", "count", "t_ask", "t_start", "t_end", "round")
ROUND_COLUMNS = ("round", "node", "count", "t_send", "send_time", "calc_time", "exe_time")
TRANSFER_COLUMNS = ("round", "time", "src", "dst", "n")


@dataclass(frozen=True)
class Decision:
    """One call of a balancer: at *time* node *node* (-1: a central decider) asked *hook* and got
    *answer*; *age* is the mean over the other nodes of ``view.time − view.updated_at[j]`` in the
    view it read (with exact information entries are current, and a node's ``updated_at`` is when
    its load last changed; with an information model, when the decider last heard of it). *view* is
    a copy of that view (to replay the decisions: tests/test_decisions.py)."""

    time: float
    node: int
    hook: str
    answer: Any
    age: float = 0.0
    view: Any = None


@dataclass
class Trace:
    """What happened in a run; metrics are computed from it (see :mod:`dlbkit.model.metrics`).

    *n_nodes* nodes (the view's index); ``node_of[i]`` is the platform node that node i ran on (the
    divisible family's master is not a node of the view); *family* names the workload family.
    """

    n_nodes: int
    node_of: list[int]
    balancer: str = ""
    seed: int | None = None
    source: str = "sim"  # "sim" or a runtime backend name
    family: str = "divisible"
    node: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)
    count: list[int] = field(default_factory=list)
    t_ask: list[float] = field(default_factory=list)
    t_start: list[float] = field(default_factory=list)
    t_end: list[float] = field(default_factory=list)
    round_of: list[int] = field(default_factory=list)
    rounds: list[tuple] = field(default_factory=list)
    transfers: list[tuple] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    series: dict[str, np.ndarray] = field(default_factory=dict)
    messages: int = 0
    bytes: float = 0.0
    events: int = 0
    end_time: float = 0.0  # when the last result is in (the master holds every result)
    #: the information layer's cost and the mean age of the loads deciders read (NaN: the engine
    #: has no information layer; dlbkit.info)
    info_messages: float = math.nan
    info_bytes: float = math.nan
    info_age_mean: float = math.nan
    #: per-node speed and realised availability, total work and the largest item (for bounds)
    speeds: list[float] = field(default_factory=list)
    availability: list[Any] = field(default_factory=list)
    total_work: float = 0.0
    max_item: float = 0.0
    meta: dict = field(default_factory=dict)

    def add_interval(self, node: int, first: int, count: int, t_ask: float, t_start: float, t_end: float,
                     round: int = -1) -> None:
        """Append one interval row (engines with a hot loop append to the columns directly)."""
        self.node.append(node)
        self.first.append(first)
        self.count.append(count)
        self.t_ask.append(t_ask)
        self.t_start.append(t_start)
        self.t_end.append(t_end)
        self.round_of.append(round)

    def intervals(self) -> dict[str, np.ndarray]:
        """The interval rows as columns (:data:`INTERVAL_COLUMNS`)."""
        return {"node": np.asarray(self.node, dtype=np.int64), "first": np.asarray(self.first, dtype=np.int64),
                "count": np.asarray(self.count, dtype=np.int64), "t_ask": np.asarray(self.t_ask, dtype=float),
                "t_start": np.asarray(self.t_start, dtype=float), "t_end": np.asarray(self.t_end, dtype=float),
                "round": np.asarray(self.round_of, dtype=np.int64)}

    def round_table(self) -> dict[str, np.ndarray]:
        cols = list(zip(*self.rounds)) if self.rounds else [[] for _ in ROUND_COLUMNS]
        return {name: np.asarray(col) for name, col in zip(ROUND_COLUMNS, cols)}

    def transfer_table(self) -> dict[str, np.ndarray]:
        """The transfer rows as columns (:data:`TRANSFER_COLUMNS`)."""
        cols = list(zip(*self.transfers)) if self.transfers else [[] for _ in TRANSFER_COLUMNS]
        return {name: np.asarray(col, dtype=float if name == "time" else np.int64)
                for name, col in zip(TRANSFER_COLUMNS, cols)}

    @property
    def n_intervals(self) -> int:
        return len(self.node)

    @property
    def moved(self) -> int:
        """Work moved by balancing: the sum of the transfers' amounts."""
        return int(sum(t[4] for t in self.transfers))

    @property
    def makespan(self) -> float:
        """When the last interval ended (0 for an empty run)."""
        return float(np.max(self.t_end)) if len(self.t_end) else 0.0

    def story(self, item: int) -> dict | None:
        """Which interval processed *item*: node, bounds and times (None if never processed)."""
        for k in range(self.n_intervals):
            if self.first[k] <= item < self.first[k] + self.count[k]:
                return {c: getattr(self, "round_of" if c == "round" else c)[k] for c in INTERVAL_COLUMNS}
        return None
