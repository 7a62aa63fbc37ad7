"""Exact, instant load information: every decider sees every load as it is now, for free."""

from __future__ import annotations

from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register

__all__ = ["Exact"]


@register
class Exact(InfoModel):
    """Exact and instant: the loads a decider reads are the true loads at the moment it decides, and
    knowing them costs nothing (no messages, age 0).

    Source: the idealisation every simulator of the source documents makes unless it models the
    exchange (001's superstep model costs only the pairwise exchanges of GDEM and the Loadserver's
    registrations); the default, and what dlbkit's engines did before the information layer.
    Engines keep their direct path for it (``exact``), so results with it equal those without.
    """

    name = "exact"
    exact = True

    def _send(self, t):
        return []


