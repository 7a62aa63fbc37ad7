"""Mapping balancers: where every task of a task graph runs (static plans, 002; Topcuoglu 2002)."""

from dlbkit.balancers.mapping.annealing import Annealing
from dlbkit.balancers.mapping.cpop import CPOP
from dlbkit.balancers.mapping.elastic_force import ElasticForce
from dlbkit.balancers.mapping.heft import HEFT
from dlbkit.balancers.mapping.hlf import HighestLevelFirst
from dlbkit.balancers.mapping.linear_clustering import LinearClustering
from dlbkit.balancers.mapping.max_k1_sum import MaxK1Sum
from dlbkit.balancers.mapping.peft import PEFT
from dlbkit.balancers.mapping.metis import Metis
from dlbkit.balancers.mapping.milp import MILP
from dlbkit.balancers.mapping.random_map import RandomMapping
from dlbkit.balancers.mapping.round_robin import RoundRobin
from dlbkit.balancers.mapping.tabu import TabuSearch

__all__ = ["Annealing", "RoundRobin", "RandomMapping", "HEFT", "CPOP", "HighestLevelFirst", "ElasticForce", "MaxK1Sum", "MILP", "TabuSearch", "PEFT", "Metis", "LinearClustering"]
