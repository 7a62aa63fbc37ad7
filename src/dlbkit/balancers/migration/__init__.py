"""Migration balancers: which waiting tasks of a task tree move where (001; DESIGN.md "migration")."""

from .adaptive import PhaseAdaptive
from .diffusion import ReceiverDiffusion, SenderDiffusion
from .gdem import GDEM
from .greedy import Greedy, Refine
from .loadserver import Loadserver
from .randomplace import RandomPlacement
from .steal import WorkStealing

__all__ = ["WorkStealing", "RandomPlacement", "GDEM", "Loadserver", "PhaseAdaptive",
           "ReceiverDiffusion", "SenderDiffusion", "Greedy", "Refine"]
