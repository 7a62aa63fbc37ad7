"""Round-robin mapping: task i on processor i mod m."""

from __future__ import annotations

from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["RoundRobin"]


@register
class RoundRobin(MappingBalancer):
    """Round-robin: task i (in the graph's task order) on processor i mod m; the order is left to
    the evaluator's list rule (highest precedence level first).

    Source: 002 §7.1 and §10.5 (Sinclair 1993): the allocation PD degenerates to when every heuristic
    value ties ("task n goes to node n mod m"); with tasks numbered level by level it reproduces the
    worst-case makespan C^PD of the m-ary in-tree exactly. A baseline.

    Helps: nothing but balance of task counts; a reference no mapper should lose to.
    Backfires: ignores loads, speeds and communication; siblings land on different nodes, so almost
    every edge crosses the network.
    """

    name = "round-robin"
    source = "002 §7.1, §10.5 (Sinclair 1993)"
    taxonomy = Taxonomy("static (before the run)", "central", "none (task count only)",
                        "every task placed once", "task index modulo the processor count")

    def map(self, view) -> Plan:
        m = view.n_nodes
        return Plan(tuple(i % m for i in range(view.costs.graph.n_tasks)))
