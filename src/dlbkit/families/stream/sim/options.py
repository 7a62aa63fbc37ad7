"""The job-stream engine's options (:func:`~dlbkit.families.stream.sim.engine.simulate_stream`), declared
once (:mod:`dlbkit.sim.options`)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.stream.sim._service import DISCIPLINES
from dlbkit.sim.options import EngineOptions, Interval, Options, option

__all__ = ["StreamOptions", "SERVICES", "CONVERGE_MAXDIFF", "INFO_REFUSED", "check_info"]

#: service disciplines of a node: name -> what it does
SERVICES = {name: cls.summary for name, cls in DISCIPLINES.items()}
#: default convergence threshold: largest queue difference (tasks) counted as converged (003 §3.4.3.4 sets
#: "a certain threshold" without its value; 2 is ours: at most one task each way off the mean on a pair)
CONVERGE_MAXDIFF = 2.0
#: information models that do not fit this family, and why
INFO_REFUSED = {"periodic": "only its centre learns the loads, and in a job stream every node decides "
                            "(use 'gossip' or 'neighbour')"}


@dataclass(frozen=True)
class StreamOptions(EngineOptions):
    """The options of one job-stream run (:func:`~dlbkit.families.stream.sim.engine.simulate_stream` says
    what each does). The Python-only ones: *record*, *record_decisions* and *inline*."""

    info: Any = option(None, "the information model: what each origin knows of the others' queues (default exact; "
                             "'gossip', 'neighbour'; 'periodic' is refused: every node decides)")
    task_bytes: float = option(0.0, "bytes a task carries to another node (default 0: the transfer takes the "
                                    "latency)", Interval(Real, 0.0, None))
    warmup: float = option(0.1, "share of the jobs whose arrivals open the queue statistics and response times "
                                "(default 0.1)", Interval(Real, 0.0, 1.0, closed="left"))
    samples: int = option(200, "snapshots of every node's queue, evenly spaced up to the last arrival (default "
                               "200)", Interval(Integral, 0, 100_000))
    batch_update: bool = option(True, "a decider counts its own placements within a batch (default true; false "
                                      "shows the herd effect of 003 Table 15)", bool)
    record: bool = option(True, None, bool)
    record_decisions: bool = option(False, None, bool)
    inline: bool = option(True)
    service: str = option("fifo", "a node's service discipline: 'fifo' (default: one task per slot, first in, "
                                  "first out) or 'ps' (processor sharing: k tasks on c slots each at min(1, c/k) "
                                  "of a slot)", Options(*SERVICES))
    converge_maxdiff: float = option(CONVERGE_MAXDIFF, "queue difference (tasks) at or below which a run started "
                                                       "with initial loads has converged (default 2; the "
                                                       "convergence_time metric)", Interval(Real, 0.0, None))

    def check_platform(self, platform, path: str) -> None:
        """An information model that fits *platform* (checked as the engine will)."""
        if self.info is not None:
            check_info(self.info, platform, f"{path}.info")


def check_info(spec, platform, field: str) -> None:
    """An information model for a stream on *platform*, checked as the engine will (a model the engine
    refuses, a size or node index beyond the platform), so an experiment is refused on load rather
    than every run failing."""
    from dlbkit.info import resolve_for
    model = resolve_for(spec, field, platform.n_nodes)
    if model.name in INFO_REFUSED:
        raise ConfigError(f"{field}.model", model.name, "a model that tells every node the loads: "
                          + INFO_REFUSED[model.name])
