"""The one way the benchmark scripts time a call: the best of several runs.

Scripts import it as ``from timing import best_of``: Python puts a script's own folder first on
``sys.path``, so this works from any working directory and under ``mpiexec``.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable


def best_of(fn: Callable[[], Any], repeat: int, collect: bool = False) -> tuple[float, Any]:
    """The least wall time of *repeat* calls of *fn* (the others are the machine's noise), and the
    last call's result. *collect*: run the garbage collector before each call, so that one call's
    garbage is not collected inside the next one's time."""
    best, out = float("inf"), None
    for _ in range(repeat):
        if collect:
            gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
