"""Periodic reports to a central decider."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.params import Interval
from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register

__all__ = ["Periodic"]


@register
class Periodic(InfoModel):
    """Every *period* seconds each node sends its own load to the centre (node *centre*); the centre's
    knowledge of node j is as old as j's last report plus its travel, and the other nodes know only
    their own load (and the start).

    Source: the central load-information scheme of the Loadserver (001 §2.2: nodes register their
    state with the server) and of a master that polls its workers (004's rounds report their times at
    the end of each round); the runtime's coordinator, to which workers report, is this model.

    Helps: P − 1 small messages a period, and a central rule (GDEM run by a coordinator, greedy)
    sees every node. Backfires: a rule deciding at a node other than the centre (RID, SID, an idle
    node choosing a victim) sees no one but itself; a long period lets the centre act on old loads.
    """

    name = "periodic"
    _parameter_constraints = {"period": [Interval(Real, 0, None, closed="neither")],
                              "centre": [Interval(Integral, 0, None)]}

    def __init__(self, *, period: float = 0.01, centre: int = 0):
        self.period = period
        self.centre = centre

    def check_size(self, n_nodes):
        # here, not only in start: an experiment file asks before any run (the centre must be a node)
        super().check_size(n_nodes)
        if self.centre >= n_nodes:
            raise ConfigError(self.param_field("centre"), self.centre, f"a node index below {n_nodes}")

    def _send(self, t):
        c = self.centre
        return [self._entries(i, c, np.array([i])) for i in range(self.n_nodes_) if i != c]
