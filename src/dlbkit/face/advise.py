"""``dlbkit advise``: which balancer the next run of a recording should use, as the recording's family advises
(``Family.advise``: a loop's is :mod:`dlbkit.families.divisible.face.advise`)."""

from __future__ import annotations

from pathlib import Path

from dlbkit import families
from dlbkit.errors import ConfigError
from dlbkit.families.replay import as_trace, check_whole
from dlbkit.model.trace import Trace

# the command line's advise prints a loop's ranking (its table is not yet declared by the families)
from dlbkit.families.divisible.face.advise import format_advice, plot_auto  # noqa: E402

__all__ = ["advise", "format_advice", "plot_auto"]


def advise(trace: Trace | str | Path, *, candidates: list[str] | None = None, max_items: int = 2048) -> list[dict]:
    """The balancers ranked by predicted makespan for another run of *trace* (a Trace or a recording's path), best
    first, as its family advises (a loop: :func:`dlbkit.families.divisible.face.advise.advise`, whose keywords
    *candidates* and *max_items* are passed on); a ConfigError for a recording of a family that gives no advice."""
    tr = as_trace(trace)
    check_whole(tr)
    family = families.FAMILIES.get(tr.family)
    if family is None or family.advise is None:
        advising = [f"a {f.name} run ({' or '.join(f.kinds)} balancers)" for f in families.FAMILIES.values()
                    if f.advise is not None]
        raise ConfigError("trace family", tr.family, " or ".join(advising) + ": dlbkit advise ranks them")
    return family.advise(tr, candidates=candidates, max_items=max_items)
