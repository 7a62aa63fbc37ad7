"""The hypothesis profiles of the two tiers, and the example count of a property in each.

``make test`` loads ``fast`` (``--hypothesis-profile=fast``, also the default of a bare ``pytest``),
``make test-all`` loads ``full``. Both switch off the per-example deadline and the too-slow health
check: a shared, loaded machine makes any example slow now and then, which says nothing about the
code. ``fast`` runs every property at most :data:`FAST_EXAMPLES` examples, derandomized (the same
examples at every run, so a developer's quick run is repeatable); ``full`` runs each property the
count its author chose for it (hypothesis' default of 100 where it chose none), on fresh examples.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

FAST = "fast"
FULL = "full"
FAST_EXAMPLES = 10

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def register() -> None:
    settings.register_profile(FAST, max_examples=FAST_EXAMPLES, derandomize=True, **_COMMON)
    settings.register_profile(FULL, **_COMMON)


def examples(n: int) -> int:
    """The example count of a property whose author chose *n*: *n* in the full tier, at most
    :data:`FAST_EXAMPLES` in the fast one. Read when the test module is imported, after the profile
    is loaded (pytest's configure step comes before collection)."""
    if settings.get_current_profile_name() == FULL:
        return n
    return min(n, settings().max_examples)
