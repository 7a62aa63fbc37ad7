"""The real runtime: the same balancers driving the user's own Python functions."""

from .api import BACKENDS, DEFAULT_BALANCER, RunResult, map, run_map
from .emulation import Emulation

__all__ = ["map", "run_map", "RunResult", "Emulation", "BACKENDS", "DEFAULT_BALANCER"]
