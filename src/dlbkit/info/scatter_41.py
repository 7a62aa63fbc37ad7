"""Algorithm 4.1 on its own: each node tells its own load to the peers of a random permutation, in turn."""

from __future__ import annotations

import numpy as np

from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register
from dlbkit.info.scatter_base import Scatter

__all__ = ["Scatter41"]


@register
class Scatter41(Scatter):
    """Every *period* seconds each node sends its own load, alone (a vector of length one), to the next
    peer of Algorithm 4.1's ``constraint_select``: a random permutation of its N − 1 peers, walked one
    peer a period, a fresh permutation when all have been used. Nothing is forwarded: a node learns
    of another only from that node, and hears from every one exactly once per epoch of N − 1 periods.

    Source: 003 §4.3.2, Algorithm 4.1 (randomised node selection with local constraints; Theorem 4.1:
    memory in the selection removes the long waits of uniform selection) and Corollary 4.2's case of
    information "of length one", which reaches every node within N − 1 steps. One entry a message
    carries its own stamp, so the merge is freshest-wins (out-of-order arrival cannot regress it).

    Helps: the smallest messages (one entry) and a bound on every entry's age, (N − 1) periods plus
    a transfer. Backfires: that bound grows with N, where forwarding (Algorithm 4.2, gossip) needs
    O(log N) periods.
    """

    name = "scatter-4.1"
    selection = "constrained"

    def _message(self, src, dst, t):
        return self._entries(src, dst, np.array([src]))

    def _merge(self, msg):
        InfoModel.deliver(self, msg)
