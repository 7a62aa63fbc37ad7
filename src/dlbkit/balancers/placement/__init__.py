"""Placement balancers: where each task of a job that arrived at a node runs (job streams, 003)."""

from dlbkit.balancers.placement.batch_sampling import BatchSampling
from dlbkit.balancers.placement.hybrid_batch import HybridBatch
from dlbkit.balancers.placement.jiq import JoinIdleQueue
from dlbkit.balancers.placement.jsq import JoinShortestQueue
from dlbkit.balancers.placement.local import Local
from dlbkit.balancers.placement.nezha import Nezha
from dlbkit.balancers.placement.power_of_d import PowerOfD
from dlbkit.balancers.placement.random_place import RandomPlacement
from dlbkit.balancers.placement.round_robin_place import RoundRobinPlacement
from dlbkit.balancers.placement.speed_d import SpeedAwareD
from dlbkit.balancers.placement.spillback import Spillback

__all__ = ["Local", "RandomPlacement", "RoundRobinPlacement", "JoinShortestQueue", "PowerOfD", "Nezha", "HybridBatch",
           "JoinIdleQueue", "SpeedAwareD", "BatchSampling", "Spillback"]
