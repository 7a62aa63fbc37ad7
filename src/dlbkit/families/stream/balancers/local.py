"""Local: every task runs where its job arrived (no load balancing)."""

from __future__ import annotations

from dlbkit.families.stream.balancers.base import PlacementBalancer
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["Local"]


@register
class Local(PlacementBalancer):
    """Local: a task runs on the node its job arrived at.

    Source: 003 §3.3.3, Algorithm 3.1's last case (φ(t) = 0: "no load balancing; run locally") and
    nezha_fork's ``local_create`` (§2.3.1); the unbalanced reference of every placement study.

    Helps: no transfer, no information; the right answer when arrivals already match capacity.
    Backfires: a node where jobs arrive faster than it serves them queues without bound while others idle.
    """

    name = "local"
    source = "003 §3.3.3 (Algorithm 3.1, φ(t) = 0)"
    taxonomy = Taxonomy("arrival", "distributed", "none", "the whole job", "the origin")
    reads_loads = False

    def place(self, view) -> int:
        return view.node
