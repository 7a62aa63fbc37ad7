"""How a sender picks the peer it tells: uniformly at random (the old scattering algorithm) or by
Algorithm 4.1's constrained selection (003 §4.3.2, ``constraint_select``: no peer twice until every
peer has been chosen once, i.e. a fresh random permutation of the peers each *epoch*).

Shared by the information models (:mod:`.gossip`, the scattering models) and the Monte-Carlo model of
the propagation steps (:mod:`dlbkit.info.gossip_mc`, vectorised over trials), so that both draw peers
the same way: a draw r among the N − 1 peers of sender s is the node ``r + (r >= s)`` (the sender
skipped).
"""

from __future__ import annotations

import numpy as np

__all__ = ["SELECTIONS", "permutations", "skip_self", "uniform_peers", "Epochs"]

#: the selection rules, by name
SELECTIONS = ("uniform", "constrained")


def permutations(rng: np.random.Generator, shape: tuple, k: int) -> np.ndarray:
    """Independent uniform random permutations of 0 … *k* − 1 along the last axis of an array of *shape* + (k,)."""
    return np.argsort(rng.random((*shape, k)), axis=-1)


def skip_self(r: np.ndarray, senders: np.ndarray) -> np.ndarray:
    """The node a draw *r* among the N − 1 peers names for its sender (the sender itself skipped)."""
    return r + (r >= senders)


def uniform_peers(rng: np.random.Generator, n: int) -> np.ndarray:
    """One peer per sender 0 … *n* − 1, each uniform among the n − 1 others (the old algorithm)."""
    return skip_self(rng.integers(n - 1, size=n), np.arange(n))


class Epochs:
    """Algorithm 4.1's ``constraint_select`` for every sender of an *n*-node cluster: sender s walks a
    random permutation of its n − 1 peers and draws a new one when it has used them all.

    :meth:`next` may skip peers the sender regards as inactive (Algorithm 4.3: it draws uniformly from
    the peers left in the epoch *and* active, which a walk of a random permutation that skips the
    others does); a peer found active again after its turn in the epoch waits for the next epoch.
    """

    def __init__(self, n: int, rng: np.random.Generator):
        self.n, self.rng = n, rng
        self.order = np.zeros((n, max(n - 1, 0)), dtype=np.int64)
        self.pos = np.full(n, max(n - 1, 0))  # every sender draws its first permutation at its first call

    def _refill(self, s: int) -> None:
        self.order[s] = skip_self(permutations(self.rng, (), self.n - 1), s)
        self.pos[s] = 0

    def next(self, s: int, allowed: np.ndarray | None = None) -> int | None:
        """The next peer of sender *s* (None when *allowed*, a mask over the nodes, leaves it none)."""
        if self.n < 2:
            return None
        if allowed is not None:
            peers = allowed.copy()
            peers[s] = False
            if not peers.any():
                return None
        for _ in range(2 * self.n):  # at most the rest of this epoch and one whole new one
            if self.pos[s] >= self.n - 1:
                self._refill(s)
            p = int(self.order[s, self.pos[s]])
            self.pos[s] += 1
            if allowed is None or allowed[p]:
                return p
        raise AssertionError("unreachable: a whole epoch holds every allowed peer")
