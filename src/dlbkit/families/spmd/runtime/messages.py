"""The messages of the SPMD family (``dlbkit.spmd``): between the coordinator (:mod:`.spmd`'s
``_Run``) and a worker (:func:`.spmd.serve_spmd`), which owns a contiguous block of rows and does
only what it is told. Times are run times; *top* and *bottom* are a block's first and last ``halo``
rows (the edges its neighbours need).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Init", "Step", "Ship", "Take", "Gather", "Stepped", "Shipped", "Took", "Block"]


# --- coordinator → worker --------------------------------------------------------------------------
class Init(NamedTuple):
    """The worker's first rows."""

    block: np.ndarray


class Step(NamedTuple):
    """Compute iteration *it* on ``concatenate([lo, block, hi])``: *lo*/*hi* are the ``halo`` rows
    above and below the block (the neighbours' edges after iteration it − 1, or the domain's fixed
    boundary rows at the global edges); *keep*: send the whole new block too (a checkpoint)."""

    it: int
    lo: np.ndarray
    hi: np.ndarray
    keep: bool = False


class Ship(NamedTuple):
    """Give away the *k* rows at *side* (``"lo"``: the first rows, ``"hi"``: the last)."""

    side: str
    k: int


class Take(NamedTuple):
    """Add *rows* at *side* (they come from the neighbour on that side)."""

    side: str
    rows: np.ndarray


class Gather(NamedTuple):
    """Send the block back (:class:`Block`)."""


# --- worker → coordinator --------------------------------------------------------------------------
class Stepped(NamedTuple):
    """Iteration *it* done: the block's new edges, the measured seconds of ``step`` on this machine
    (*work*), and when the step began and ended (*t_end* includes the emulated stretch); the whole
    *block* when the Step asked to keep it (a checkpoint), else None."""

    it: int
    top: np.ndarray
    bottom: np.ndarray
    work: float
    t_start: float
    t_end: float
    block: np.ndarray | None = None


class Shipped(NamedTuple):
    """The rows a :class:`Ship` asked for, and the block's new edges."""

    rows: np.ndarray
    top: np.ndarray
    bottom: np.ndarray


class Took(NamedTuple):
    """After a :class:`Take`: the block's new edges."""

    top: np.ndarray
    bottom: np.ndarray


class Block(NamedTuple):
    """The worker's rows, in reply to :class:`Gather`."""

    block: np.ndarray
