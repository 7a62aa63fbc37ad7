"""The worst-case analysis of Pseudo-Dynamic load balancing (002 §7; the note's §10), as functions.

The worst case is the complete m-ary in-tree of k levels (:func:`dlbkit.families.graph.model.generate.in_tree`):
level i has m^(i−1) tasks of load l_i, and a task of level i+1 sends c_i to its parent. Formulas as
the note corrects them (its §10 errata: ⌈k⌉ → the smallest integer k; case (a)'s denominator carries
the factor l; §7.6's exponents). Lists are indexed by level: ``l[0]`` = l_1, ``c[0]`` = c_1.
"""

from __future__ import annotations

__all__ = ["levels_for", "pd_makespan", "pd_makespan_uniform", "optimal_makespan", "worst_case_ratio",
           "ratio_limit"]


def levels_for(n: int, m: int) -> int:
    """The smallest k with 1 + m + … + m^(k−1) ≥ n (§7.1)."""
    k, total = 1, 1
    while total < n:
        total += m ** k
        k += 1
    return k


def pd_makespan(m: int, k: int, l: list, c: list) -> float:
    """C^PD as the level sum of §7.1 (valid for k ≥ 3): the makespan of PD's round-robin placement."""
    if k < 3:
        raise ValueError(f"k must be >= 3 for the level sum; got {k}")
    L = lambda i: l[i - 1]  # noqa: E731  (1-based, as printed)
    C = lambda i: c[i - 1]  # noqa: E731
    total = m ** (k - 3) * (L(k) + (m - 1) * (L(k) + C(k - 1)))
    for i in range(3, k):
        total += m ** (i - 2) * ((m - 1) * C(i) + L(i)) + (m - 1) * m ** (i - 3) * C(i - 1)
    return total + ((m - 1) * C(2) + L(2)) + ((m - 1) * C(1) + L(1))


def pd_makespan_uniform(m: int, k: int, l: float, c: float) -> float:
    """C^PD in closed form for uniform loads l and communication c (§7.4)."""
    return (l * (-m ** (k - 1) - m + 2) + c * (-2 * (m - 1) * m ** (k - 2) - m * m + 4 * m - 3)) / (1 - m)


def optimal_makespan(m: int, k: int, l: list, c: list) -> float:
    """C* of §7.2: everything on one node if c_1 ≥ l_t (case a), else one level-2 subtree per node
    (case b), with l_t = Σ_{i=2..k} m^(i−2) l_i."""
    lt = sum(m ** (i - 2) * l[i - 1] for i in range(2, k + 1))
    if c[0] >= lt:
        return float(sum(m ** (i - 1) * l[i - 1] for i in range(1, k + 1)))
    return lt + (m - 1) * c[0] + l[0]


def worst_case_ratio(n: int, m: int, l_max: float, c_max: float) -> float:
    """R^PD for a graph of n tasks on m nodes with a = c_max / l_max (§7.5), k from :func:`levels_for`."""
    a = c_max / l_max
    k = levels_for(n, m)
    num = m ** (k - 1) * (1 + 2 * a) - 2 * a * m ** (k - 2) + a * m * m + m * (1 - 4 * a) + (3 * a - 2)
    if a >= (1 - m ** (k - 1)) / (1 - m):
        return num / (m ** k - 1)
    return num / (m ** (k - 1) + a * m * m + m * (1 - 2 * a) + (a - 2))


def ratio_limit(m: int, a: float) -> float:
    """The bound R^PD → 1 + 2a(m−1)/m as n → ∞ (§7.6)."""
    return 1 + 2 * a * (m - 1) / m
