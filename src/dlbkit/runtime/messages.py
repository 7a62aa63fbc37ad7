"""Messages the backends and every family share.

Every message is a small named tuple whose type is its kind: a receiver dispatches on
``type(msg)``, never on a tag. The three every family shares are :class:`Stop` (coordinator →
worker: leave the loop), :class:`Error` (worker → coordinator: the user's code raised; built by
:func:`~dlbkit.runtime.backends.base.error_message`) and :class:`Died` (made by the local transport
when a worker process ends); the backends' stop, drain and failure handling rely on them. Each
family defines its own kinds next to its rules, in its runtime room's ``messages`` module
(``dlbkit.families.<family>.runtime.messages``).

Messages cross processes pickled (a pipe, MPI), so every kind is a top-level class. A named tuple
pickles as a reference to its class (its module's and its own name) and its fields, and the
unpickler imports the class by name: for a small message, twice the bytes of a tuple with a tag, and
several microseconds more per message (a job of ``dlbkit.Cluster`` took a fifth more CPU). So the
frequent kinds (:data:`COMPACT`) are registered with :mod:`copyreg`'s extension registry, the
standard library's way to pickle a class compactly: by a code of two bytes, which the unpickler
looks up in a table. Every process registers them when it imports this module (each family's does),
so the processes of a run agree. A code or a class already registered otherwise (another library's
registry) is left as it was: that kind is then pickled by name, as any class is.
"""

from __future__ import annotations

import copyreg
from typing import Any, NamedTuple

__all__ = ["Stop", "Error", "Died", "COMPACT", "FIRST_CODE"]

#: the first of the extension codes of :data:`COMPACT` (192–239: copyreg's range for third parties)
FIRST_CODE = 192
#: the frequent kinds, by module and class name (registered by name: this module imports no family),
#: each pickled by the extension code FIRST_CODE + its index (append only: a code names one kind). The one
#: place of the shared runtime that names families' modules, on purpose: the codes are the wire protocol's
#: table, which every process of a run must hold alike whatever it imported; a table filled by each family
#: as it is imported could give one code to two kinds in processes that imported the families in another
#: order. A new family's kinds need no code (they are pickled by name), or take the next ones here.
COMPACT = (
    ("dlbkit.families.divisible.runtime.messages", "Work"),
    ("dlbkit.families.divisible.runtime.messages", "Done"),
    ("dlbkit.families.graph.runtime.messages", "Run"),
    ("dlbkit.families.graph.runtime.messages", "Result"),
    ("dlbkit.families.spmd.runtime.messages", "Step"),
    ("dlbkit.families.spmd.runtime.messages", "Stepped"),
    ("dlbkit.families.stream.runtime.messages", "Submit"),
    ("dlbkit.families.stream.runtime.messages", "Forward"),
    ("dlbkit.families.stream.runtime.messages", "Info"),
    ("dlbkit.families.stream.runtime.messages", "Placed"),
    ("dlbkit.families.stream.runtime.messages", "Started"),
    ("dlbkit.families.stream.runtime.messages", "Result"),
    ("dlbkit.families.tree.runtime.messages", "WorkerState"),
    ("dlbkit.families.tree.runtime.messages", "Report"),
    ("dlbkit.families.tree.runtime.messages", "Steal"),
    ("dlbkit.families.tree.runtime.messages", "Idle"),
    ("dlbkit.families.tree.runtime.messages", "Give"),
    ("dlbkit.families.tree.runtime.messages", "Mail"),
    ("dlbkit.families.tree.runtime.messages", "Post"),
    ("dlbkit.families.tree.runtime.messages", "Request"),
    ("dlbkit.families.tree.runtime.messages", "Order"),
    ("dlbkit.families.tree.runtime.messages", "Loot"),
    ("dlbkit.families.tree.runtime.messages", "Pushed"),
)


def _register_compact() -> None:
    for code, (module, name) in enumerate(COMPACT, start=FIRST_CODE):
        try:
            copyreg.add_extension(module, name, code)  # a no-op when it is registered already
        except ValueError:  # the code or the class is another's: this kind is pickled by name
            pass


_register_compact()


class Stop(NamedTuple):
    """Coordinator → worker: leave the loop (after the run, or to stop it after a failure)."""


class Error(NamedTuple):
    """Worker → coordinator: the user's code raised; the coordinator raises it as a TaskError."""

    #: where it failed: an item's index (map), a task's repr (tree), an iteration (SPMD)
    index: Any = None
    #: the exception, pickled; None if it could not be (its traceback text still arrives)
    exception: bytes | None = None
    #: the worker's formatted traceback
    traceback: str = ""


class Died(NamedTuple):
    """Local transport → coordinator: a worker process ended (after whatever it sent before)."""

    exitcode: int | None = None
