"""The real runtime: the same balancers driving the user's own Python functions."""

from .api import BACKENDS, DEFAULT_BALANCER, RunResult, map, run_map
from .emulation import Emulation
from .record import load_trace, save_trace
from .replay import replay
from .spmd_api import DEFAULT_SPMD_BALANCER, SpmdResult, run_spmd, spmd
from .tree_api import DEFAULT_TREE_BALANCER, TreeResult, run_tree, tree

__all__ = ["map", "run_map", "RunResult", "Emulation", "BACKENDS", "DEFAULT_BALANCER",
           "tree", "run_tree", "TreeResult", "DEFAULT_TREE_BALANCER",
           "spmd", "run_spmd", "SpmdResult", "DEFAULT_SPMD_BALANCER",
           "replay", "load_trace", "save_trace"]
