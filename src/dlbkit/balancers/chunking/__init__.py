"""Chunking balancers: how many items the next request or round gets."""

from .static import Proportional, Static
from .selfsched import SelfScheduling

__all__ = ["Static", "Proportional", "SelfScheduling"]
