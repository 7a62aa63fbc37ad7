"""The back-off of an idle node after failed requests for work: one rule for the simulator and the
runtime.

After its *k*-th consecutive failed request (an empty answer), an idle node waits

    min(first · 2^(k−1), longest)

seconds before asking again; a request that brings work resets *k* to 0. :func:`backoff_delay`
computes it exactly (``first`` scaled by a power of two, as ``first * 2.0 ** (k - 1)`` gives it
whenever that does not overflow) and without overflow for any *k*: once the doubled delay would
pass *longest*, the answer is *longest*, however many failures there were.

Where it is used: the runtime's tree coordinator holds an empty steal answer back by this delay
(with its ``STEAL_BACKOFF_S``; it lives here, in the model layer, so that the runtime can call it
too: both engines may import the model, not each other); the simulated tree engine (:mod:`dlbkit.families.tree.sim.engine`, option
``backoff``) delivers an empty reply that much later, so an idle node's polling costs messages in
proportion to the logarithm of its idle time, then to idle time / *longest*, instead of to idle
time / round trip.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from dlbkit.errors import ConfigError

__all__ = ["backoff_delay", "check_backoff", "NO_BACKOFF", "AUTO"]

#: no back-off: an idle node asks again as soon as an empty answer reaches it (M2 of docs/reference-models.md)
NO_BACKOFF = (0.0, 0.0)
#: the simulator's default: first and longest delay derived from the run (see the tree engine, families.tree.sim.engine)
AUTO = "auto"

_ALLOWED = ("'auto', 'off', or [first, longest] in seconds with 0 < first <= longest (finite), "
            "or [0, 0] (no back-off)")


def backoff_delay(failures: int, first: float, longest: float) -> float:
    """Seconds to wait after the *failures*-th consecutive failed request: ``min(first ·
    2^(failures−1), longest)``; 0 for no failure (or *first* 0). Exact, and finite for any count.

    >>> [backoff_delay(k, 1e-4, 5e-3) for k in (0, 1, 2, 3)]
    [0.0, 0.0001, 0.0002, 0.0004]
    >>> backoff_delay(10**6, 1e-4, 5e-3)
    0.005
    """
    if failures <= 0 or first <= 0:
        return 0.0
    if first >= longest:
        return float(longest)
    # first = m · 2^e with 0.5 <= m < 1; first · 2^n overflows past 2^1024 only when e + n > 1024,
    # and by then it is far above any finite longest: answer longest without taking the power
    n = failures - 1
    if math.frexp(first)[1] + n > 1024:
        return float(longest)
    return min(math.ldexp(first, n), float(longest))


def check_backoff(value: Any, field: str = "backoff") -> tuple[float, float] | str:
    """*value* as ``AUTO`` or a (first, longest) pair in seconds (``NO_BACKOFF`` for 'off' or [0, 0]);
    raise a ConfigError naming *field* otherwise."""
    if isinstance(value, str):
        if value == AUTO:
            return AUTO
        if value == "off":
            return NO_BACKOFF
        raise ConfigError(field, value, _ALLOWED)
    try:
        first, longest = value
    except (TypeError, ValueError):
        raise ConfigError(field, value, _ALLOWED) from None
    for x in (first, longest):
        if isinstance(x, bool) or not isinstance(x, Real) or not math.isfinite(x):
            raise ConfigError(field, value, _ALLOWED)
    if first == 0 and longest == 0:
        return NO_BACKOFF
    if not 0 < first <= longest:
        raise ConfigError(field, value, _ALLOWED)
    return float(first), float(longest)
