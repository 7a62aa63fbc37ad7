"""Closed forms of 000 (Osman 2003) used by the reproduction: Theorem 7-4's bound and the idealised
propagation it comes from (§7.4), pipeline speedup (§5.1.4.2), the pilot extrapolation (§5.1), the
variance identity (§7.2) and the confidence half-widths of Tables 8.2–8.7. Pure functions."""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["Z95", "Z90", "thesis_bound_steps", "dlah_bound_steps", "propagation_load", "propagation",
           "pipeline_speedup", "pipeline_efficiency", "pilot_extrapolation", "loop_time_variance",
           "global_variance_change", "ci_half_width", "mean_std_ci"]

#: two-sided normal quantiles the thesis' tables use (000 Tables 8.2–8.7; notes/000 R15)
Z95 = 1.96
Z90 = 1.64485


def _ceil_log2_arg(m: float, c: float) -> float:
    """⌈log2((m−1)(1−c)/(2c))⌉ (±inf at the ends), read with a 1e-9 slack so that an argument that is
    a power of two in exact arithmetic (m = 7, c = 0.6 gives 2.0000000000000004) is not rounded up."""
    arg = (m - 1) * (1 - c) / (2 * c) if c > 0 else math.inf
    if arg <= 0 or math.isinf(arg):
        return -math.inf if arg <= 0 else math.inf
    return math.ceil(math.log2(arg) - 1e-9)


def thesis_bound_steps(m: float, c: float, n_nodes: int) -> int:
    """Theorem 7-4 as printed (000 §7.4, eq 7.19): Steps = ⌈log2((m−1)(1−c)/(2c))⌉, at least 0, and
    *n_nodes* (P) once it reaches P. *m*: max/min workload ratio; *c*: threshold ratio."""
    b = _ceil_log2_arg(m, c)
    return n_nodes if b >= n_nodes else int(max(0, b))


def dlah_bound_steps(m: float, c: float, n_nodes: int) -> int:
    """Theorem 7-4 corrected (notes/000 §6.3, errata 12): a line of P nodes allows at most P − 1
    pairwise steps, and the first step happens whenever m > 1 + c. Equals :func:`propagation`'s count."""
    b = _ceil_log2_arg(m, c)
    return int(min(n_nodes - 1, max(b, 1 if m > 1 + c else 0, 0)))


def propagation_load(m: float, i: int, base_load: float = 1.0) -> float:
    """Eq 7.17: the load of the front pair after i pairwise averages, (L/2^i)(m − 1 + 2^i)."""
    return base_load / 2**i * (m - 1 + 2**i)


def propagation(m: float, c: float, n_nodes: int, base_load: float = 1.0) -> list[float]:
    """The idealised linear array of §7.4 (Fig 7.3): node 0 holds m·L, the others L, loop time ∝ load.
    The front node, while its load exceeds (1 + c)× the mean load of its neighbours, averages with the
    next node, which becomes the front. Returns the front load after each step (len = number of steps).
    """
    loads = [m * base_load] + [base_load] * (n_nodes - 1)
    out = []
    for k in range(n_nodes - 1):
        nbrs = [loads[j] for j in (k - 1, k + 1) if 0 <= j < n_nodes]
        if not loads[k] > (1 + c) * sum(nbrs) / len(nbrs):
            break
        loads[k] = loads[k + 1] = (loads[k] + loads[k + 1]) / 2
        out.append(loads[k])
    return out


def pipeline_speedup(n_nodes: int, t_comp: float, t_comm: float, n_iters: int | None = None) -> float:
    """Eq 5.2, S = L·P / ((L + P − 1)(1 + T_comm/T_comp)) for L = *n_iters* pipeline instances; with
    *n_iters* None, its L ≫ P limit eq 5.3, P / (1 + T_comm/T_comp) (000 §5.1.4.2)."""
    g = 1 + t_comm / t_comp
    if n_iters is None:
        return n_nodes / g
    return n_iters * n_nodes / ((n_iters + n_nodes - 1) * g)


def pipeline_efficiency(n_nodes: int, t_comp: float, t_comm: float, n_iters: int | None = None) -> float:
    """Eq 5.4: speedup over P."""
    return pipeline_speedup(n_nodes, t_comp, t_comm, n_iters) / n_nodes


def pilot_extrapolation(pilot_time: float, pilot_side: float, pilot_iters: float, side: float, iters: float,
                        dims: int = 3) -> float:
    """000 §5.1's estimate from a pilot run: time ∝ (grid side)^dims · iterations (per node; P is
    ignored because iterations ≫ P). 3254 s for 18³, 5000 iterations → 32082 s for 66³, 1000."""
    return pilot_time * (side / pilot_side) ** dims * (iters / pilot_iters)


def loop_time_variance(times: Sequence[float]) -> float:
    """Eq 7.2: the (population) variance of loop times, 000's imbalance measure."""
    m = sum(times) / len(times)
    return sum((t - m) ** 2 for t in times) / len(times)


def global_variance_change(local_change: float, n_domain: int, n_nodes: int) -> float:
    """Eq 7.8: a load exchange inside a domain of N_D nodes that conserves its total load changes the
    global variance by N_D/P times the change of the domain's own variance (Theorem 7-2)."""
    return n_domain / n_nodes * local_change


def ci_half_width(std: float, n: int, z: float = Z95) -> float:
    """Normal-approximation confidence half-width z·s/√n (000 Tables 8.2–8.7)."""
    return z * std / math.sqrt(n)


def mean_std_ci(samples: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """(mean, sample standard deviation (n − 1), half-width z·s/√n) of *samples*."""
    n = len(samples)
    mean = sum(samples) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1)) if n > 1 else 0.0
    return mean, std, ci_half_width(std, n, z)
