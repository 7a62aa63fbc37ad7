"""The bagging kind: the base of the bags family's balancers (which node takes the next task)."""

from __future__ import annotations

from abc import abstractmethod

from sixth.model.view import BagView

from dlbkit.balancers.base import Balancer

__all__ = ["BaggingBalancer"]


class BaggingBalancer(Balancer):
    """Decides which node takes the next task of the bag.

    One required method, :meth:`pick`; engines check its answer (:func:`sixth.balancers.decide.pick`)
    and place the task there. A rule reads only the view: loads, tasks placed, the next task's size.
    """

    kind = "bagging"

    @abstractmethod
    def pick(self, view: BagView) -> int:
        """The node (0 … ``view.n_nodes`` − 1) that takes the task of size ``view.next_size``."""
