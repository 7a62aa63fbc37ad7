"""Repartition balancers: how many data points of a decomposed domain move between neighbours (000)."""

from dlbkit.families.spmd.balancers.baselines import HomogeneousDiffusion, ProcessorOnly
from dlbkit.families.spmd.balancers.chain import OptimalChain, optimal_chain_partition, partition_transfers
from dlbkit.families.spmd.balancers.dlah import DLAH

__all__ = ["DLAH", "HomogeneousDiffusion", "ProcessorOnly", "OptimalChain", "optimal_chain_partition",
           "partition_transfers"]
