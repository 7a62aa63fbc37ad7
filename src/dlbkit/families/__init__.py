"""The workload families, one package each, on the shared parts they all use.

A family is a kind of parallel program: divisible loops (:mod:`.divisible`), task trees (:mod:`.tree`),
SPMD domains (:mod:`.spmd`), task graphs (:mod:`.graph`) and job streams (:mod:`.stream`). Each package
has the same rooms, in the same layers (``docs/design.md``, "A family's rooms"): ``model`` (its workload,
view, trace parts and metrics), ``balancers`` (its balancer kind's base, the checked decisions and the
balancers), ``sim`` and ``runtime`` (its engines: simulated and real), and ``face`` (its declaration,
:class:`~dlbkit.families.registry.Family`, with its real-run entry and plots). Next to the packages:
:mod:`.registry` (the Family and Engine declarations and the family registry), :mod:`.result` (the one
Result of a run) and :mod:`.run` (what every real run shares).

Adding a family is adding its package and its name in :data:`~dlbkit.families.registry.PACKAGES`; a family living elsewhere (a
user's, or the test-only one) calls :func:`~dlbkit.families.registry.register` itself.
"""

from __future__ import annotations

import importlib

from dlbkit.families.registry import (FAMILIES, PACKAGES, Engine, Family, declared_in, get, metrics_table, names, of,
                                      register)

__all__ = ["PACKAGES", "discover", "discover_balancers", "Engine", "Family", "register", "get", "names", "of",
           "declared_in", "FAMILIES", "metrics_table"]


def discover_balancers() -> None:
    """Import every built-in family's ``balancers`` package (each balancer registers itself): what the balancer
    registry needs, without the families' engines and declarations."""
    for name in PACKAGES:
        importlib.import_module(f"{__name__}.{name}.balancers")


def discover() -> None:
    """Import every built-in family's declaration (``<package>.face.family``), which registers the family and
    its balancers. The registries call this on their first read (:mod:`dlbkit.plugins`)."""
    for name in PACKAGES:
        importlib.import_module(f"{__name__}.{name}.face.family")
