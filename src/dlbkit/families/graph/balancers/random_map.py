"""Random mapping: every task on a processor drawn uniformly."""

from __future__ import annotations

from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["RandomMapping"]


@register
class RandomMapping(MappingBalancer):
    """Random: each task on a processor drawn uniformly from the engine's Generator (one draw per
    task, in task order); the order is the evaluator's list rule.

    Source: the random-allocation baseline of static mapping studies (Kwok & Ahmad 1999, "Static
    scheduling algorithms for allocating directed task graphs to multiprocessors", ACM Computing
    Surveys 31(4)); 002 §15 asks for round-robin and random baselines. Registered as ``random-map``:
    ``random`` is the migration kind's random placement (001), and balancer names are one namespace.

    Helps: a floor for comparisons; unbiased over many seeds.
    Backfires: ignores everything; expect most edges to cross the network.
    """

    name = "random-map"
    source = "Kwok & Ahmad 1999 (baseline); 002 §15"
    taxonomy = Taxonomy("static (before the run)", "central", "none", "every task placed once",
                        "processor uniform at random")

    def map(self, view) -> Plan:
        n = view.costs.graph.n_tasks
        return Plan(tuple(int(x) for x in self.rng_.integers(view.n_nodes, size=n)))
