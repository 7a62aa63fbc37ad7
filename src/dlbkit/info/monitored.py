"""The monitored copy: every node reads the true loads as they were a fixed lag ago."""

from __future__ import annotations

from collections import deque
from numbers import Real

import numpy as np

from dlbkit.params import Interval
from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register

__all__ = ["Monitored"]


@register
class Monitored(InfoModel):
    """Every *period* seconds a monitor copies the true loads; each copy becomes what every node knows
    *lag* seconds later. A decider at t thus reads the loads of the last copy taken at or before
    t − *lag* (exact at the copy's time; its own load always current). No message is modelled: the
    copy is free (``info_messages`` 0), as the source's monitor thread costs the dispatchers nothing.

    Source: 003 §3.4, the Chapter 3 DLB simulator's monitoring-latency model: a *real* and a
    *monitored* workload array, dispatchers deciding on the monitored one, "an extra thread" injecting
    the lag between them (Observation 3.5: both algorithms are insensitive to that latency over a wide
    range). *lag* 0 with a short *period* approaches exact information.

    Helps: isolates the effect of stale loads from how they spread (every node equally stale, no
    randomness). Backfires: no real system is this uniform; gossip's ages vary from node to node.
    """

    name = "monitored"
    _parameter_constraints = {"period": [Interval(Real, 0, None, closed="neither")],
                              "lag": [Interval(Real, 0, None)]}

    def __init__(self, *, lag: float = 0.1, period: float = 0.01):
        self.lag = lag
        self.period = period

    def start(self, n_nodes, neighbours, loads, rng=None):
        super().start(n_nodes, neighbours, loads, rng)
        self.pending_: deque = deque()  # (time taken, loads) not yet visible

    def _send(self, t):
        self.pending_.append((t, np.diag(self.values_).copy()))  # the own entries: the true loads now
        self._advance(t)  # lag 0: visible at once
        return []

    def _advance(self, t):
        tol = 1e-12 * max(1.0, abs(t))
        while self.pending_ and self.pending_[0][0] + self.lag <= t + tol:
            taken, loads = self.pending_.popleft()
            own = np.diag(self.values_).copy()
            own_s = np.diag(self.stamps_).copy()
            self.values_[:] = loads[None, :]
            self.stamps_[:] = taken
            idx = np.arange(self.n_nodes_)
            self.values_[idx, idx] = own  # a node's own entry stays what it last measured
            self.stamps_[idx, idx] = own_s
