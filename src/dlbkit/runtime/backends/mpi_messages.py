"""The MPI backend's own messages (:mod:`.mpi`), beside the families': a worker rank's word that it
has left, or that the user's signal handler raised there, and rank 0's closing broadcast."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Bye", "Signalled", "Succeeded", "Failed"]


class Bye(NamedTuple):
    """Worker rank → rank 0: it left the worker loop (after Stop) and will send nothing more."""


class Signalled(NamedTuple):
    """Worker rank → rank 0: the user's signal handler raised on that rank (*why*, one line); it will
    do no more work, and the run ends as after any failure (:mod:`.deferred`)."""

    why: str = ""


class Succeeded(NamedTuple):
    """Rank 0 → every rank, after the run: its outcome for the worker ranks."""

    outcome: tuple


class Failed(NamedTuple):
    """Rank 0 → every rank, after the run: it failed (*reason*, one line)."""

    reason: str
