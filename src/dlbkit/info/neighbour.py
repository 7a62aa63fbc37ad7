"""Neighbour exchange: every node tells its neighbours its own load, periodically."""

from __future__ import annotations

from numbers import Real

import numpy as np

from dlbkit.params import Interval
from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register

__all__ = ["NeighbourExchange"]


@register
class NeighbourExchange(InfoModel):
    """Every *period* seconds each node sends its own load to each of its neighbours in the topology;
    a node knows its neighbours' loads as of their last message and nothing newer of anyone else.

    Source: the load exchange of diffusion and dimension-exchange schemes, where a processor reads
    only its neighbours' loads (001 §2.1 GDEM and §2.3 RID/SID, after Cybenko 1989 and Willebeek-LeMair
    & Reeves 1993), and of DLAH, where a workstation compares its loop time with its neighbours' (000
    §7.3).

    Helps: local rules (RID, SID, DLAH) get exactly what they read, at a cost of one message per
    directed edge a period. Backfires: knowledge never travels beyond one hop, so a central rule or
    one that looks for the most loaded node anywhere decides on the start state for distant nodes.
    """

    name = "neighbour"
    _parameter_constraints = {"period": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, *, period: float = 0.01):
        self.period = period

    def _send(self, t):
        return [self._entries(i, j, np.array([i])) for i in range(self.n_nodes_) for j in self.neighbours_[i]]
