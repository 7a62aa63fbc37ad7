"""The divisible family's random streams (:mod:`dlbkit.model.seeding`): the layout its simulator and its real
runs derive from an experiment's seed.

=================  ===========================================  ======================================
layout             streams (spawn order)                        used by
=================  ===========================================  ======================================
``DIVISIBLE``      costs, availability, balancer                :func:`~dlbkit.families.divisible.sim.engine.simulate_divisible`;
                                                                the runtime's ``map`` and ``Loop``
=================  ===========================================  ======================================
"""

from __future__ import annotations

from dlbkit.model.seeding import Layout

__all__ = ["DIVISIBLE"]

DIVISIBLE = Layout("divisible", ("costs", "availability", "balancer"))
