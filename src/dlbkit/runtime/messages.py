"""Message kinds the backends and every family share (the first element of every message tuple).

``STOP`` (coordinator → worker: leave the loop), ``ERROR`` (worker → coordinator: the user's code
raised; built by :func:`~dlbkit.runtime.backends.base.error_message`) and ``DIED`` (added by the
local transport when a worker process ends) mean the same in every family; the MPI backend's
stop-and-drain protocol relies on them. ``READY``, ``WORK`` and ``DONE`` are the map family's
(:mod:`dlbkit.runtime.families.map`); the tree and SPMD families define their own kinds.
"""

READY = "ready"
WORK = "work"
DONE = "done"
ERROR = "error"
STOP = "stop"
DIED = "died"
