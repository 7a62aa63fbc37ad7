"""Views: what a deciding node knows when a balancer is asked for a decision.

Engines own a view and update it in place as measurements arrive (the simulator from its model, the
runtime from real timers); balancers only read it. Per-node measurements are plain lists indexed by
node, so the simulator's hot loop updates them cheaply.

One base, :class:`View`, names what every family's view has (see docs/design.md, "Glossary"):
``n_nodes`` (the nodes that compute: a view's index runs over them; the divisible family's master,
which only hands out work, is not one of them), ``time`` (now, seconds; the SPMD family's loop clock
counts loops), ``node`` (the deciding node, -1 for a central decision), ``speeds`` (nominal speeds
from the platform description), ``updated_at`` (when each node's entries were measured) with
:meth:`View.age`, ``neighbours`` (node i's neighbours: a list per node) and
:meth:`View.measured_speed`. Each family's view adds its own measurements.
"""

from __future__ import annotations

import math
from typing import Sequence

from dlbkit.model.topology import complete_neighbours

__all__ = ["View"]


class View:
    """What every view has; the families' views are dataclasses that declare these fields.

    ``n_nodes``, ``time``, ``node``, ``speeds`` (nominal, work units per second; empty when the engine
    does not know them, as in a real SPMD run), ``updated_at`` and ``neighbours`` (a sequence of node ids per
    node: whom node i may exchange work with; all the others, as
    :class:`~dlbkit.model.topology.Others`, unless the family has a topology; left empty by the loop and
    stream views, where no rule reads it).
    """

    n_nodes: int
    time: float
    node: int
    speeds: list[float]
    updated_at: list[float]
    neighbours: list[Sequence[int]]

    def age(self, i: int) -> float:
        """Seconds since node i's entries were measured (as known by the deciding node)."""
        return self.time - self.updated_at[i]

    def measured_speed(self, i: int) -> float:
        """Work node i did per second of its own time recently, background load included (the
        family's unit: items, tasks, data points); NaN before it was measured."""
        return math.nan

    def _fill(self, n: int, **defaults) -> None:
        """Each named list left empty becomes *n* copies of its default (each family view's
        ``__post_init__`` fills its own per-node or per-task entries with it)."""
        for name, value in defaults.items():
            if not getattr(self, name):
                setattr(self, name, [value] * n)

    def _fill_common(self) -> None:
        """Defaults of the common fields (called by each family view's ``__post_init__``)."""
        p = self.n_nodes
        self._fill(p, updated_at=0.0)
        if not self.neighbours:
            self.neighbours = complete_neighbours(p)




        # ``neighbours`` stays empty: every node may place on every other (not built: a stream view
        # may have 10^5 nodes, and P² neighbour entries would dwarf the rest)
