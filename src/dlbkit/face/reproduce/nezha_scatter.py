"""003 (Nezha) Chapter 4: the freshness of scattered load information, Tables 4, 5 and 9, on the
information layer's scattering models (``scatter-old``, ``scatter-4.2``, ``scatter-4.3``, ``gossip``).

Reading of the text (stated before running; 003 §4.3.3, §4.4.3 and its notes §3.2):

* **Loads.** Each node's workload index is a random integer 0–9; a node's index changes at random
  times, independently of the others, to a fresh uniform draw from 0–9 (which may equal the old one),
  on average every T_load-change. Time is counted in propagation periods (T_propagation = one send
  per node, the notes' reading of the ratio argument): Table 3 gives r_propagation/r_sampling = R and
  r_sampling/r_load-change = 2, so T_load-change = 2R periods (Set 1, R = 10: 4 s / 0.2 s = 20 ✓;
  Set 2, R = 7.5: 3 s / 0.2 s = 15 ✓; Set 3, R = 5: 10 periods, following Table 3's ratio where
  Table 2's 100000 µs would give 20). Discretised: at each period each index changes with
  probability 1/(2R) (geometric times of mean 2R periods).
* **Scattering.** l = N (the experiments' vector length), every node active unless stated, one send
  per node per period in synchronous rounds, each message delivered before the next period (the
  seed's nodes ran asynchronously over TCP; ours share one clock and a zero transfer time).
* **ε.** The layer's generic freshness (:mod:`dlbkit.info.base`): at every period, after that
  period's load changes and before its sends, the mean over ordered pairs (a, b) of distinct active
  nodes of (what b holds of a − a's index)², averaged over the periods of the run. The seed sampled
  every R periods (T_sampling); sampling every period estimates the same stationary mean with more
  samples. The runs last :data:`PERIODS` periods (the seed: about 2000 samples × R periods), the
  same load process (one seeded generator) for every model compared (common random numbers).
* **η** = 1 − ε_new/ε_old. Tables 4–5: new = Algorithm 4.2 (``scatter-4.2``), old = the old algorithm
  (``scatter-old``), same vector and read-out. "The timestamped merge" = ``gossip`` with Algorithm
  4.1's selection, fanout 1, pushing its whole timestamped table (freshest wins); push-pull reported.
  Table 9: N = 8, nodes n … 7 inactive for the whole run (they neither send nor keep), ε over the n
  active nodes; "improvement when Algorithm 4.3 is used" read as against the same algorithm without
  status adaptation, 1 − ε(``scatter-4.3``)/ε(``scatter-4.2``) (so 0 at n = 8, as printed).

Criteria (stated before running): Tables 4–5, in every configuration η(4.2 vs old) > 0 (the issue's
criterion) and, separately, η within ±10 percentage points of the printed value (a band around the
paper's number; the notes' own re-simulation found 6–18%); the timestamped gossip's ε below
Algorithm 4.2's in every configuration. Table 9, per rate: η(8) = 0 within ±0.005; η(4) ≥ 10%;
η never falls by more than 2 points as n falls (η(n) ≥ η(n + 1) − 0.02, the printed r = 5 row has
31.4 then 29.5); and every cell within ±10 points of the printed one. Absolute ε beside the paper's
(its indices are the same 0–9 integers, but its timing is the cluster's): reported.
"""

from __future__ import annotations

import numpy as np

from dlbkit.info import improvement, resolve
from dlbkit.face.reproduce import Claim, reported

__all__ = ["claims", "freshness", "PERIODS"]

#: propagation periods per run (2000 samples of the seed at R = 5 … 10 are 10 000–20 000 periods;
#: fewer here to keep the reproduction's time: η's seed-to-seed spread at this length is about ±0.01)
PERIODS = 6000
#: printed (ε_old, ε_new, η) per N (Table 4, R = 10) and per R (Table 5, N = 8); η per rate and n (Table 9)
TABLE4 = {4: (1.487223, 1.10403, 0.258), 6: (1.966987, 1.502258, 0.236), 8: (2.168318, 1.703574, 0.214)}
TABLE5 = {5: (4.056108, 3.41008, 0.159), 7.5: (2.886578, 2.168621, 0.249), 10: (2.168318, 1.703574, 0.214)}
TABLE9 = {10: {4: 0.307, 5: 0.252, 6: 0.121, 7: 0.078, 8: 0.0}, 5: {4: 0.295, 5: 0.314, 6: 0.143, 7: 0.042, 8: 0.0}}
GOSSIP = {"model": "gossip", "selection": "constrained", "fanout": 1, "period": 1.0}
BAND = 0.10


