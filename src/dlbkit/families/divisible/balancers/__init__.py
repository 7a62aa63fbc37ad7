"""Chunking balancers: how many items the next request or round gets."""

from dlbkit.families.divisible.balancers.static import Proportional, Static
from dlbkit.families.divisible.balancers.selfsched import SelfScheduling
from dlbkit.families.divisible.balancers.sanchez import Sanchez
from dlbkit.families.divisible.balancers.guided import Guided
from dlbkit.families.divisible.balancers.trapezoid import Trapezoid, TrapezoidFactoring
from dlbkit.families.divisible.balancers.factoring import Factoring, Factoring2, WeightedFactoring
from dlbkit.families.divisible.balancers.awf import (AdaptiveWeightedFactoring, AdaptiveWeightedFactoringB, AdaptiveWeightedFactoringC, AdaptiveWeightedFactoringD,
                  AdaptiveWeightedFactoringE)
from dlbkit.families.divisible.balancers.af import AdaptiveFactoring
from dlbkit.families.divisible.balancers.fixed import FixedSize, ModifiedFixedSize
from dlbkit.families.divisible.balancers.increasing import FixedIncrease, VariableIncrease
from dlbkit.families.divisible.balancers.pls import PartialStatic
from dlbkit.families.divisible.balancers.rnd import RandomChunk
from dlbkit.families.divisible.balancers.taper import Taper
from dlbkit.families.divisible.balancers.auto import Auto

__all__ = ["Static", "Proportional", "SelfScheduling", "Guided", "Trapezoid", "TrapezoidFactoring",
           "Factoring", "Factoring2", "WeightedFactoring", "AdaptiveWeightedFactoringB",
           "AdaptiveWeightedFactoringC", "AdaptiveWeightedFactoringD", "AdaptiveWeightedFactoringE",
           "AdaptiveFactoring", "FixedSize", "ModifiedFixedSize", "FixedIncrease", "VariableIncrease",
           "PartialStatic", "RandomChunk", "Taper", "Sanchez", "AdaptiveWeightedFactoring", "Auto"]
