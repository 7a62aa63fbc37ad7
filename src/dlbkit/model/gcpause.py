"""Pausing Python's cyclic garbage collector while code builds millions of containers.

A simulation's hot loop, or the build of a large task graph, creates millions of tuples and lists
and no reference cycles. The collector still walks the young objects every 700 allocations and, as
they pile up, the old ones too: a quarter of a million-event run and half the build of a 2-million-
task graph went there (BENCHMARKS.md). Reference counting frees everything such code drops.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector inside the block; re-enable it after only if it was enabled
    (a caller that disabled it keeps it disabled, and blocks nest)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
