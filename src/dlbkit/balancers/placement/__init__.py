"""Placement balancers: where each task of a job that arrived at a node runs (job streams, 003)."""

from .batch_sampling import BatchSampling
from .hybrid_batch import HybridBatch
from .jiq import JoinIdleQueue
from .jsq import JoinShortestQueue
from .local import Local
from .nezha import Nezha
from .power_of_d import PowerOfD
from .random_place import RandomPlacement
from .round_robin_place import RoundRobinPlacement
from .speed_d import SpeedAwareD
from .spillback import Spillback

__all__ = ["Local", "RandomPlacement", "RoundRobinPlacement", "JoinShortestQueue", "PowerOfD", "Nezha", "HybridBatch",
           "JoinIdleQueue", "SpeedAwareD", "BatchSampling", "Spillback"]
