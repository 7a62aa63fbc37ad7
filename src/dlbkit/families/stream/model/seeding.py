"""The stream family's random streams (:mod:`dlbkit.model.seeding`): the layout its simulator and
``dlbkit.Cluster`` derive from an experiment's seed.

=================  ===========================================  ======================================
layout             streams (spawn order)                        used by
=================  ===========================================  ======================================
``STREAM``         arrivals, availability, balancer, info       :func:`~dlbkit.families.stream.sim.engine.simulate_stream`;
                                                                ``dlbkit.Cluster`` (below)
=================  ===========================================  ======================================

``dlbkit.Cluster``'s node *w* draws from ``streams(seed, STREAM).seq("balancer").spawn(n)[w]`` (n nodes); every
node's copy of the information model from ``info`` itself (the copies draw alike, so their rounds stay one round
of the model).
"""

from __future__ import annotations

from dlbkit.model.seeding import Layout

__all__ = ["STREAM"]

STREAM = Layout("stream", ("arrivals", "availability", "balancer", "info"))
