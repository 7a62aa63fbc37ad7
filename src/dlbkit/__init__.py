"""dlbkit: dynamic load balancing for parallel programs on heterogeneous, non-dedicated clusters.

Balancers decide, engines do: the same balancer objects drive the simulator and the real runtime.
"""

# The public names are loaded on first use (PEP 562): ``import dlbkit`` alone imports no engine, no
# balancer and no networkx, so that ``dlbkit --help`` and a script that needs one engine start fast.
# Whatever is imported first, the registries are complete when read: each lives in its package
# (dlbkit.balancers, dlbkit.families, dlbkit.info), whose __init__ imports and so registers every
# built-in entry before the registry module can be used.

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

__all__ = [
    # running
    "simulate", "Result", "schedule", "Schedule", "map", "run_map", "RunResult", "tree", "run_tree", "TreeResult", "spmd", "run_spmd", "SpmdResult", "graph", "run_graph", "run_workflow", "GraphResult", "Emulation",
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

#: the submodule that defines each public name
_SOURCE = {
    "advise": "face.advise",
    "simulate": "families.simulate",
    "Result": "families.result",
    **dict.fromkeys(["Schedule", "schedule"], "families.graph.face.schedule"),
    **dict.fromkeys(["Balancer", "Taxonomy", "Transfer"], "balancers.base"),
    "ChunkingBalancer": "families.divisible.balancers.base",
    "MigrationBalancer": "families.tree.balancers.base",
    "PlacementBalancer": "families.stream.balancers.base",
    "RepartitionBalancer": "families.spmd.balancers.base",
    **dict.fromkeys(["REGISTRY", "make", "register"], "balancers.registry"),
    "Cluster": "families.stream.face.cluster",
    **dict.fromkeys(["ConfigError", "DlbkitError", "DlbkitWarning", "TaskError"], "errors"),
    "run_experiment": "face.experiments.runner",
    "Loop": "families.divisible.face.loop",
    **dict.fromkeys(["Constant", "Markov", "Network", "Node", "Platform", "Pulse", "Recorded", "Step", "Trace"], "model"),
    **dict.fromkeys(["CostModel", "Divisible"], "families.divisible.model.workload"),
    **dict.fromkeys(["FlatTasks", "TaskTree"], "families.tree.model.workload"),
    "LoopView": "families.divisible.model.view",
    "Spmd": "families.spmd.model.workload",
    "SpmdView": "families.spmd.model.view",
    "TaskGraph": "families.graph.model.workload",
    "TreeView": "families.tree.model.view",
    **dict.fromkeys(["Demand", "Stream"], "families.stream.model.workload"),
    "StreamView": "families.stream.model.view",
    "replay": "face.replay",
    **dict.fromkeys(["GraphResult", "graph", "run_graph", "run_workflow"], "families.graph.face.run"),
    "RunResult": "families.run",
    **dict.fromkeys(["SpmdResult", "run_spmd", "spmd"], "families.spmd.face.run"),
    **dict.fromkeys(["TreeResult", "run_tree", "tree"], "families.tree.face.run"),
    **dict.fromkeys(["map", "run_map"], "families.divisible.face.run"),
    **dict.fromkeys(["Emulation", "load_trace", "save_trace"], "runtime"),
}


def __getattr__(name: str):
    if name in _SOURCE:
        value = getattr(importlib.import_module(f".{_SOURCE[name]}", __name__), name)
        globals()[name] = value  # the next lookup is a plain attribute
        return value
    # a subpackage, as when `import dlbkit` loaded them all: `import dlbkit` then dlbkit.sim, dlbkit.model.topology
    from importlib.util import find_spec

    if not name.startswith("_") and find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)

if TYPE_CHECKING:  # what type checkers and IDEs see: the names themselves
    from dlbkit.face.advise import advise
    from dlbkit.families.simulate import Result, simulate
    from dlbkit.families.graph.face.schedule import Schedule, schedule
    from dlbkit.balancers.base import Balancer, Taxonomy, Transfer
    from dlbkit.families.divisible.balancers.base import ChunkingBalancer
    from dlbkit.families.tree.balancers.base import MigrationBalancer
    from dlbkit.families.stream.balancers.base import PlacementBalancer
    from dlbkit.families.spmd.balancers.base import RepartitionBalancer
    from dlbkit.balancers.registry import REGISTRY, make, register
    from dlbkit.families.stream.face.cluster import Cluster
    from dlbkit.errors import ConfigError, DlbkitError, DlbkitWarning, TaskError
    from dlbkit.face.experiments.runner import run_experiment
    from dlbkit.families.divisible.face.loop import Loop
    from dlbkit.model import Constant, Markov, Network, Node, Platform, Pulse, Recorded, Step, Trace
    from dlbkit.families.divisible.model.workload import CostModel, Divisible
    from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
    from dlbkit.families.divisible.model.view import LoopView
    from dlbkit.families.spmd.model.workload import Spmd
    from dlbkit.families.spmd.model.view import SpmdView
    from dlbkit.families.graph.model.workload import TaskGraph
    from dlbkit.families.tree.model.view import TreeView
    from dlbkit.families.stream.model.workload import Demand, Stream
    from dlbkit.families.stream.model.view import StreamView
    from dlbkit.face.replay import replay
    from dlbkit.families.graph.face.run import GraphResult, graph, run_graph, run_workflow
    from dlbkit.families.run import RunResult
    from dlbkit.families.spmd.face.run import SpmdResult, run_spmd, spmd
    from dlbkit.families.tree.face.run import TreeResult, run_tree, tree
    from dlbkit.families.divisible.face.run import map, run_map
    from dlbkit.runtime import Emulation, load_trace, save_trace
