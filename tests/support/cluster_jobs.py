"""Jobs that the Cluster's tests run on its nodes, on every backend (importable there).

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import time


def spin(seconds):
    """Busy for *seconds* of this machine's CPU (so that emulation stretches it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return seconds


def boom(x):
    raise ValueError(f"job {x} failed on purpose")
