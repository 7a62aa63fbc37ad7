"""The real runtime: the same balancers driving the user's own Python functions.

* :mod:`.backends`: ``local`` (worker processes on this machine) and ``mpi`` (mpi4py ranks): start,
  transport, failure detection, broadcast, abort, stop and clean-up, written once.
* :mod:`.families`: ``map``, ``tree``, ``spmd``: each family's coordinator rules, worker loop and
  runner (a resolved balancer in, an outcome and a Trace out).
* :mod:`.emulation` (heterogeneity on one machine), :mod:`.progress`, :mod:`.record` (the recording
  format, read by :mod:`dlbkit.face.replay`).

The user-facing entry points (``dlbkit.map``, ``dlbkit.tree``, ``dlbkit.spmd``, ...) are in
:mod:`dlbkit.families.run`.
"""

from dlbkit.runtime.backends import BACKENDS
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.record import load_trace, save_trace

__all__ = ["BACKENDS", "Emulation", "load_trace", "save_trace"]
