"""Gossip: every node pushes its whole load vector to random peers, periodically; freshest wins."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.params import Interval, Options
from dlbkit.info.base import InfoModel
from dlbkit.info.registry import register
from dlbkit.info.selection import SELECTIONS, Epochs

__all__ = ["Gossip", "MAX_ROUND_ENTRIES"]

#: the most load entries one gossip round may send (nodes × fanout peers × nodes entries, twice with
#: pull): a round's messages are snapshots in flight at once, 16 bytes an entry, so 512 MiB here (at
#: 8 192 nodes and fanout 1, twice this, the run peaked at 3.2 GB)
MAX_ROUND_ENTRIES = 2**25


@register
class Gossip(InfoModel):
    """Every *period* seconds each node pushes its whole table (its own load now and what it knows of
    every other node, each with its stamp) to *fanout* peers drawn uniformly, without replacement,
    from the other nodes; the receiver keeps, entry by entry, whichever of its own and the received
    value is newer (timestamped freshest-wins merge). *selection* ``"constrained"`` draws the peers by
    Algorithm 4.1 instead (each node walks a random permutation of its peers, *fanout* a period). With
    *pull* the exchange is push-pull: each peer told answers with its own table, as it was when the
    round began (the two tables cross; a second message per push).

    Source: push gossip of load vectors as in the decentralised schedulers of 003 (Nezha's load
    dissemination: nodes exchange load with random peers so that every node can place jobs itself),
    after the epidemic protocols of Demers et al. 1987 (anti-entropy by push, and push-pull) with
    timestamps deciding which copy is kept — the remedy 003 §4.3.1 looks for against its
    "non-linear latency" (its notes §2.11: "attach per-origin version numbers or timestamps and keep
    the freshest entry"), and Corollary 4.2's timestamped case. Information spreads in O(log P) rounds.

    Helps: every node learns every load at a cost of P·fanout messages a period, without a centre
    and beyond the topology's neighbourhood. Backfires: each message carries P entries (bytes grow
    as P²·fanout a period), and an entry is on average older than with neighbour exchange, since it
    may have travelled several hops.
    """

    name = "gossip"
    _parameter_constraints = {"period": [Interval(Real, 0, None, closed="neither")],
                              "fanout": [Interval(Integral, 1, None)], "selection": [Options(*SELECTIONS)],
                              "pull": [bool]}

    def __init__(self, *, period: float = 0.01, fanout: int = 1, selection: str = "uniform", pull: bool = False):
        self.period = period
        self.fanout = fanout
        self.selection = selection
        self.pull = pull

    def check_size(self, n_nodes):
        super().check_size(n_nodes)
        entries = n_nodes * min(self.fanout, n_nodes - 1) * n_nodes * (2 if self.pull else 1)
        if entries > MAX_ROUND_ENTRIES:
            raise ConfigError("info.fanout", self.fanout, f"a fanout whose rounds send at most {MAX_ROUND_ENTRIES:,} "
                              f"load entries (dlbkit's limit: each of {n_nodes:,} nodes sends its whole table to "
                              f"fanout peers{', and each peer answers' if self.pull else ''}, every message in "
                              f"flight at once; this one {entries:,})")

    def start(self, n_nodes, neighbours, loads, rng=None):
        super().start(n_nodes, neighbours, loads, rng)  # validates and checks the size before the tables
        if rng is None:
            raise ConfigError("the rng passed to gossip.start", None, "a numpy.random.Generator (engines pass one)")
        self.all_ = np.arange(n_nodes)
        self.epochs_ = Epochs(n_nodes, rng) if self.selection == "constrained" else None

    def _send(self, t):
        P = self.n_nodes_
        k = min(self.fanout, P - 1)
        if k < 1:
            return []
        msgs = []
        for i in range(P):
            if self.epochs_ is None:
                others = np.delete(self.all_, i)
                peers = self.rng_.choice(others, size=k, replace=False)
            else:  # fanout ≤ N − 1: no peer twice within one round (one epoch holds each peer once)
                peers = [self.epochs_.next(i) for _ in range(k)]
            for j in peers:
                msgs.append(self._entries(i, int(j), self.all_))
                if self.pull:
                    msgs.append(self._entries(int(j), i, self.all_))
        return msgs
