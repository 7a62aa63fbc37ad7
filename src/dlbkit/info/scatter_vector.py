"""The load vector of the old scattering algorithm and of Algorithm 4.2: send half, shift and merge."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from dlbkit.params import Interval
from dlbkit.info.base import InfoMessage
from dlbkit.info.scatter_base import Scatter

__all__ = ["ShiftMerge"]


class ShiftMerge(Scatter):
    """A load vector of length *l* per node (None: l = N, as in 003's experiments) of (node, load)
    entries, entry 0 the node's own load (not registered: :mod:`.scatter_old`, :mod:`.scatter_42`).

    Send: the first ⌊l/2⌋ entries. Receive (003 §4.3.3.2, i-4.1, after Drezner and Barak): the
    receiver's entries 1 … move to the even slots 2, 4, …, the received ones fill the odd slots 1, 3,
    …, and what no longer fits is dropped. No entry carries a stamp: a node's estimate of X is the
    first (lowest-index, most recently merged) entry for X in its vector after a merge, and it keeps
    its estimate while X is absent (003 leaves the read-out open: 003 notes §2.9). An older value
    received later overwrites a newer one: the "non-linear latency" of §4.3.1 (Examples 4.1, 4.2).

    At the start every node's vector holds its own load and then the other nodes in turn from its
    successor, with their loads at time 0 (which every node knows). The stamps this layer keeps for
    each entry are the times the values were measured: the model never reads them (the algorithm has
    none); they give the entries' age and let tests check a value against the truth at its stamp.
    A message is counted at :data:`~dlbkit.info.base.ENTRY_BYTES` an entry, as the layer's others.
    """

    _parameter_constraints = {**Scatter._parameter_constraints, "l": [None, Interval(Integral, 2, None)]}

    def __init__(self, *, period: float = 0.01, l: int | None = None, inactive: tuple = ()):  # noqa: E741
        super().__init__(period=period, inactive=inactive)
        self.l = l

    def start(self, n_nodes, neighbours, loads, rng=None):
        super().start(n_nodes, neighbours, loads, rng)
        L = self.l if self.l is not None else max(2, n_nodes)
        self.length_ = L
        start = [float(x) for x in loads]
        # slot 0: own; slot k ≥ 1: the (k−1 mod N−1)-th successor (one node alone: itself). Rows are
        # Python lists: the vectors are short and a merge touches every slot (faster than numpy here)
        self.vnodes_ = [[i] + [(i + 1 + (k - 1) % max(n_nodes - 1, 1)) % n_nodes for k in range(1, L)]
                        for i in range(n_nodes)]
        self.vvalues_ = [[start[x] for x in row] for row in self.vnodes_]
        self.vstamps_ = [[0.0] * L for _ in range(n_nodes)]
        self.half_ = L // 2  # the entries sent: as many as the receiver's odd slots hold (l/2 for an even l)

    def _message(self, src, dst, t):
        vn, vv, vs = self.vnodes_[src], self.vvalues_[src], self.vstamps_[src]
        vv[0] = float(self.values_[src, src])  # own load, exact when it sends
        vs[0] = t
        h = self.half_
        return InfoMessage(src, dst, np.array(vn[:h]), np.array(vv[:h]), np.array(vs[:h]))

    def _merge(self, msg):
        a, L = msg.dst, self.length_
        rn, rv, rs = msg.nodes.tolist(), msg.values.tolist(), msg.stamps.tolist()
        for rows, recv in ((self.vnodes_, rn), (self.vvalues_, rv), (self.vstamps_, rs)):
            old = rows[a]
            new = [old[0]] * L
            new[2::2] = old[1:(L + 1) // 2]  # i-4.1: V_a(k) → V_a(2k), 1 ≤ k
            new[1::2] = recv[:L // 2]  # V_b(k) → V_a(2k + 1), 0 ≤ k
            rows[a] = new
        seen = {a}
        row_v, row_s = self.values_[a], self.stamps_[a]
        vv, vs = self.vvalues_[a], self.vstamps_[a]
        for k, x in enumerate(self.vnodes_[a]):  # the first (most recently merged) entry for each other node
            if x not in seen:
                seen.add(x)
                row_v[x] = vv[k]
                row_s[x] = vs[k]
