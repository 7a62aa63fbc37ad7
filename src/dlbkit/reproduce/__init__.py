"""Executable reproductions of the source documents' published claims.

Each reproduction is a function returning a list of :class:`Claim`: the document's value, ours, the
tolerance and whether ours is within it. ``dlbkit reproduce NAME [--json]`` prints them.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass
from typing import Any, Callable

from ..errors import ConfigError

__all__ = ["Claim", "REPRODUCTIONS", "run", "format_claims"]


@dataclass
class Claim:
    """One checked claim. *paper* and *ours* are numbers or short texts; *tolerance* says how they
    are compared (e.g. "±10%", ">= 0.85 × ideal", "qualitative: ours < paper")."""

    claim: str
    paper: Any
    ours: Any
    tolerance: str
    ok: bool

    def as_dict(self) -> dict:
        return asdict(self)


#: reproduction name -> "module:function" (imported on demand)
REPRODUCTIONS: dict[str, str] = {
    "sanchez2002": "dlbkit.reproduce.sanchez2002:claims",
    "osman2003": "dlbkit.reproduce.osman2003:claims",
    "haron1998": "dlbkit.reproduce.haron1998:claims",
}


def run(name: str) -> list[Claim]:
    if name not in REPRODUCTIONS:
        raise ConfigError("reproduction", name, "one of " + ", ".join(sorted(REPRODUCTIONS)))
    module, func = REPRODUCTIONS[name].split(":")
    fn: Callable[[], list[Claim]] = getattr(importlib.import_module(module), func)
    return fn()


def format_claims(rows: list[Claim]) -> str:
    """Claims as numbered plain text (``python -m dlbkit.reproduce.NAME``; the CLI prints a table)."""
    return "\n".join(f"{k:2d}. [{'ok' if c.ok else 'FAIL'}] {c.claim}\n      paper: {c.paper}\n"
                     f"      ours:  {c.ours}\n      tol:   {c.tolerance}" for k, c in enumerate(rows, 1))
