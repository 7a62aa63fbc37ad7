"""The asynchronous tree engine's options (:func:`~dlbkit.families.tree.sim.engine.simulate_tree_async`),
declared once (:mod:`dlbkit.sim.options`). Its errors name the bare keyword (``control_bytes``), as the
engine's other argument checks (:mod:`._options`) do; an experiment file's, ``engine.control_bytes``."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from dlbkit.errors import ConfigError
from dlbkit.families.tree.model.backoff import AUTO, check_backoff
from dlbkit.model import check
from dlbkit.sim.options import EngineOptions, Interval, option

__all__ = ["TreeOptions", "CONTROL_BYTES", "TASK_BYTES"]

#: bytes of a control message (request, reply header, order): a type tag, two node ids and counts
CONTROL_BYTES = 32
#: bytes per task carried: a task descriptor (TaskTree packs a task in one 64-bit int) plus framing
TASK_BYTES = 16


def _ticks(value: Any, field: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, Integral) or value < 1):
        raise ConfigError(field, value, "None or an integer >= 1")


@dataclass(frozen=True)
class TreeOptions(EngineOptions):
    """The options of one asynchronous tree run (:func:`~dlbkit.families.tree.sim.engine.simulate_tree_async`
    says what each does). The Python-only ones: *rng*, *record*, *ticks_per_second*, *fast_path*,
    *log_events*, *info* (an experiment file's ``[info]`` table), *record_decisions* and *progress*;
    *start_node* may be one node per root from Python, one node index from an experiment file."""

    PATH = ""

    rng: Any = option(None)
    start_node: Any = option(0, "the node holding the root (default 0)")
    record: bool = option(True)
    ticks_per_second: int | None = option(None, None, _ticks)
    control_bytes: float = option(CONTROL_BYTES, "bytes of a control message: request, reply header, order "
                                                 "(default 32)", Interval(Real, 0.0, None))
    task_bytes: float = option(TASK_BYTES, "bytes per task moved (default 16)", Interval(Real, 0.0, None))
    fast_path: bool | None = option(None)
    log_events: bool = option(False)
    info: Any = option(None)
    record_decisions: bool = option(False)
    backoff: Any = option(AUTO, "an idle node's wait after its k-th empty reply in a row, min(first·2^(k-1), "
                                "longest) seconds: [first, longest], \"off\" (ask again at once, as M2) or "
                                "\"auto\" (default: first = one round trip, longest = a sixteenth of the mean "
                                "task's time)", check_backoff)
    progress: Any = option(None)

    def check_platform(self, platform, path: str) -> None:
        """One core per node, and the root on one of the platform's nodes."""
        # the engine refuses a node of several cores when it starts; an experiment is refused on load instead
        # (each of its runs would otherwise be recorded as failed)
        for n in platform.nodes:
            if n.cores != 1:
                raise ConfigError("platform.nodes.cores", f"{n.cores} (node {n.name!r})",
                                  "1 for a task tree on the asynchronous engine (one worker per node: give each "
                                  "core a node, e.g. count = k)")
        check.integer(self.start_node, f"{path}.start_node", lo=0, hi=platform.n_nodes - 1)
