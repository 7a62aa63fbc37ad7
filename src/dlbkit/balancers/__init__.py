"""Balancers: pure decisions. Importing this package registers every balancer."""

from dlbkit.balancers import chunking  # noqa: F401  (registers)
from dlbkit.balancers import migration  # noqa: F401  (registers)
from dlbkit.balancers import repartition  # noqa: F401  (registers)
from dlbkit.balancers import mapping  # noqa: F401  (registers)
from dlbkit.balancers import graph_online  # noqa: F401  (registers)
from dlbkit.balancers import placement  # noqa: F401  (registers)
from dlbkit.balancers.base import (Balancer, ChunkingBalancer, MappingBalancer, MigrationBalancer, OnlineMapping, PlacementBalancer, Plan,
                   RepartitionBalancer, Taxonomy, Transfer)
from dlbkit.balancers.registry import REGISTRY, get, make, names, register

__all__ = ["Balancer", "ChunkingBalancer", "MigrationBalancer", "RepartitionBalancer", "MappingBalancer", "OnlineMapping",
           "PlacementBalancer", "Plan", "Transfer", "Taxonomy", "REGISTRY", "get", "make", "names", "register"]
