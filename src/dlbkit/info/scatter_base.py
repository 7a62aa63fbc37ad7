"""What the scattering models of 003 Chapter 4 share: every period each node that takes part sends
one message to one peer it selects; nodes listed in *inactive* (crashed, cut off or over-loaded for
the whole run: 003 §4.4.2) neither send nor keep what they receive, and freshness is measured over
the others."""

from __future__ import annotations

from abc import abstractmethod
from numbers import Integral, Real

from dlbkit.errors import ConfigError
from dlbkit.params import Interval
from dlbkit.info.base import InfoModel
from dlbkit.info.selection import Epochs, uniform_peers

__all__ = ["Scatter"]


class Scatter(InfoModel):
    """Base of the scattering models (not registered): *period* seconds between a node's sends, the
    peer selection (class attribute ``selection``: ``"uniform"`` or ``"constrained"``, Algorithm 4.1),
    and the *inactive* nodes. Subclasses say what a message carries (:meth:`_message`) and how the
    receiver merges it (:meth:`_merge`)."""

    selection = "uniform"
    _parameter_constraints = {"period": [Interval(Real, 0, None, closed="neither")], "inactive": ["array"]}

    def __init__(self, *, period: float = 0.01, inactive: tuple = ()):
        self.period = period
        self.inactive = inactive

    def check_size(self, n_nodes):
        # here, not only in start: an experiment file asks before any run (each index must be a node)
        super().check_size(n_nodes)
        for k, j in enumerate(self.inactive):
            if not isinstance(j, Integral) or isinstance(j, bool) or not 0 <= j < n_nodes:
                raise ConfigError(self.param_field("inactive", k), j, f"a node index below {n_nodes}")

    def start(self, n_nodes, neighbours, loads, rng=None):
        super().start(n_nodes, neighbours, loads, rng)
        if rng is None:
            raise ConfigError(f"the rng passed to {self.name}.start", None,
                              "a numpy.random.Generator (engines pass one)")
        self.members_[list(map(int, self.inactive))] = False
        self.epochs_ = Epochs(n_nodes, rng) if self.selection == "constrained" else None

    def _peers(self) -> list:
        """The peer each node sends to this round (None: it sends nothing)."""
        n = self.n_nodes_
        if n < 2:
            return [None] * n
        if self.epochs_ is None:
            out = uniform_peers(self.rng_, n).tolist()
        else:
            out = [self.epochs_.next(i) for i in range(n)]
        return [p if self.members_[i] else None for i, p in enumerate(out)]

    def _send(self, t):
        return [self._message(i, p, t) for i, p in enumerate(self._peers()) if p is not None]

    def deliver(self, msg):
        if self.members_[msg.dst]:  # an inactive node drops what it receives
            self._merge(msg)

    @abstractmethod
    def _message(self, src: int, dst: int, t: float):
        """The message *src* sends *dst* this round (an ``InfoMessage``)."""

    @abstractmethod
    def _merge(self, msg) -> None:
        """Merge *msg* into its receiver's knowledge."""
