"""Chunking balancers: how many items the next request or round gets."""

from .static import Proportional, Static
from .selfsched import SelfScheduling
from .sanchez import Sanchez
from .guided import Guided
from .trapezoid import Trapezoid, TrapezoidFactoring
from .factoring import Factoring, Factoring2, WeightedFactoring
from .awf import (AdaptiveWeightedFactoring, AdaptiveWeightedFactoringB, AdaptiveWeightedFactoringC, AdaptiveWeightedFactoringD,
                  AdaptiveWeightedFactoringE)
from .af import AdaptiveFactoring
from .fixed import FixedSize, ModifiedFixedSize
from .increasing import FixedIncrease, VariableIncrease
from .pls import PartialStatic
from .rnd import RandomChunk
from .taper import Taper
from .auto import Auto

__all__ = ["Static", "Proportional", "SelfScheduling", "Guided", "Trapezoid", "TrapezoidFactoring",
           "Factoring", "Factoring2", "WeightedFactoring", "AdaptiveWeightedFactoringB",
           "AdaptiveWeightedFactoringC", "AdaptiveWeightedFactoringD", "AdaptiveWeightedFactoringE",
           "AdaptiveFactoring", "FixedSize", "ModifiedFixedSize", "FixedIncrease", "VariableIncrease",
           "PartialStatic", "RandomChunk", "Taper", "Sanchez", "AdaptiveWeightedFactoring", "Auto"]
