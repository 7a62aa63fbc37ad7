"""The graph family's random streams (:mod:`dlbkit.model.seeding`): the layout its engines and its real run
derive from an experiment's seed.

=================  ===========================================  ======================================
layout             streams (spawn order)                        used by
=================  ===========================================  ======================================
``GRAPH``          balancer, availability                       :func:`~dlbkit.families.graph.sim.static.simulate_graph`
                                                                and the dynamic engine; the runtime's
                                                                ``graph``
=================  ===========================================  ======================================
"""

from __future__ import annotations

from dlbkit.model.seeding import Layout

__all__ = ["GRAPH"]

GRAPH = Layout("graph", ("balancer", "availability"))
