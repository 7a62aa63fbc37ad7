"""The information layer: how load knowledge reaches a decider and how old it is (:mod:`.base`).

Models: ``exact`` (the default: true loads, free, age 0), ``periodic`` (reports to a central
decider), ``neighbour`` (neighbour exchange), ``gossip`` (push or push-pull of whole tables to random
peers, timestamped freshest-wins merge), 003 Chapter 4's scattering (``scatter-old``, ``scatter-4.1``,
``scatter-4.2``, ``scatter-4.3``: untimestamped shift-and-merge vectors, peers by uniform or
Algorithm 4.1's constrained selection) and ``monitored`` (a lagged copy of the true loads, 003 §3.4).
Freshness ε of every model is sampled by the layer (:mod:`.base`); η = :func:`improvement`.
``resolve(spec)`` builds one from a name, an experiment's ``[info]`` table or an object.
"""

from dlbkit.info.base import ENTRY_BYTES, HEADER_BYTES, InfoMessage, InfoModel, improvement
from dlbkit.info.registry import INFO_MODELS, names, register, resolve, resolve_for

from dlbkit.info import exact, periodic, neighbour, gossip  # noqa: E402,F401,I001  (one line per model)
from dlbkit.info import scatter_old, scatter_41, scatter_42, scatter_43, monitored  # noqa: E402,F401,I001
from dlbkit.info.exact import Exact
from dlbkit.info.gossip import Gossip
from dlbkit.info.neighbour import NeighbourExchange
from dlbkit.info.monitored import Monitored
from dlbkit.info.periodic import Periodic
from dlbkit.info.scatter_41 import Scatter41
from dlbkit.info.scatter_42 import Scatter42
from dlbkit.info.scatter_43 import Scatter43
from dlbkit.info.scatter_old import ScatterOld

__all__ = ["InfoModel", "InfoMessage", "Exact", "Periodic", "NeighbourExchange", "Gossip", "ScatterOld", "Scatter41",
           "Scatter42", "Scatter43", "Monitored", "improvement", "resolve", "resolve_for", "names",
           "register", "INFO_MODELS", "HEADER_BYTES", "ENTRY_BYTES"]
