"""Plain data: platform, workloads, views, traces and metrics (the shared vocabulary)."""

from .availability import Constant, Markov, Piecewise, Pulse, Recorded, Step
from .platform import Network, Node, Platform
from .graph import TaskGraph
from .spmd import Spmd
from .trace import Trace
from .tree import FlatTasks, TaskTree
from .view import GraphView, LoopView, SpmdView, TreeView
from .workload import CostModel, Divisible

__all__ = ["Constant", "Markov", "Piecewise", "Pulse", "Recorded", "Step", "Network", "Node", "Platform",
           "Trace", "LoopView", "TreeView", "SpmdView", "GraphView", "CostModel", "Divisible", "TaskTree", "FlatTasks",
           "Spmd", "TaskGraph"]
