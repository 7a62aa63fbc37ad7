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
import sys
import types
from typing import TYPE_CHECKING

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

#: the submodule that defines each public name
_SOURCE = {
    **dict.fromkeys(["Result", "Schedule", "schedule", "simulate"], "api"),
    **dict.fromkeys(["Balancer", "ChunkingBalancer", "MigrationBalancer", "PlacementBalancer", "RepartitionBalancer",
                     "Taxonomy", "Transfer"], "balancers"),
    **dict.fromkeys(["REGISTRY", "make", "register"], "balancers.registry"),
    **dict.fromkeys(["ConfigError", "DlbkitError", "DlbkitWarning", "TaskError"], "errors"),
    "replay": "replay",
    "Cluster": "cluster",
    **dict.fromkeys(["GraphResult", "RunResult", "SpmdResult", "TreeResult", "graph", "map", "run_graph", "run_map",
                     "run_spmd", "run_tree", "spmd", "tree"], "run_api"),
    **dict.fromkeys(["Emulation", "load_trace", "save_trace"], "runtime"),
    "Loop": "loop",
    "advise": "advise",
    # the experiments layer loads matplotlib
    "run_experiment": "experiments.runner",
    **dict.fromkeys(["Demand", "Stream"], "model.stream"),
    "StreamView": "model.view",
    **dict.fromkeys(["Constant", "CostModel", "Divisible", "FlatTasks", "LoopView", "Markov", "Network", "Node",
                     "Platform", "Pulse", "Recorded", "Spmd", "SpmdView", "Step", "TaskGraph", "TaskTree", "Trace",
                     "TreeView"], "model"),
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


class _Package(types.ModuleType):
    """dlbkit's module type: a submodule named like a public function (dlbkit.replay, dlbkit.advise) is
    not bound over the function when it is first imported, as the import system binds every submodule
    on its package (dlbkit.replay stays the function, as when __init__ imported it eagerly)."""

    def __setattr__(self, name: str, value) -> None:
        if name in _SOURCE and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

if TYPE_CHECKING:  # what type checkers and IDEs see: the names themselves
    from dlbkit.advise import advise
    from dlbkit.api import Result, Schedule, schedule, simulate
    from dlbkit.balancers import (Balancer, ChunkingBalancer, MigrationBalancer, PlacementBalancer, RepartitionBalancer,
                            Taxonomy, Transfer)
    from dlbkit.balancers.registry import REGISTRY, make, register
    from dlbkit.cluster import Cluster
    from dlbkit.errors import ConfigError, DlbkitError, DlbkitWarning, TaskError
    from dlbkit.experiments.runner import run_experiment
    from dlbkit.loop import Loop
    from dlbkit.model import (Constant, CostModel, Divisible, FlatTasks, LoopView, Markov, Network, Node, Platform, Pulse,
                        Recorded, Spmd, SpmdView, Step, TaskGraph, TaskTree, Trace, TreeView)
    from dlbkit.model.stream import Demand, Stream
    from dlbkit.model.view import StreamView
    from dlbkit.replay import replay
    from dlbkit.run_api import (GraphResult, RunResult, SpmdResult, TreeResult, graph, map, run_graph, run_map, run_spmd,
                          run_tree, spmd, tree)
    from dlbkit.runtime import Emulation, load_trace, save_trace
