"""The emulation fuzzers' common parts: a job function and hypothesis events.

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

from hypothesis import event


def square(x):
    return x * x


def _event(what: str) -> None:
    try:
        event(what)
    except Exception:  # noqa: BLE001 - outside a Hypothesis test (the bases): nothing to count
        pass
