"""An :class:`~dlbkit.model.spmd.Spmd` workload on a Platform: the engine behind ``dlbkit.simulate``
for the pipelined-SPMD family (Osman 2003, 000), and the run's row of :data:`~dlbkit.model.metrics.METRICS`.

:func:`simulate_spmd_platform` converts the platform to an HNOW
(:func:`~dlbkit.model.spmd.hnow_from_platform`) and runs :func:`~dlbkit.sim.spmd.simulate_spmd`
on it, so a run equals ``simulate_spmd(hnow_from_platform(p, w), b, loops=w.loops, ...)`` with the
same seed, transfer for transfer.
"""

from __future__ import annotations

import math

import numpy as np

from ..balancers.base import RepartitionBalancer
from ..errors import ConfigError
from ..model.spmd import Spmd, hnow_from_platform
from .spmd import DEFAULT_WINDOW, simulate_spmd
from .spmd_metrics import loops_to_steady, steps_to_steady
from ..model.spmd_trace import SpmdTrace

__all__ = ["simulate_spmd_platform", "spmd_metrics", "ENGINE_KEYS"]

#: engine options of the SPMD family (``[engine]`` keys of an experiment, ``**engine`` of simulate)
ENGINE_KEYS = {"window"}


def simulate_spmd_platform(platform, workload: Spmd, balancer: RepartitionBalancer | None, *, seed=0,
                           window: int = DEFAULT_WINDOW) -> SpmdTrace:
    """Run *workload* on *platform* under a repartition *balancer* (None: no balancing); see the module."""
    if balancer is not None and not isinstance(balancer, RepartitionBalancer):
        raise ConfigError("balancer", getattr(balancer, "name", balancer),
                          "a repartition balancer for an SPMD workload (dlah, homogeneous-diffusion, "
                          "processor-only, optimal-chain)")
    hnow = hnow_from_platform(platform, workload)
    return simulate_spmd(hnow, balancer, loops=workload.loops, window=window, seed=seed)


def spmd_metrics(trace: SpmdTrace) -> dict[str, float]:
    """The METRICS of one SPMD run; NaN for those that do not apply to the family.

    * ``makespan``: the pipelined wall clock (:attr:`SpmdTrace.makespan`, 000 §4.4);
    * ``imbalance``: max / mean of the workstations' loop times averaged over the last measurement
      window (000's balance criterion compares loop times, not finish times: in a pipeline every
      workstation finishes within one loop of the others);
    * ``idle_share``: 1 − Σ busy seconds (loop times) / (P × makespan): time spent waiting for a
      neighbour's boundary;
    * ``steps_to_balance``: Σ over workstations of the actions needed to reach steady state
      (:func:`~dlbkit.sim.spmd_metrics.steps_to_steady`, 000 §6.3.4.2);
    * ``dp_moved``: DP moved by balancing in the whole run (000's "load exchange");
    * ``loops_to_steady``: loops until the last transfer, if a quiet period follows (NaN if none does).

    lower_bound / efficiency, chunks, messages, bytes, rounds_to_balance and tasks_moved belong to
    other families: NaN.
    """
    nan = math.nan
    makespan = trace.makespan
    lt = trace.loop_time
    tail = lt[-trace.window:].mean(axis=0) if trace.loops >= trace.window else lt.mean(axis=0)
    mean_tail = float(np.mean(tail))
    return {
        "makespan": makespan,
        "lower_bound": nan, "efficiency": nan,
        "imbalance": float(np.max(tail)) / mean_tail if mean_tail > 0 else nan,
        "idle_share": 1.0 - float(lt.sum()) / (trace.n_nodes * makespan) if makespan > 0 else nan,
        "chunks": nan, "messages": nan, "bytes": nan, "rounds_to_balance": nan, "tasks_moved": nan,
        "steps_to_balance": float(steps_to_steady(trace).sum()),
        "dp_moved": float(trace.dp_exchanged),
        "loops_to_steady": loops_to_steady(trace),
    }