def freshness(model, n_nodes: int, ratio: float, periods: int = PERIODS, seed: int = 0, inactive=()) -> float:
    """ε of the information *model* (a spec for :func:`dlbkit.info.resolve`; its period is set to 1) on
    *n_nodes* nodes whose indices change every 2·*ratio* periods on average (module docstring)."""
    spec = dict(model) if isinstance(model, dict) else {"model": model}
    spec["period"] = 1.0
    if inactive:
        spec["inactive"] = tuple(inactive)
    m = resolve(spec)
    loads_rng = np.random.default_rng([seed, 1])
    loads = loads_rng.integers(10, size=n_nodes).astype(float)
    m.start(n_nodes, [[]] * n_nodes, loads.tolist(), np.random.default_rng([seed, 2]))
    p = 1.0 / (2.0 * ratio)
    for k in range(1, periods + 1):
        change = loads_rng.random(n_nodes) < p
        loads[change] = loads_rng.integers(10, size=int(change.sum()))
        for msg in m.round(float(k), loads):
            m.deliver(msg)
    return m.freshness_mean


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _eta_claims() -> list[Claim]:
    out = []
    configs = [(N, 10, TABLE4[N], "Table 4") for N in TABLE4] + [(8, R, TABLE5[R], "Table 5") for R in (5, 7.5)]
    for N, R, (e_old_p, e_new_p, eta_p), table in configs:
        e_old = freshness("scatter-old", N, R)
        e_new = freshness("scatter-4.2", N, R)
        e_ts = freshness(GOSSIP, N, R)
        eta = improvement(e_new, e_old)
        what = f"{table}, n = N = {N}, R = {R} (l = N, {PERIODS} periods)"
        out.append(Claim(f"{what}: η of Algorithm 4.2 over the old algorithm > 0", f"{_pct(eta_p)}", _pct(eta),
                         "η > 0 (criterion stated before running)", eta > 0))
        out.append(Claim(f"{what}: η of Algorithm 4.2 over the old algorithm, against the printed value", _pct(eta_p),
                         _pct(eta), f"within ±{100 * BAND:.0f} points (stated before running)",
                         abs(eta - eta_p) <= BAND))
        out.append(Claim(f"{what}: the timestamped merge (gossip, Algorithm 4.1's peers, whole table, freshest wins) "
                         "is fresher than Algorithm 4.2", "(not in the document)",
                         f"ε {e_ts:.3f} < {e_new:.3f} (η over old {_pct(improvement(e_ts, e_old))})",
                         "ε_timestamped < ε_4.2 (stated before running)", e_ts < e_new))
        out.append(reported(f"{what}: ε of the old algorithm and of Algorithm 4.2", f"{e_old_p:.3f}, {e_new_p:.3f}",
                            f"{e_old:.3f}, {e_new:.3f}", "absolute errors depend on the seed's timing and load "
                            "process, which the text leaves open (module docstring)"))
    e_old = freshness("scatter-old", 8, 10)
    e_pp = freshness({**GOSSIP, "pull": True}, 8, 10)
    out.append(reported("n = N = 8, R = 10: push-pull timestamped gossip (each push answered by the peer's table)",
                        "(not in the document)", f"ε {e_pp:.3f}, η over old {_pct(improvement(e_pp, e_old))}",
                        "ours: twice the messages of a push"))
    return out


def _adaptive_claims() -> list[Claim]:
    out = []
    for R, paper in TABLE9.items():
        eta, eps = {}, {}
        for n in sorted(paper):
            off = tuple(range(n, 8))
            eps[n] = (freshness("scatter-4.3", 8, R, inactive=off), freshness("scatter-4.2", 8, R, inactive=off))
            eta[n] = improvement(*eps[n])
        ns = sorted(paper)
        ours = [_pct(eta[n]) for n in ns]
        mono = all(eta[a] >= eta[b] - 0.02 for a, b in zip(ns, ns[1:]))
        shape = abs(eta[8]) <= 0.005 and eta[4] >= 0.10 and mono
        what = (f"Table 9, N = 8, n = 4 … 8 active, r = {R} ({PERIODS} periods): η of Algorithm 4.3 over "
                "Algorithm 4.2")
        out.append(Claim(f"{what}, shape: the gain grows as the active count falls",
                         [_pct(paper[n]) for n in ns], ours,
                         "η(8) = 0 ±0.005, η(4) ≥ 10%, η(n) ≥ η(n+1) − 2 points (stated before running)",
                         shape))
        worst = max(abs(eta[n] - paper[n]) for n in ns)
        out.append(Claim(f"{what}, every cell against the printed one", [_pct(paper[n]) for n in ns], ours,
                         f"each within ±{100 * BAND:.0f} points (largest gap {100 * worst:.1f})",
                         worst <= BAND))
        out.append(reported(f"Table 9, r = {R}: ε with Algorithm 4.3 / without, n = 4 … 8 (Fig. 24: flat with it, "
                            "growing as n falls without)", "(figure only)",
                            " ".join(f"{eps[n][0]:.2f}/{eps[n][1]:.2f}" for n in ns), "the figure has no numbers"))
    return out


def claims() -> list[Claim]:
    return _eta_claims() + _adaptive_claims()
