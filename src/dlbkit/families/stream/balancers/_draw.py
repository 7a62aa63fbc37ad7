"""Random draws for placement rules, taken from the engine's Generator in blocks (a placement is asked
for every arriving task, 10^6 times in a benchmark run; one Generator call per decision would cost
more than the decision). Same Generator, same draws: a rule's decisions depend only on its seed."""

from __future__ import annotations

import numpy as np

from dlbkit.families.stream.balancers.base import PlacementBalancer

__all__ = ["Draws", "least", "RandomizedPlacement"]

#: draws taken from the Generator at once
BLOCK = 4096


class Draws:
    """Uniform floats in [0, 1) from *rng*, one block at a time. After :meth:`scale` (*n*),
    ``nbuf[i]`` is ``int(buf[i] * n)`` (the node a draw names), made with each block, so that a rule
    that reads a draw as a node reads ``nbuf[pos]`` instead of converting (same value)."""

    __slots__ = ("rng", "buf", "pos", "n", "nbuf")

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.buf: list[float] = []
        self.pos = 0
        self.n = 0
        self.nbuf: list[int] = []

    def scale(self, n: int) -> None:
        """Keep ``nbuf``: each draw of the block times *n*, truncated (numpy's product and
        truncation are the float product and ``int`` of :meth:`below`)."""
        self.n = n
        self.nbuf = (np.asarray(self.buf) * n).astype(np.int64).tolist() if n else []

    def u(self) -> float:
        """The next uniform in [0, 1)."""
        p = self.pos
        if p == len(self.buf):
            block = self.rng.random(BLOCK)
            self.buf = block.tolist()
            if self.n:
                self.nbuf = (block * self.n).astype(np.int64).tolist()
            p = 0
        self.pos = p + 1
        return self.buf[p]

    def below(self, n: int) -> int:
        """An integer uniform in [0, n)."""
        return int(self.u() * n)

    def sample(self, pool, d: int, replace: bool) -> list:
        """*d* members of the list *pool* drawn uniformly, with or without replacement (without: *d*
        at most ``len(pool)``; each draw picks among the members not drawn yet)."""
        n = len(pool)
        if replace:
            return [pool[int(self.u() * n)] for _ in range(d)]
        taken: list[int] = []
        for k in range(d):
            r = int(self.u() * (n - k))
            for c in taken:  # sorted: shift past every index already taken
                if r >= c:
                    r += 1
            taken.append(r)
            taken.sort()
        return [pool[i] for i in taken]


def least(cands, key, draws: Draws) -> int:
    """The candidate of smallest *key* (a callable); ties broken uniformly at random."""
    best = []
    bk = None
    for c in cands:
        k = key(c)
        if bk is None or k < bk:
            bk, best = k, [c]
        elif k == bk and c not in best:
            best.append(c)
    return best[0] if len(best) == 1 else best[draws.below(len(best))]


class RandomizedPlacement(PlacementBalancer):
    """A placement rule that draws: :meth:`start` gives it ``draws_``, block draws (:class:`Draws`)
    from the engine's Generator (None when started without one)."""

    def start(self, view, rng=None):
        super().start(view, rng)
        self.draws_ = Draws(rng) if rng is not None else None
