"""The repartition kind: the base of the SPMD family's balancers (how a domain's parts are redrawn between iterations)."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from dlbkit.balancers.base import Balancer, Transfer

__all__ = ["RepartitionBalancer"]


class RepartitionBalancer(Balancer):
    """Decides how many data points of a decomposed domain move between neighbouring nodes.

    One required method, :meth:`decide`: at the end of node *node*'s measurement window, the
    transfers it initiates (``Transfer(node, neighbour, dp)``; blocks stay contiguous because data
    points only move between neighbours, taken from the side that touches the receiver). A
    distributed rule (DLAH, diffusion) reads only *node* and its neighbours in the
    :class:`~dlbkit.families.spmd.model.view.SpmdView`; a central rule sets ``central = True`` and engines call
    :meth:`decide` once per window with ``node = -1``, accepting transfers between any neighbours.
    Engines clamp a transfer so that a sender keeps at least one data point.
    """

    kind = "repartition"
    kind_use = "it moves an SPMD domain's rows: dlbkit.spmd, an SPMD workload"
    #: True when the rule decides for the whole domain at once (engines pass node = -1)
    central: ClassVar[bool] = False

    @abstractmethod
    def decide(self, view, node: int) -> list[Transfer]:
        """The transfers to make now (an empty list when the node is balanced)."""
