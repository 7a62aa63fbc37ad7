"""How fast push gossip informs a cluster: the probability Pr(j, i) that exactly i of the n active
nodes hold a given node's information after j propagation steps (003 §4.4.1, Theorem 4.2, Appendix
e-A.1–A.4; the Drezner–Barak scattering that Nezha calls "the old algorithm").

Model: N nodes, n of them active (the origin is active). After step 1 the origin and one other node
are informed (Pr(1, 2) = 1; the note's initial condition, which reproduces Table 6). At every later
step each of the k informed nodes sends once, to one of the N − 1 other nodes drawn uniformly; a
message to an uninformed active node informs it, one to an informed or inactive node is wasted.
With m the number of nodes newly informed in a step,

* D(m, l): the probability that l independent throws onto m given nodes hit each of them at least
  once (inclusion–exclusion: Σ_i (−1)^i C(m, i) ((m − i)/m)^l);
* S(m, k): the probability that the k senders inform exactly a given set of m uninformed active
  nodes: Σ_{l=m}^{k} C(k, l) (m/(N−1))^l ((N − n + k − 1)/(N − 1))^{k−l} D(m, l) (l senders hit the
  set, the others an informed or inactive node);
* Pr(j + 1, k + m) += Pr(j, k) · C(n − k, m) · S(m, k).

T(n, N), the steps of a "complete cycle" (Tables 7 and 8), is the first j with Pr(j, n) ≥ 0.999995
(Pr rounds to 1.00000 at five decimals). D is computed exactly (rationals) and cached; the rest in
floats (the alternating sum is exact before it is rounded once).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb

__all__ = ["cover_probability", "pr_series", "cycle_steps", "DONE"]

#: Pr(j, n) at or above this counts as 1.00000 (five decimals, as the tables print)
DONE = 0.999995


@lru_cache(maxsize=None)
def cover_probability(m: int, throws: int) -> float:
    """D(m, l): *throws* independent uniform throws onto *m* nodes hit every one of them."""
    if m == 0:
        return 1.0
    return float(sum((Fraction((-1) ** i * comb(m, i)) * Fraction(m - i, m) ** throws for i in range(m + 1)),
                     Fraction(0)))


@lru_cache(maxsize=None)
def _step_probability(m: int, k: int, n: int, N: int) -> float:
    """S(m, k): the k informed nodes inform exactly a given set of m uninformed active nodes."""
    hit = m / (N - 1)
    waste = (N - n + k - 1) / (N - 1)
    return sum(comb(k, l) * hit ** l * waste ** (k - l) * cover_probability(m, l) for l in range(m, k + 1))


def pr_series(n: int, N: int, steps: int) -> list[float]:
    """Pr(j, n) for j = 1 … *steps*: every active node informed after j steps (n active of N)."""
    if not 2 <= n <= N:
        raise ValueError(f"need 2 <= n <= N; got n={n}, N={N}")
    dist = {2: 1.0}
    out = [0.0 if n > 2 else 1.0]
    for _ in range(2, steps + 1):
        new: dict[int, float] = {}
        for k, p in dist.items():
            for m in range(0, min(k, n - k) + 1):
                q = comb(n - k, m) * _step_probability(m, k, n, N)
                if q:
                    new[k + m] = new.get(k + m, 0.0) + p * q
        dist = new
        out.append(float(dist.get(n, 0)))
    return out


def cycle_steps(n: int, N: int, limit: int = 200) -> int:
    """T(n, N): the first step j with Pr(j, n) ≥ :data:`DONE`."""
    for j, p in enumerate(pr_series(n, N, limit), 1):
        if p >= DONE:
            return j
    raise ValueError(f"Pr(j, {n}) stays below {DONE} for j <= {limit}")
