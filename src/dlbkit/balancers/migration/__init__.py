"""Migration balancers: which waiting tasks of a task tree move where (001; DESIGN.md "migration")."""

from dlbkit.balancers.migration.adaptive import PhaseAdaptive
from dlbkit.balancers.migration.diffusion import ReceiverDiffusion, SenderDiffusion
from dlbkit.balancers.migration.gdem import GDEM
from dlbkit.balancers.migration.greedy import Greedy, Refine
from dlbkit.balancers.migration.loadserver import Loadserver
from dlbkit.balancers.migration.randomplace import RandomPlacement
from dlbkit.balancers.migration.steal import WorkStealing

__all__ = ["WorkStealing", "RandomPlacement", "GDEM", "Loadserver", "PhaseAdaptive",
           "ReceiverDiffusion", "SenderDiffusion", "Greedy", "Refine"]
