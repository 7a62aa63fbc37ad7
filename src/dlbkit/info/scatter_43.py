"""Algorithm 4.3: Algorithm 4.2 that stops sending to peers it has not heard from (sliding N̂)."""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np

from dlbkit.model.gossip_recursion import cycle_steps
from dlbkit.params import Interval
from dlbkit.info.registry import register
from dlbkit.info.scatter_42 import Scatter42

__all__ = ["Scatter43"]

#: the largest cluster whose complete cycle the recursion computes for the default timeout (beyond it
#: the cycle is scaled by ln N / ln 64, f-4.3's growth at n = N)
RECURSION_LIMIT = 64


def default_timeout(n: int) -> int:
    """Periods without a message from a peer before it is dropped: twice a complete cycle T(N, N)
    (003 §4.4.2's "e.g. twice the steps of a complete cycle"; Tables 6–8's recursion)."""
    if n < 2:
        return 2
    if n <= RECURSION_LIMIT:
        return 2 * cycle_steps(n, n)
    return 2 * math.ceil(cycle_steps(RECURSION_LIMIT, RECURSION_LIMIT) * math.log(n) / math.log(RECURSION_LIMIT))


@register
class Scatter43(Scatter42):
    """Algorithm 4.2 (shift-and-merge, Algorithm 4.1's selection) with status adaptation: node i drops
    peer j from the peers it selects once it has had no message *from* j for *timeout* periods (None:
    twice a complete cycle, 2·T(N, N) from the recursion: 32 periods at N = 8), and takes j back when
    a message from j arrives, so each node scatters over its own N̂_i = N − (peers it regards as
    inactive), sliding towards the active count n. A node that has received nothing from anyone for
    *timeout* periods regards itself as inactive (cut off) and sends to all peers again.

    Source: 003 §4.4.2, Algorithm 4.3 (``propagation_improved2``; Theorem 4.3: fewer steps to inform
    the active nodes when n < N; Table 8's sliding mode N̂ = n; Table 9: the freshness gain grows as
    the active count falls). Not built: passing j's status along in the vector (each receiver decides
    for itself anyway, as the text says) and the periodic re-discovery that heals a partition (§4.4.2's
    caveat): a peer dropped wrongly comes back only when it sends to this node.

    Helps: no sends wasted on crashed or over-loaded nodes once they are found out, so a complete
    cycle takes about T(n, n) steps instead of T(n, N). Backfires: a slow but live peer whose messages
    take longer than the timeout is dropped, and the first 2·T periods after a node goes down are
    still wasted.
    """

    name = "scatter-4.3"
    _parameter_constraints = {**Scatter42._parameter_constraints, "timeout": [None, Interval(Integral, 1, None)]}

    def __init__(self, *, period: float = 0.01, l: int | None = None, inactive: tuple = (),  # noqa: E741
                 timeout: int | None = None):
        super().__init__(period=period, l=l, inactive=inactive)
        self.timeout = timeout

    def start(self, n_nodes, neighbours, loads, rng=None):
        super().start(n_nodes, neighbours, loads, rng)
        self.timeout_ = self.timeout if self.timeout is not None else default_timeout(n_nodes)
        self.heard_ = np.zeros((n_nodes, n_nodes))  # when i last had a message from j (the start counts:
        # time 0, or when i began listening, :meth:`began_listening`)
        self.heard_any_ = np.zeros(n_nodes)
        self.now_ = 0.0

    def began_listening(self, node, t):
        # a node silent towards one that was not yet listening has said nothing about itself: age its
        # silence from then (otherwise a late node drops every peer at once, and narrows to the first
        # it hears from, leaving the others to come back only when they happen to send to it)
        self.heard_[node] = np.maximum(self.heard_[node], t)
        self.heard_any_[node] = max(self.heard_any_[node], t)

    @property
    def active_counts(self) -> np.ndarray:
        """N̂_i: the nodes (itself included) each node regards as active now."""
        act = self._active()
        return act.sum(axis=1)

    def _active(self) -> np.ndarray:
        limit = self.timeout_ * self.period * (1 + 1e-9)
        act = (self.now_ - self.heard_) <= limit
        np.fill_diagonal(act, True)
        return act

    def _peers(self):
        n = self.n_nodes_
        act = self._active()
        cut_off = (self.now_ - self.heard_any_) > self.timeout_ * self.period * (1 + 1e-9)
        out = []
        for i in range(n):
            if not self.members_[i] or n < 2:
                out.append(None)
                continue
            out.append(self.epochs_.next(i, None if cut_off[i] else act[i]))
        return out

    def _send(self, t):
        self.now_ = t
        return super()._send(t)

    def _merge(self, msg):
        t = float(msg.stamps[0])  # the sender's own entry: stamped when it sent
        a, b = msg.dst, msg.src
        self.heard_[a, b] = max(self.heard_[a, b], t)
        self.heard_any_[a] = max(self.heard_any_[a], t)
        super()._merge(msg)
