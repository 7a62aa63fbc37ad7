"""The bags family's random streams (a :class:`dlbkit.model.seeding.Layout` of its own, not one of the core's)."""

from dlbkit.model.seeding import Layout

__all__ = ["BAGS"]

#: spawn order: the tasks' actual work, the nodes' availability, the balancer's draws (the real run
#: takes ``balancer`` too, so a random rule draws alike in both)
BAGS = Layout("bags", ("jitter", "availability", "balancer"))
