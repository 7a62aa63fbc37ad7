"""The task-graph engines' options (:func:`~dlbkit.families.graph.sim.static.simulate_graph`,
:func:`~dlbkit.families.graph.sim.dynamic.simulate_graph_dynamic`), declared once (:mod:`dlbkit.sim.options`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.graph.model.costs import COST_MODELS
from dlbkit.model.platform import Platform
from dlbkit.sim.options import EngineOptions, Options, option

__all__ = ["GraphOptions", "GraphDynamicOptions"]

_COST_MODEL = ("how transfers cost: 'standard' (latency + data/bandwidth, processors free while data flies; "
               "default) or 'thesis' (002: both ends busy, data × hops)")


def _contention(value: Any, field: str) -> None:
    if not isinstance(value, bool) and value != "link":
        raise ConfigError(field, value, "true (one-port), \"link\" (link contention) or false")


@dataclass(frozen=True)
class GraphOptions(EngineOptions):
    """The options of one static-plan run (:func:`~dlbkit.families.graph.sim.static.simulate_graph`). The
    Python-only ones: *record_decisions* and *progress*."""

    cost_model: str = option("standard", _COST_MODEL, Options(*COST_MODELS))
    contention: bool | str = option(False, "true: the standard model with one message at a time per machine's "
                                           "send and receive port (the one-port model); \"link\": one message at a "
                                           "time per directed link of the platform's routed topology (Sinnen & "
                                           "Sousa 2005); default false", _contention)
    record_decisions: bool = option(False)
    progress: Any = option(None)

    def check_platform(self, platform, path: str) -> None:
        """Contention is an option of the standard cost model; link contention needs a platform's links."""
        c = self.contention
        if c and self.cost_model != "standard":
            raise ConfigError(f"{path}.contention", c, "false with cost_model 'thesis' (an option of 'standard')")
        if c == "link" and not isinstance(platform, Platform):
            raise ConfigError(f"{path}.contention", c, "a platform (links are its topology's), not a node count")


@dataclass(frozen=True)
class GraphDynamicOptions(EngineOptions):
    """The options of one dynamic run (:func:`~dlbkit.families.graph.sim.dynamic.simulate_graph_dynamic`). The
    Python-only ones: *record_decisions* and *progress*."""

    cost_model: str = option("standard", _COST_MODEL, Options(*COST_MODELS))
    record_decisions: bool = option(False)
    progress: Any = option(None)
