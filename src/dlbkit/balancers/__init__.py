"""Balancers: pure decisions. Importing this package registers every balancer."""

from . import chunking  # noqa: F401  (registers)
from .base import Balancer, ChunkingBalancer, Taxonomy
from .registry import REGISTRY, get, make, names, register

__all__ = ["Balancer", "ChunkingBalancer", "Taxonomy", "REGISTRY", "get", "make", "names", "register"]
