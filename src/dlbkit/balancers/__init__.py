"""Balancers: pure decisions. Importing this package registers every balancer."""

from . import chunking  # noqa: F401  (registers)
from . import migration  # noqa: F401  (registers)
from . import repartition  # noqa: F401  (registers)
from . import mapping  # noqa: F401  (registers)
from . import graph_online  # noqa: F401  (registers)
from . import placement  # noqa: F401  (registers)
from .base import (Balancer, ChunkingBalancer, MappingBalancer, MigrationBalancer, OnlineMapping, PlacementBalancer, Plan,
                   RepartitionBalancer, Taxonomy, Transfer)
from .registry import REGISTRY, get, make, names, register

__all__ = ["Balancer", "ChunkingBalancer", "MigrationBalancer", "RepartitionBalancer", "MappingBalancer", "OnlineMapping",
           "PlacementBalancer", "Plan", "Transfer", "Taxonomy", "REGISTRY", "get", "make", "names", "register"]
