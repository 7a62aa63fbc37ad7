"""The simulator's shared parts: the event kernel, the time base, cost helpers and progress; each family's
engines live in its package (``dlbkit.families.<family>.sim``)."""

from dlbkit.sim.kernel import NORMAL, URGENT, Kernel
from dlbkit.sim.timebase import SIMULTANEITY_TOLERANCE

__all__ = ["SIMULTANEITY_TOLERANCE", "Kernel", "URGENT", "NORMAL"]
