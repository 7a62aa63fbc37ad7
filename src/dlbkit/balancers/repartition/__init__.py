"""Repartition balancers: how many data points of a decomposed domain move between neighbours (000)."""

from .baselines import HomogeneousDiffusion, ProcessorOnly
from .chain import OptimalChain, optimal_chain_partition, partition_transfers
from .dlah import DLAH

__all__ = ["DLAH", "HomogeneousDiffusion", "ProcessorOnly", "OptimalChain", "optimal_chain_partition",
           "partition_transfers"]
