"""The discrete-event simulator: engines that apply balancers' decisions to a modelled cluster."""

from .divisible import MECHANISMS, simulate_divisible
from .spmd import simulate_spmd
from .timebase import SIMULTANEITY_TOLERANCE

__all__ = ["simulate_divisible", "simulate_spmd", "MECHANISMS", "SIMULTANEITY_TOLERANCE"]
