"""The tree family's random streams (:mod:`dlbkit.model.seeding`): the layouts its engines and its real run
derive from an experiment's seed.

=================  ===========================================  ======================================
layout             streams (spawn order)                        used by
=================  ===========================================  ======================================
``TREE``           availability, balancer, info                 :func:`~dlbkit.families.tree.sim.engine.simulate_tree_async`;
                                                                the runtime's ``tree`` (below)
``SUPERSTEP``      balancer = the root SeedSequence itself      :func:`~dlbkit.families.tree.sim.superstep.simulate_superstep`
=================  ===========================================  ======================================

``TREE`` gained ``info`` (the information layer's draws, :mod:`dlbkit.info`) at its end, so no result changed;
the superstep engine's single stream is the root itself because it seeded ``default_rng(seed)``.

The real run's balancers: the coordinator's (central rules) is ``streams(seed, TREE).seq("balancer")`` itself;
worker *w*'s is ``streams(seed, TREE).seq("balancer").spawn(n)[w]`` (n workers); the coordinator's information
model draws from ``info``.
"""

from __future__ import annotations

from dlbkit.model.seeding import Layout

__all__ = ["TREE", "SUPERSTEP"]

TREE = Layout("tree", ("availability", "balancer", "info"))
SUPERSTEP = Layout("superstep", ("balancer",), root=True)
