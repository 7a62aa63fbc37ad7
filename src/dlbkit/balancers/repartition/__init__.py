"""Repartition balancers: how many data points of a decomposed domain move between neighbours (000)."""

from dlbkit.balancers.repartition.baselines import HomogeneousDiffusion, ProcessorOnly
from dlbkit.balancers.repartition.chain import OptimalChain, optimal_chain_partition, partition_transfers
from dlbkit.balancers.repartition.dlah import DLAH

__all__ = ["DLAH", "HomogeneousDiffusion", "ProcessorOnly", "OptimalChain", "optimal_chain_partition",
           "partition_transfers"]
