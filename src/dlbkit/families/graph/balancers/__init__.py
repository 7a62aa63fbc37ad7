"""The task-graph family's balancers: mappers (kind ``mapping``: where every task runs, a static plan, 002;
Topcuoglu 2002) and online mappers (kind ``graph-online``: tasks placed during the run, 002 §5, with
:class:`~dlbkit.families.graph.balancers.base.OnlineMapping`'s ``place`` hook; run by the ``dynamic`` engine)."""

from dlbkit.families.graph.balancers.annealing import Annealing
from dlbkit.families.graph.balancers.cpop import CPOP
from dlbkit.families.graph.balancers.elastic_force import ElasticForce
from dlbkit.families.graph.balancers.heft import HEFT
from dlbkit.families.graph.balancers.hlf import HighestLevelFirst
from dlbkit.families.graph.balancers.linear_clustering import LinearClustering
from dlbkit.families.graph.balancers.max_k1_sum import MaxK1Sum
from dlbkit.families.graph.balancers.pd import PseudoDynamic
from dlbkit.families.graph.balancers.peft import PEFT
from dlbkit.families.graph.balancers.metis import Metis
from dlbkit.families.graph.balancers.milp import MILP
from dlbkit.families.graph.balancers.random_map import RandomMapping
from dlbkit.families.graph.balancers.replanning_heft import ReplanningHEFT
from dlbkit.families.graph.balancers.round_robin import RoundRobin
from dlbkit.families.graph.balancers.tabu import TabuSearch

__all__ = ["Annealing", "RoundRobin", "RandomMapping", "HEFT", "CPOP", "HighestLevelFirst", "ElasticForce", "MaxK1Sum", "MILP", "TabuSearch", "PEFT", "Metis", "LinearClustering",
           "PseudoDynamic", "ReplanningHEFT"]
