"""Bagging balancers: which node takes the next task of the bag (importing the package registers them)."""

from sixth.balancers.leastloaded import BagLeastLoaded
from sixth.balancers.roundrobin import BagRoundRobin

__all__ = ["BagLeastLoaded", "BagRoundRobin"]
