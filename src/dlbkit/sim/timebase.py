"""Simulated time conventions shared by the engines."""

from __future__ import annotations

__all__ = ["SIMULTANEITY_TOLERANCE"]

#: Event times closer than this (seconds) are the same instant. Float round-off splits exact ties
#: (docs/reference-models.md, "Time base and ties": distinct model times differ by >= 1.19e-7 s and the
#: accumulated error stays < 1e-10 s), so engines batch near-equal times and order the batch by
#: their tie rule instead of by round-off.
SIMULTANEITY_TOLERANCE = 1e-9
