"""Plain data: platform, workloads, views, traces and metrics (the shared vocabulary)."""

from dlbkit.model.availability import Constant, Markov, Piecewise, Pulse, Recorded, Step
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.model.graph import TaskGraph
from dlbkit.model.spmd import Spmd
from dlbkit.model.trace import Trace
from dlbkit.model.tree import FlatTasks, TaskTree
from dlbkit.model.view import GraphView, LoopView, SpmdView, TreeView
from dlbkit.model.workload import CostModel, Divisible

__all__ = ["Constant", "Markov", "Piecewise", "Pulse", "Recorded", "Step", "Network", "Node", "Platform",
           "Trace", "LoopView", "TreeView", "SpmdView", "GraphView", "CostModel", "Divisible", "TaskTree", "FlatTasks",
           "Spmd", "TaskGraph"]
