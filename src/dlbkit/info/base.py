"""How load knowledge reaches a decider, and how old it is: the information model's contract.

Every node keeps a table of what it knows: one load value per node with the time it was measured
(its *stamp*). A node always knows its own load exactly; what it knows of the others arrives in
messages that an information model decides to send, and ages until the next one arrives. An
information model is a pure policy, like a balancer (it decides, engines do): at each of its rounds
it says which messages leave which node for which node carrying which entries (:meth:`round`); the
engine delivers each after the time the message takes on the network and hands it to
:meth:`deliver`, which merges it (timestamped, freshest wins); before a balancer decides for node
*i*, the engine asks :meth:`fill` to write *i*'s knowledge into the view's load and ``updated_at``
lists. Models never read a clock, send anything or sleep.

Cost. A message carries a header of :data:`HEADER_BYTES` and :data:`ENTRY_BYTES` per load entry
(node id, value, stamp). The model counts what it emits (``messages_``, ``bytes_``) and the age of
the entries it hands to deciders (``age_sum_``/``age_count_``), which engines report as the metrics
``info_messages``, ``info_bytes`` and ``info_age_mean``.

Freshness. At every round, before its messages leave, the layer samples the mean-square error of
every node's table against the true loads it is handed, over the ordered pairs (a, b) of distinct
nodes that take part (``members_``): ε = mean over pairs of (x̂_ab − x_a)², x̂_ab what b holds of a
(003 §4.3.3.4's freshness, with 1/S; its *improvement* η = 1 − ε_new/ε_old compares two runs:
:func:`improvement`). Engines report the run's mean as ``info_freshness``. A model whose tables
change without messages (the monitored copy) brings them up to date in :meth:`_advance`, which the
layer calls before it samples and before :meth:`fill`.

The exact model (:class:`~dlbkit.info.exact.Exact`) is the default and is what engines did before
this layer existed: every decider sees every load as it is now, for free. Engines recognise it
(``exact = True``) and keep their direct path, so results with exact information are unchanged.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model.topology import Others
from dlbkit.params import Parameterised

__all__ = ["InfoModel", "InfoMessage", "HEADER_BYTES", "ENTRY_BYTES", "MAX_NODES", "MAX_SIM_ROUNDS", "improvement"]

#: the most nodes an information model other than exact keeps tables for: every node's knowledge of
#: every node is two n × n tables (values and stamps), 1 GiB at this size
MAX_NODES = 8192

#: the most information rounds one simulated run may hold (dlbkit's limit). Rounds come every
#: ``period`` seconds of simulated time for as long as the run lasts, so their count is (the run's
#: length) / period, which nothing bounds before the run: a period of 1e-9 s on a run of 10 s would be
#: 10^10 rounds, each a Python call and its messages (events of their own). A simulated engine calls
#: :meth:`InfoModel.check_budget` after each round, which stops the run with a ConfigError naming the
#: period. A round costs at least tens of microseconds (16 nodes: ~160 µs with its messages), so this
#: many is minutes at most; the shipped runs stay far below it (docs/experiments.md, "Limits"). A real
#: run (the runtime, ``dlbkit.Cluster``) is paced by the clock and has no such limit.
MAX_SIM_ROUNDS = 1_000_000

#: bytes of a load message's header: a type tag, sender, receiver and entry count (as a control message)
HEADER_BYTES = 32
#: bytes per load entry carried: node id (4), load (4), stamp (8)
ENTRY_BYTES = 16


@dataclass(frozen=True)
class InfoMessage:
    """Load entries on their way from *src* to *dst*: ``nodes[k]`` had load ``values[k]`` at
    ``stamps[k]`` (a snapshot taken when the message was sent)."""

    src: int
    dst: int
    nodes: np.ndarray
    values: np.ndarray
    stamps: np.ndarray

    @property
    def bytes(self) -> float:
        return HEADER_BYTES + ENTRY_BYTES * len(self.nodes)


class InfoModel(Parameterised, ABC):
    """Base of the information models. Subclasses set ``name`` and implement :meth:`_send`, the one
    required method.

    Learned state (the tables, counters) ends in ``_`` and is reset by :meth:`start`, which engines
    call before a run with the node count, neighbour lists, the loads at time 0 (which every node
    knows: the start is part of the program) and a Generator for the model's own draws.
    """

    name: ClassVar[str] = ""
    #: True only for the exact model: engines skip the layer (no rounds, no tables)
    exact: ClassVar[bool] = False
    #: the node whose table central decisions read (the coordinator of a periodic rule)
    centre: int = 0

    # --- run state ------------------------------------------------------------------------------
    def start(self, n_nodes: int, neighbours: Sequence[Sequence[int]], loads: Sequence[float],
              rng: np.random.Generator | None = None) -> None:
        """Reset the tables: every node knows *loads* at time 0; validate parameters."""
        self.validate()
        if n_nodes < 1:
            raise ConfigError("n_nodes", n_nodes, "at least 1 node")
        self.check_size(n_nodes)
        if len(loads) != n_nodes or len(neighbours) != n_nodes:
            raise ConfigError("loads", len(loads), f"one load and one neighbour list per node ({n_nodes})")
        self.n_nodes_ = n_nodes
        # a large complete topology's neighbours (Others) stay as they are: lists would hold n² entries
        self.neighbours_ = [nb if isinstance(nb, Others) else list(map(int, nb)) for nb in neighbours]
        self.rng_ = rng
        self.values_ = np.tile(np.asarray(loads, dtype=float), (n_nodes, 1))  # row i: what node i knows
        self.stamps_ = np.zeros((n_nodes, n_nodes))
        self.rounds_ = 0
        self.messages_ = 0
        self.bytes_ = 0.0
        self.age_sum_ = 0.0
        self.age_count_ = 0
        self.members_ = np.ones(n_nodes, dtype=bool)  # the nodes that take part (all, unless a model says)
        self.eps_sum_ = 0.0
        self.eps_count_ = 0

    def check_size(self, n_nodes: int) -> None:
        """Raise ConfigError if this model cannot keep *n_nodes* nodes' tables (an experiment file
        asks before any run; :meth:`start` asks again)."""
        if n_nodes > MAX_NODES:
            raise ConfigError("info", self.name, f"'exact' (the default) on {n_nodes:,} nodes (a model that "
                              f"sends loads keeps two n × n tables of what every node knows, so at most "
                              f"{MAX_NODES:,} nodes)")

    @property
    def interval(self) -> float:
        """Seconds between rounds (``inf``: the model sends nothing)."""
        return getattr(self, "period", float("inf"))

    def check_rounds_until(self, t_end: float) -> None:
        """Raise ConfigError naming ``info.period`` before a run whose rounds go on until at least *t_end*
        (simulated seconds: a job stream's last arrival) if that makes more than :data:`MAX_SIM_ROUNDS`
        rounds, which :meth:`check_budget` would stop only after running them."""
        rounds = math.floor(t_end / self.interval) if math.isfinite(self.interval) else 0
        if rounds > MAX_SIM_ROUNDS:
            raise ConfigError("info.period", self.interval, f"a period long enough for at most {MAX_SIM_ROUNDS:,} "
                              f"information rounds in a simulated run (dlbkit's limit): the jobs arrive over "
                              f"{t_end:.6g} s, {rounds:,} rounds at this period; at least "
                              f"{t_end / MAX_SIM_ROUNDS:.3g} s")

    def check_budget(self, t: float) -> None:
        """Raise ConfigError naming ``info.period`` once this run has held :data:`MAX_SIM_ROUNDS`
        rounds (*t*: the simulated time, seconds). Simulated engines call it after each round: a run of
        exactly that many rounds is within the limit, the next round stops it."""
        if self.rounds_ > MAX_SIM_ROUNDS:
            raise ConfigError("info.period", self.interval, f"a period long enough for at most {MAX_SIM_ROUNDS:,} "
                              f"information rounds in a simulated run (dlbkit's limit; {self.name}'s rounds reached it "
                              f"at simulated time {t:.6g} s: use a coarser period or a shorter run)")

    # --- the three calls engines make -------------------------------------------------------------
    def round(self, t: float, loads: Sequence[float]) -> list[InfoMessage]:
        """The messages sent at *t* (engines call this at t = period, 2·period, …); *loads* are the true
        loads now, which every sender knows of itself. Counted in ``messages_`` and ``bytes_``."""
        self.rounds_ += 1
        own = np.asarray(loads, dtype=float)
        self._advance(t)
        self.eps_sum_ += self.freshness(own)
        self.eps_count_ += 1
        idx = np.arange(self.n_nodes_)
        self.values_[idx, idx] = own  # each node's own entry is exact when it sends
        self.stamps_[idx, idx] = t
        msgs = self._send(t)
        self.messages_ += len(msgs)
        self.bytes_ += sum(m.bytes for m in msgs)
        return msgs

    def deliver(self, msg: InfoMessage) -> None:
        """Merge *msg* into its receiver's table: an entry replaces what the receiver has only if it
        is newer (freshest wins; the receiver's own entry is never replaced)."""
        row_v, row_s = self.values_[msg.dst], self.stamps_[msg.dst]
        newer = (msg.stamps > row_s[msg.nodes]) & (msg.nodes != msg.dst)
        nodes = msg.nodes[newer]
        row_v[nodes] = msg.values[newer]
        row_s[nodes] = msg.stamps[newer]

    def began_listening(self, node: int, t: float) -> None:
        """*node* began to take part at *t*, after the run's time 0 (a real node whose process started
        late: spawn, imports under load). Its table keeps the start's loads with their true stamps
        (when they were measured: the merge compares them), so by default nothing changes; a model
        that ages what a node has *heard* (``scatter-4.3``'s timeout) counts that silence from *t* at
        the earliest, since a node could hear nothing before it listened. Real engines call it once per
        node after :meth:`start`; simulated nodes all begin at 0."""

    def fill(self, node: int, t: float, own_load: float, values: list, stamps: list, *,
             integer: bool = False) -> None:
        """Write what *node* knows at *t* into a view's *values* and *stamps* lists (its own entry is
        *own_load*, measured now; *integer* for counts such as waiting tasks); count the age of the
        others' entries."""
        self._advance(t)
        row_v, row_s = self.values_[node], self.stamps_[node]
        row_v[node] = own_load
        row_s[node] = t
        values[:] = row_v.astype(np.int64).tolist() if integer else row_v.tolist()
        stamps[:] = row_s.tolist()
        if self.n_nodes_ > 1:
            self.age_sum_ += float(t * (self.n_nodes_ - 1) - (row_s.sum() - t))
            self.age_count_ += self.n_nodes_ - 1

    @property
    def age_mean(self) -> float:
        """Mean age (s) of the other nodes' entries handed to deciders so far (NaN before any)."""
        return self.age_sum_ / self.age_count_ if self.age_count_ else float("nan")

    def freshness(self, loads: Sequence[float]) -> float:
        """ε now: the mean over ordered pairs (a, b) of distinct member nodes of (what b holds of a −
        a's true load in *loads*)² (0 with fewer than two members)."""
        x = np.asarray(loads, dtype=float)
        if self.members_.all():
            k, err = self.n_nodes_, self.values_ - x
        else:
            m = np.flatnonzero(self.members_)
            k, err = len(m), self.values_[np.ix_(m, m)] - x[m]
        if k < 2:
            return 0.0
        sq = err * err
        return float((sq.sum() - np.trace(sq)) / (k * (k - 1)))

    @property
    def freshness_mean(self) -> float:
        """The mean of ε over the rounds so far (NaN before any): the run's ``info_freshness``."""
        return self.eps_sum_ / self.eps_count_ if self.eps_count_ else float("nan")

    def _advance(self, t: float) -> None:
        """Bring the tables to time *t* when they change without messages (default: nothing)."""

    # --- what a model decides (its one required method) ---------------------------------------------
    @abstractmethod
    def _send(self, t: float) -> list[InfoMessage]:
        """The messages of one round (the tables' own entries are current)."""

    def _entries(self, src: int, dst: int, nodes: np.ndarray) -> InfoMessage:
        """A message from *src* to *dst* with *src*'s entries for *nodes*, as it knows them now."""
        return InfoMessage(src, dst, nodes, self.values_[src, nodes].copy(), self.stamps_[src, nodes].copy())


def improvement(eps_new: float, eps_old: float) -> float:
    """η = 1 − ε_new/ε_old (003 §4.3.3.4): the share of the old algorithm's error a model removes."""
    return 1.0 - eps_new / eps_old
