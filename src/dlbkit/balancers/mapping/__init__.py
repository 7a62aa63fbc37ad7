"""Mapping balancers: where every task of a task graph runs (static plans, 002; Topcuoglu 2002)."""

from .annealing import Annealing
from .cpop import CPOP
from .elastic_force import ElasticForce
from .heft import HEFT
from .hlf import HighestLevelFirst
from .linear_clustering import LinearClustering
from .max_k1_sum import MaxK1Sum
from .peft import PEFT
from .metis import Metis
from .milp import MILP
from .random_map import RandomMapping
from .round_robin import RoundRobin
from .tabu import TabuSearch

__all__ = ["Annealing", "RoundRobin", "RandomMapping", "HEFT", "CPOP", "HighestLevelFirst", "ElasticForce", "MaxK1Sum", "MILP", "TabuSearch", "PEFT", "Metis", "LinearClustering"]
