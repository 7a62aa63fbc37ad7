"""The master–worker engine's options (:func:`~dlbkit.families.divisible.sim.engine.simulate_divisible`),
declared once (:mod:`dlbkit.sim.options`)."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from dlbkit.errors import ConfigError, closest
from dlbkit.model import check
from dlbkit.sim.options import EngineOptions, Interval, Options, option

__all__ = ["DivisibleOptions", "MECHANISMS", "MAX_STEPS"]

MECHANISMS = ("self-scheduling", "rounds")
#: the most time steps one simulated run may have (a bound checked before any work)
MAX_STEPS = 100_000

_BYTES_OR_SECONDS = Interval(Real, 0.0, None)


@dataclass(frozen=True)
class DivisibleOptions(EngineOptions):
    """The options of one master–worker run (:func:`~dlbkit.families.divisible.sim.engine.simulate_divisible`
    says what each does). The Python-only ones: *costs* (the item costs, replacing the workload's draw;
    one row per time step), *link_latency*, *startup*, *fast_path*, *log_events*, *record_decisions*,
    *progress*, *state* and *requests_waiting*."""

    mechanism: str = option("self-scheduling", "self-scheduling (an idle worker asks the master) or rounds "
                            "(Sánchez et al., 004 §2.2)", Options(*MECHANISMS))
    master: int | str = option(0, "the master node, by name or index (default 0)")
    master_computes: bool = option(False, "true if the master also computes (default false: it only hands out "
                                   "work)", bool)
    master_overhead: float = option(0.0, "seconds the master spends per scheduling decision (default 0)",
                                    _BYTES_OR_SECONDS)
    master_cost_per_byte: float = option(0.0, "master work units per byte it sends, with blocking sends "
                                         "(default 0)", _BYTES_OR_SECONDS)
    request_bytes: float = option(0.0, "bytes of a work request (default 0)", _BYTES_OR_SECONDS)
    broadcast_bytes: float = option(0.0, "bytes of shared read-only data sent to every worker before any work "
                                    "(004's INIT; default 0)", _BYTES_OR_SECONDS)
    costs: Any = option(None)
    link_latency: Any = option(None)
    startup: float = option(0.0, None, _BYTES_OR_SECONDS)
    fast_path: bool | None = option(None)
    log_events: bool = option(False)
    record_decisions: bool = option(False)
    progress: Any = option(None)
    steps: int = option(1, "time steps: the loop run that many times in a row, the balancer carrying what it "
                        "learned (default 1; balancer \"auto\" chooses between steps)",
                        Interval(Integral, 1, MAX_STEPS))
    state: dict | None = option(None)
    requests_waiting: bool = option(False)

    def check_platform(self, platform, path: str) -> None:
        """A master that is a node of *platform* (by name or index), and a worker besides it."""
        m = self.master
        names = [n.name for n in platform.nodes]
        if isinstance(m, str):
            if m not in names:
                raise ConfigError(f"{path}.master", m, "a node name (" + ", ".join(names) + ") or index",
                                  suggest=closest(m, names))
        elif isinstance(m, Integral) and not isinstance(m, bool):
            check.integer(m, f"{path}.master", lo=0, hi=platform.n_nodes - 1)
        else:
            raise ConfigError(f"{path}.master", m, "a node name or a node index")
        if not self.master_computes and platform.n_nodes == 1:
            raise ConfigError(f"{path}.master_computes", self.master_computes,
                              "true when the platform has only the master node")
