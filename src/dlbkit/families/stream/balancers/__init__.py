"""Placement balancers: where each task of a job that arrived at a node runs (job streams, 003)."""

from dlbkit.families.stream.balancers.batch_sampling import BatchSampling
from dlbkit.families.stream.balancers.hybrid_batch import HybridBatch
from dlbkit.families.stream.balancers.jiq import JoinIdleQueue
from dlbkit.families.stream.balancers.jsq import JoinShortestQueue
from dlbkit.families.stream.balancers.local import Local
from dlbkit.families.stream.balancers.nezha import Nezha
from dlbkit.families.stream.balancers.power_of_d import PowerOfD
from dlbkit.families.stream.balancers.random_place import RandomPlacement
from dlbkit.families.stream.balancers.round_robin_place import RoundRobinPlacement
from dlbkit.families.stream.balancers.speed_d import SpeedAwareD
from dlbkit.families.stream.balancers.spillback import Spillback

__all__ = ["Local", "RandomPlacement", "RoundRobinPlacement", "JoinShortestQueue", "PowerOfD", "Nezha", "HybridBatch",
           "JoinIdleQueue", "SpeedAwareD", "BatchSampling", "Spillback"]
