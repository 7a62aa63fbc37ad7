"""The pipelined-SPMD engine's options (:func:`~dlbkit.families.spmd.sim.platform.simulate_spmd_platform`),
declared once (:mod:`dlbkit.sim.options`). Its errors name the bare keyword (``window``), as
:func:`~dlbkit.families.spmd.sim.engine.simulate_spmd`'s do; an experiment file's, ``engine.window``."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import Any

from dlbkit.families.spmd.sim.engine import DEFAULT_WINDOW
from dlbkit.sim.options import EngineOptions, Interval, option

__all__ = ["SpmdOptions"]


@dataclass(frozen=True)
class SpmdOptions(EngineOptions):
    """The options of one pipelined-SPMD run on a platform. The Python-only ones: *record_decisions* and
    *progress*."""

    PATH = ""

    window: int = option(DEFAULT_WINDOW, f"loops per measurement window, after which a node may act (000 §7.3; "
                                         f"default {DEFAULT_WINDOW})", Interval(Integral, 1, None))
    record_decisions: bool = option(False)
    progress: Any = option(None)
