"""The information layer: how load knowledge reaches a decider and how old it is (:mod:`.base`).

Models: ``exact`` (the default: true loads, free, age 0), ``periodic`` (reports to a central
decider), ``neighbour`` (neighbour exchange) and ``gossip`` (push of load vectors to random peers,
timestamped freshest-wins merge). ``resolve(spec)`` builds one from a name, an experiment's
``[info]`` table or an object.
"""

from .base import ENTRY_BYTES, HEADER_BYTES, InfoMessage, InfoModel
from .registry import INFO_MODELS, names, register, resolve

from . import exact, periodic, neighbour, gossip  # noqa: E402,F401,I001  (one line per model)
from .exact import Exact
from .gossip import Gossip
from .neighbour import NeighbourExchange
from .periodic import Periodic

__all__ = ["InfoModel", "InfoMessage", "Exact", "Periodic", "NeighbourExchange", "Gossip", "resolve", "names",
           "register", "INFO_MODELS", "HEADER_BYTES", "ENTRY_BYTES"]
