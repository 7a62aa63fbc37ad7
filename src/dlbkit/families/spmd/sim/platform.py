"""An :class:`~dlbkit.families.spmd.model.workload.Spmd` workload on a Platform: the engine behind ``dlbkit.simulate``
for the pipelined-SPMD family (Osman 2003, 000); its metrics are :func:`dlbkit.families.spmd.model.metrics.metrics`.

:func:`simulate_spmd_platform` converts the platform to an HNOW
(:func:`~dlbkit.families.spmd.model.workload.hnow_from_platform`) and runs :func:`~dlbkit.families.spmd.sim.engine.simulate_spmd`
on it, so a run equals ``simulate_spmd(hnow_from_platform(p, w), b, loops=w.loops, ...)`` with the
same seed, transfer for transfer.
"""

from __future__ import annotations

from typing import Any

from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.errors import ConfigError
from dlbkit.families.spmd.model.workload import Spmd, hnow_from_platform
from dlbkit.families.spmd.sim.engine import simulate_spmd
from dlbkit.families.spmd.sim.options import SpmdOptions
from dlbkit.model.trace import Trace

__all__ = ["simulate_spmd_platform", "SpmdOptions"]


def simulate_spmd_platform(platform, workload: Spmd, balancer: RepartitionBalancer | None, *, seed=0,
                           options: SpmdOptions | None = None, **kwargs: Any) -> Trace:
    """Run *workload* on *platform* under a repartition *balancer* (None: no balancing); see the module.
    The options are a :class:`~dlbkit.families.spmd.sim.options.SpmdOptions` (*options*), or its fields as
    keywords (*window*, *record_decisions*, *progress*: :func:`~dlbkit.families.spmd.sim.engine.simulate_spmd`'s)."""
    o = SpmdOptions.of(options, kwargs, "simulate_spmd_platform")
    if balancer is not None and not isinstance(balancer, RepartitionBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer),
                          "a repartition balancer for an SPMD workload (dlah, homogeneous-diffusion, "
                          "processor-only, optimal-chain)")
    hnow = hnow_from_platform(platform, workload)
    return simulate_spmd(hnow, balancer, loops=workload.loops, window=o.window, seed=seed,
                         record_decisions=o.record_decisions, progress=o.progress)
