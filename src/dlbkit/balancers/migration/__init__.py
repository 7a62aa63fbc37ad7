"""Migration balancers: which waiting tasks of a task tree move where (001; DESIGN.md "migration")."""

from .randomplace import RandomPlacement
from .steal import WorkStealing

__all__ = ["WorkStealing", "RandomPlacement"]
