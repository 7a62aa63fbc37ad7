"""dlbkit: dynamic load balancing for parallel programs on heterogeneous, non-dedicated clusters.

Balancers decide, engines do: the same balancer objects drive the simulator and the real runtime.
"""

from .api import Result, simulate
from .balancers import Balancer, ChunkingBalancer, Taxonomy
from .balancers.registry import REGISTRY, make
from .errors import ConfigError, DlbkitError, TaskError
from .runtime import Emulation, RunResult, map, run_map
from .model import (Constant, CostModel, Divisible, LoopView, Markov, Network, Node, Platform, Pulse, Recorded,
                    Step, Trace)

__version__ = "0.1.0"

__all__ = [
    # running
    "simulate", "Result", "map", "run_map", "RunResult", "Emulation",
    # model
    "Platform", "Node", "Network", "Constant", "Step", "Pulse", "Markov", "Recorded", "Divisible", "CostModel",
    "LoopView", "Trace",
    # balancers
    "Balancer", "ChunkingBalancer", "Taxonomy", "REGISTRY", "make",
    # errors
    "DlbkitError", "ConfigError", "TaskError",
]
