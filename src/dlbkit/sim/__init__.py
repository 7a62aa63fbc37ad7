"""The discrete-event simulator: engines that apply balancers' decisions to a modelled cluster."""

from dlbkit.sim.divisible import MECHANISMS, simulate_divisible
from dlbkit.sim.kernel import NORMAL, URGENT, Kernel
from dlbkit.sim.spmd import simulate_spmd
from dlbkit.sim.superstep import SuperstepResult, simulate_superstep
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE
from dlbkit.sim.tree_async import simulate_tree_async

__all__ = ["simulate_divisible", "simulate_spmd", "simulate_tree_async", "simulate_superstep", "SuperstepResult",
           "MECHANISMS", "SIMULTANEITY_TOLERANCE", "Kernel", "URGENT", "NORMAL"]
