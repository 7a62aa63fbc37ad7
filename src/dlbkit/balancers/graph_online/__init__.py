"""Online mappers of the task-graph family: tasks placed during the run (002 §5), kind ``mapping``
with :class:`~dlbkit.balancers.base.OnlineMapping`'s ``place`` hook; run by the ``dynamic`` engine."""

from dlbkit.balancers.graph_online.pd import PseudoDynamic
from dlbkit.balancers.graph_online.replanning_heft import ReplanningHEFT

__all__ = ["PseudoDynamic", "ReplanningHEFT"]
