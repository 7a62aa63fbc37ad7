"""Migration balancers: which waiting tasks of a task tree move where (001; DESIGN.md "migration")."""

from dlbkit.families.tree.balancers.adaptive import PhaseAdaptive
from dlbkit.families.tree.balancers.diffusion import ReceiverDiffusion, SenderDiffusion
from dlbkit.families.tree.balancers.gdem import GDEM
from dlbkit.families.tree.balancers.greedy import Greedy, Refine
from dlbkit.families.tree.balancers.loadserver import Loadserver
from dlbkit.families.tree.balancers.randomplace import RandomPlacement
from dlbkit.families.tree.balancers.steal import WorkStealing

__all__ = ["WorkStealing", "RandomPlacement", "GDEM", "Loadserver", "PhaseAdaptive",
           "ReceiverDiffusion", "SenderDiffusion", "Greedy", "Refine"]
