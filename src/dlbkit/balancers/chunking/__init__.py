"""Chunking balancers: how many items the next request or round gets."""

from dlbkit.balancers.chunking.static import Proportional, Static
from dlbkit.balancers.chunking.selfsched import SelfScheduling
from dlbkit.balancers.chunking.sanchez import Sanchez
from dlbkit.balancers.chunking.guided import Guided
from dlbkit.balancers.chunking.trapezoid import Trapezoid, TrapezoidFactoring
from dlbkit.balancers.chunking.factoring import Factoring, Factoring2, WeightedFactoring
from dlbkit.balancers.chunking.awf import (AdaptiveWeightedFactoring, AdaptiveWeightedFactoringB, AdaptiveWeightedFactoringC, AdaptiveWeightedFactoringD,
                  AdaptiveWeightedFactoringE)
from dlbkit.balancers.chunking.af import AdaptiveFactoring
from dlbkit.balancers.chunking.fixed import FixedSize, ModifiedFixedSize
from dlbkit.balancers.chunking.increasing import FixedIncrease, VariableIncrease
from dlbkit.balancers.chunking.pls import PartialStatic
from dlbkit.balancers.chunking.rnd import RandomChunk
from dlbkit.balancers.chunking.taper import Taper
from dlbkit.balancers.chunking.auto import Auto

__all__ = ["Static", "Proportional", "SelfScheduling", "Guided", "Trapezoid", "TrapezoidFactoring",
           "Factoring", "Factoring2", "WeightedFactoring", "AdaptiveWeightedFactoringB",
           "AdaptiveWeightedFactoringC", "AdaptiveWeightedFactoringD", "AdaptiveWeightedFactoringE",
           "AdaptiveFactoring", "FixedSize", "ModifiedFixedSize", "FixedIncrease", "VariableIncrease",
           "PartialStatic", "RandomChunk", "Taper", "Sanchez", "AdaptiveWeightedFactoring", "Auto"]
