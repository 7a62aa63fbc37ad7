"""Executable reproductions of the source documents' published claims.

Each reproduction is a function returning a list of :class:`Claim`: the document's value, ours, the
tolerance and whether ours is within it. ``dlbkit reproduce NAME [--json]`` prints them.

A claim is either *asserted* (``asserted`` true: a tolerance decides, ``ok`` is true or false) or
*reported* (``asserted`` false, ``ok`` null: shown for the reader, with the reason it is not asserted
in ``tolerance``). Only asserted claims are counted. The JSON of ``dlbkit reproduce NAME --json`` is
a list of objects with exactly the keys of :data:`JSON_SCHEMA`.
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass
from typing import Any, Callable

from dlbkit.errors import ConfigError, closest

__all__ = ["Claim", "reported", "REPRODUCTIONS", "JSON_SCHEMA", "run", "format_claims"]

#: the keys of each row of ``dlbkit reproduce NAME --json``, and what they hold
JSON_SCHEMA: dict[str, str] = {
    "claim": "the claim, with the document's table or section and the reading chosen",
    "paper": "the document's value (a number, a list, or a short text)",
    "ours": "dlbkit's value, in the same shape",
    "tolerance": "how the two are compared (a band around the paper's value), or why the row is only reported",
    "asserted": "true if the tolerance decides the row; false if the row is reported for the reader only",
    "ok": "true or false for an asserted row (ours within the tolerance); null for a reported row",
}


@dataclass
class Claim:
    """One checked claim. *paper* and *ours* are numbers or short texts; *tolerance* says how they
    are compared (e.g. "±10%", ">= 0.85 × ideal", "qualitative: ours < paper")."""

    claim: str
    paper: Any
    ours: Any
    tolerance: str
    ok: bool | None
    asserted: bool = True

    def __post_init__(self) -> None:
        # a reported row carries no verdict: anyone counting ok in the JSON counts asserted claims only
        if self.asserted and str(self.tolerance).startswith("reported"):
            raise ValueError(f"a reported row must be built with asserted=False: {self.claim!r}")
        if not self.asserted:
            self.ok = None
        elif self.ok is None:
            raise ValueError(f"asserted claim without a verdict: {self.claim!r}")
        else:
            self.ok = bool(self.ok)

    def as_dict(self) -> dict:
        return asdict(self)


def reported(claim: str, paper: Any, ours: Any, why: str) -> Claim:
    """A row shown for the reader and not asserted; *why* says why (it becomes the tolerance text)."""
    return Claim(claim, paper, ours, "reported, not asserted" + (f" ({why})" if why else ""), None,
                 asserted=False)


#: reproduction name -> "module:function" (imported on demand)
REPRODUCTIONS: dict[str, str] = {
    "sanchez2002": "dlbkit.face.reproduce.sanchez2002:claims",
    "osman2003": "dlbkit.face.reproduce.osman2003:claims",
    "haron1998": "dlbkit.face.reproduce.haron1998:claims",
    "sinclair1993": "dlbkit.face.reproduce.sinclair1993:claims",
    "nezha": "dlbkit.face.reproduce.nezha:claims",
}


def run(name: str) -> list[Claim]:
    if name not in REPRODUCTIONS:
        raise ConfigError("reproduction", name, "one of " + ", ".join(sorted(REPRODUCTIONS)),
                          suggest=closest(name, REPRODUCTIONS))
    module, func = REPRODUCTIONS[name].split(":")
    fn: Callable[[], list[Claim]] = getattr(importlib.import_module(module), func)
    return fn()


def format_claims(rows: list[Claim]) -> str:
    """Claims as numbered plain text (``python -m dlbkit.face.reproduce.NAME``; the CLI prints a table)."""
    return "\n".join(f"{k:2d}. [{'—' if not c.asserted else 'ok' if c.ok else 'FAIL'}] {c.claim}\n      paper: {c.paper}\n"
                     f"      ours:  {c.ours}\n      tol:   {c.tolerance}" for k, c in enumerate(rows, 1))
