"""dlbkit: dynamic load balancing for parallel programs on heterogeneous, non-dedicated clusters.

Balancers decide, engines do: the same balancer objects drive the simulator and the real runtime.
"""

from .api import Result, Schedule, schedule, simulate
from .balancers import (Balancer, ChunkingBalancer, MigrationBalancer, PlacementBalancer, RepartitionBalancer, Taxonomy,
                        Transfer)
from .balancers.registry import REGISTRY, make, register
from .errors import ConfigError, DlbkitError, DlbkitWarning, TaskError
from .replay import replay
from .cluster import Cluster
from .run_api import (GraphResult, RunResult, SpmdResult, TreeResult, graph, map, run_graph, run_map, run_spmd,
                      run_tree, spmd, tree)
from .runtime import Emulation, load_trace, save_trace
from .loop import Loop
from .advise import advise
from .model.stream import Demand, Stream
from .model.view import StreamView
from .model import (Constant, CostModel, Divisible, FlatTasks, LoopView, Markov, Network, Node, Platform, Pulse,
                    Recorded, Spmd, SpmdView, Step, TaskGraph, TaskTree, Trace, TreeView)

__version__ = "0.1.0"

__all__ = [
    # running
    "simulate", "Result", "schedule", "Schedule", "map", "run_map", "RunResult", "tree", "run_tree", "TreeResult", "spmd", "run_spmd", "SpmdResult", "graph", "run_graph", "GraphResult", "Emulation",
    "Loop", "advise", "replay", "save_trace", "load_trace", "Cluster",
    "run_experiment",
    # model
    "Platform", "Node", "Network", "Constant", "Step", "Pulse", "Markov", "Recorded", "Divisible", "CostModel",
    "TaskTree", "FlatTasks", "Spmd", "TaskGraph", "Stream", "Demand", "LoopView", "TreeView", "SpmdView", "StreamView",
    "Trace",
    # balancers
    "Balancer", "ChunkingBalancer", "MigrationBalancer", "RepartitionBalancer", "PlacementBalancer", "Transfer", "Taxonomy", "REGISTRY", "make", "register",
    # errors
    "DlbkitError", "ConfigError", "TaskError", "DlbkitWarning",
]


def __getattr__(name: str):
    # run_experiment lives in the experiments layer, which loads matplotlib: only when asked for
    if name == "run_experiment":
        from .experiments.runner import run_experiment

        return run_experiment
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
