"""Balancers: pure decisions. The base every balancer shares, the registry, and the checks of an answer
written once (:mod:`.decide`); each family's balancer kind and its balancers live in the family's package
(``dlbkit.families.<family>.balancers``), found by the registry on first use."""

from dlbkit.balancers.base import Balancer, Taxonomy, Transfer
from dlbkit.balancers.registry import REGISTRY, get, make, names, register

__all__ = ["Balancer", "Transfer", "Taxonomy", "REGISTRY", "get", "make", "names", "register"]
