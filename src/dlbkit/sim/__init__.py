"""The discrete-event simulator: engines that apply balancers' decisions to a modelled cluster."""

from .divisible import MECHANISMS, simulate_divisible
from .kernel import NORMAL, URGENT, Kernel
from .spmd import simulate_spmd
from .superstep import SuperstepResult, simulate_superstep
from .timebase import SIMULTANEITY_TOLERANCE
from .tree_async import simulate_tree_async

__all__ = ["simulate_divisible", "simulate_spmd", "simulate_tree_async", "simulate_superstep", "SuperstepResult",
           "MECHANISMS", "SIMULTANEITY_TOLERANCE", "Kernel", "URGENT", "NORMAL"]
