"""The spmd family's random streams (:mod:`dlbkit.model.seeding`): the layouts its simulator, its sweeps and its
real run derive from an experiment's seed.

=================  ===========================================  ======================================
layout             streams (spawn order)                        used by
=================  ===========================================  ======================================
``SPMD``           noise, availability, balancer                :func:`~dlbkit.families.spmd.sim.engine.simulate_spmd`;
                                                                the runtime's ``spmd``
``SPMD_SWEEP``     scenario, run                                :func:`~dlbkit.families.spmd.sim.experiment.run_one`
                                                                (``run`` is the seed of ``SPMD``)
=================  ===========================================  ======================================
"""

from __future__ import annotations

from dlbkit.model.seeding import Layout

__all__ = ["SPMD", "SPMD_SWEEP"]

SPMD = Layout("spmd", ("noise", "availability", "balancer"))
SPMD_SWEEP = Layout("spmd-sweep", ("scenario", "run"))
