"""003 Chapter 3's Observations 3.1–3.7 and §6.3.2.2's loaded cluster, run on the stream engine (rows of
``dlbkit reproduce nezha``).

**The reading** (stated before running; the figures behind the observations carry no numbers, so
every row is a shape with a criterion of ours). "Old" is the supermarket model's two choices
(``power-of-d``, d = 2 with replacement); "improved" is Algorithm 3.1 (``nezha`` with its defaults:
d = 2 with replacement, adaptive threshold mean + 1·std, floor 1). Servers: n identical single-slot
nodes of speed 1 (the supermarket model's), FIFO, exponential demand of mean 1, Poisson arrivals at λ
per node, exact information unless said; the source's n and μ are not given (note §3.1): n ∈ {8, 16,
32, 64} (the seed's cluster had 8 nodes), μ = 1. Queue lengths are the engine's: ``queue_mean``
(time average per node after a 10% warm-up), ``queue_max`` (most tasks any node held), and
``queue_maxdiff`` (largest max − min over 200 snapshots), the seed's Mean, Max and Max_Diff. A run
lasts about :data:`HORIZON` seconds (λ·n·HORIZON jobs) so that runs of every size see the same time;
results are means over :data:`SEEDS` seeds, the two algorithms on the same seeds (common arrivals and
demands).

Criteria (each row says which it is):

* 3.1 (Fig. 7, λ = 0.9): the improved algorithm's mean, max and max-difference are each at most the
  old's, at every n (mean strictly lower).
* 3.2 (Figs 8–11): the improved algorithm's mean queue varies less across n than the old's (range over
  n divided by the mean: improved ≤ old) at each λ ∈ {0.5, 0.8, 0.9}; and from λ = 0.8 its maximum queue
  is size-insensitive: range over n ≤ 1 task, while the old's max grows with n (n = 64 above n = 8).
* 3.3 (Figs 8–9): raising λ from 0.5 to 0.8 to 0.9 raises every queue length (mean strictly; max and
  max-difference not lower) for both, at every n.
* 3.4 (Figs 12–13): the seed found both better with non-uniform rates {0.5, 0.5, 0.5, 0.9, 0.9, 1.2,
  1.2, 1.2} than with uniform 0.8625. Both rules here ignore the origin (they sample uniformly,
  wherever the task arrived), so the merged arrivals are the same Poisson stream either way and we
  expect no difference (our prediction, within ±5%, is asserted in the tests). The row asserts the
  seed's claim itself (non-uniform mean queue lower), so our prediction makes it an honest miss; it
  was a reported row until a review pointed out that the seed's claim has a verdict here.
* 3.5 (Fig. 14): both insensitive to the updating latency: each rule's mean queue within 15% of its
  exact-information value at n = 16, λ = 0.9 (the note's "< 10–15%"); and the old at most the improved
  at the longest latency (the seed: "slightly better"). Two readings of "latency", the same criterion
  for both. (a) Gossiped loads (push, one peer, period :data:`LATENCY_PERIODS`): written first, when
  the Chapter 3 simulator's lagged copy was not yet an information model here. (b) That lagged copy
  itself, the ``monitored`` model (a monitor copies the true loads every 0.01 s; every node sees the
  copy :data:`MONITOR_LAGS` seconds later): the seed's own model of the latency (§3.4: a real and a
  monitored workload array, "an extra thread" injecting the lag), and so the more faithful reading.
  Reading (b) was added for that fidelity, with the criterion unchanged, before its result was known
  (a trial run on earlier code measured rises of up to 55% (old) and 86% (improved), within 8% only
  at 0.25 s; the rows print what this code measures). Reading (a)'s rows are kept.
* 3.6 (Fig. 15): from k over-loaded queues (k ∈ {1, 2, 4} nodes holding :data:`OVERLOAD` tasks of work
  1 each, the rest empty; λ = 0.4 so that n − k nodes can take all arrivals), the convergence time (max
  − min ≤ :data:`CONVERGED` tasks) of the improved algorithm is at most the old's at every (n, k), n ∈
  {8, 16, 32}, and about constant: its largest over its smallest ≤ 1.10 over the nine; the old's grows
  with k at n = 8 and falls with n at k = 4 (strictly). Why we expect it: the window keeps an
  over-loaded node out, so it drains at rate 1 whatever n and k; the old sends one a task when both
  choices are over-loaded, (k/n)² of the arrivals, so it drains at 1 − λk/n.
* 3.7 (Fig. 16): the adaptive threshold lets d = 1 reach the d ≥ 2 level: at λ = 0.9, n = 32, the
  improved rule with d = 1 has a mean queue at most 1.10 × the old's with d = 2, and at most half the
  old's with d = 1 (random placement, λ/(1 − λ) = 9). Fig. 17 (d = 1 lacks the scalability of d ≥ 2):
  the improved rule's mean queue with d = 1 and with d = 2 across n, reported.

**§6.3.2.2, the loaded cluster**, now on the engine (it replaces the decision-only reading of
``nezha.py``, which could neither start with loads nor share a processor): 8 nodes of 4 CPUs (speed 1,
4 slots, processor sharing: the seed's machines time-share), 4 4 6 4 4 4 4 4 tasks already running at
time 0, eight tasks of 2700 work units submitted at node1 10 s apart, exact loads, no transfer time.
The background tasks' remaining work is not given: read as lasting the whole run (work
:data:`BACKGROUND` each, more than any of them can do in the run), and, reported only, as
exponential of mean 2700 (partly done standard tasks). Criteria: nezha places nothing on node3 in
each of :data:`LOADED_SEEDS` seeds; round-robin (PVM) from node1 places one task on every node, node3
included, whose task takes 2700 · 7/4 = 4725 s (exact); nezha's worst turnaround (mean over the
seeds) below round-robin's (the seed: 4015 against 4724). Average and worst turnarounds of both are
printed (the seed: round-robin 3400 and 4724, nezha 3542 and 4015).
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from dlbkit.families.stream.balancers import Nezha, PowerOfD, RandomPlacement, RoundRobinPlacement
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.stream.model.workload import Demand, Stream
from dlbkit.families.stream.sim.engine import simulate_stream
from dlbkit.face.reproduce import Claim, reported

__all__ = ["claims", "loaded_cluster", "observation_grid", "convergence_grid", "LOADED", "SIZES", "RATES"]

#: system sizes and per-node arrival rates of Observations 3.1–3.3 (λ from the seed's figures)
SIZES = (8, 16, 32, 64)
RATES = (0.5, 0.8, 0.9)
#: seconds each run lasts (λ·n·HORIZON jobs) and seeds per point
HORIZON = 400.0
SEEDS = 3
#: Observation 3.4's non-uniform rates (the seed's example) and their mean
NONUNIFORM = (0.5, 0.5, 0.5, 0.9, 0.9, 1.2, 1.2, 1.2)
#: Observation 3.5: gossip periods swept (seconds; mean service is 1 s)
LATENCY_PERIODS = (0.25, 1.0, 4.0)
#: Observation 3.5, the seed's own reading: lags of the monitored copy swept (seconds), and its copy period
MONITOR_LAGS, MONITOR_PERIOD = (0.25, 1.0, 4.0), 0.01
#: Observation 3.6: tasks on each over-loaded node at the start, the convergence threshold, λ, sizes, counts
OVERLOAD, CONVERGED, CONV_RATE = 40, 3.0, 0.4
CONV_SIZES, CONV_K, CONV_SEEDS = (8, 16, 32), (1, 2, 4), 10

#: §6.3.2.2: tasks on each node (4-way SMPs) before the eight arrive; node3 (index 2) loaded
LOADED = (4, 4, 6, 4, 4, 4, 4, 4)
CPUS, STANDARD, ARRIVALS, GAP = 4, 2700.0, 8, 10.0
#: the background tasks' work when they last the whole run (a node of 7 tasks on 4 CPUs gives each 4/7
#: of a CPU: in the ~4800 s of the new tasks' runs one does at most ~2750 units of 20000)
BACKGROUND = 20_000.0
LOADED_SEEDS = 200


def _old():
    return PowerOfD(d=2, replace=True)


def _improved(**kw):
    return Nezha(**kw)


def run_queues(n: int, lam, balancer, seed: int, horizon: float = HORIZON, info=None) -> dict:
    """One run of the supermarket servers: queue_mean, queue_max, queue_maxdiff."""
    rates = lam if not isinstance(lam, tuple) else tuple(lam[i % len(lam)] for i in range(n))
    total = lam * n if not isinstance(lam, tuple) else sum(rates)
    w = Stream(rates=rates, jobs=max(100, int(total * horizon)))
    tr = simulate_stream(n, w, balancer, seed=seed, info=info)
    q = tr.series["queue"]
    return {"mean": tr.meta["queue_mean"], "max": float(tr.series["queue_max"].max()),
            "maxdiff": float((q.max(axis=1) - q.min(axis=1)).max())}


def _mean_over_seeds(n, lam, make, seeds, horizon=HORIZON, info=None) -> dict:
    runs = [run_queues(n, lam, make(), seed, horizon, info) for seed in range(seeds)]
    return {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}


def observation_grid(sizes=SIZES, rates=RATES, seeds=SEEDS, horizon=HORIZON) -> dict:
    """(rule, λ, n) -> mean over seeds of queue_mean, queue_max, queue_maxdiff; rule "old" or "improved"."""
    out = {}
    for lam in rates:
        for n in sizes:
            out["old", lam, n] = _mean_over_seeds(n, lam, _old, seeds, horizon)
            out["improved", lam, n] = _mean_over_seeds(n, lam, _improved, seeds, horizon)
    return out


def convergence(n: int, k: int, balancer, seed: int, lam: float = CONV_RATE) -> float:
    """Observation 3.6's run: k of n single-slot nodes hold OVERLOAD tasks of work 1 at time 0; the time
    until max − min ≤ CONVERGED."""
    w = Stream(rates=lam, jobs=int(lam * n * 150), initial=[OVERLOAD] * k + [0] * (n - k),
               initial_demand=Demand("deterministic", 1.0))
    return simulate_stream(n, w, balancer, seed=seed, samples=0, converge_maxdiff=CONVERGED).meta["convergence_time"]


def convergence_grid(sizes=CONV_SIZES, ks=CONV_K, seeds=CONV_SEEDS) -> dict:
    """(rule, n, k) -> mean convergence time over seeds."""
    out = {}
    for n in sizes:
        for k in ks:
            for rule, make in (("old", _old), ("improved", _improved)):
                out[rule, n, k] = float(np.mean([convergence(n, k, make(), s) for s in range(seeds)]))
    return out


def _spread(vals) -> float:
    vals = list(vals)
    return (max(vals) - min(vals)) / float(np.mean(vals))


def _fmt(d: dict, keys) -> str:
    return " ".join(f"{d[k]:.2f}" for k in keys)


def _observations_3_1_to_3_3(grid: dict, sizes=SIZES, rates=RATES) -> list[Claim]:
    out = []
    imp = {m: [grid["improved", 0.9, n][m] for n in sizes] for m in ("mean", "max", "maxdiff")}
    old = {m: [grid["old", 0.9, n][m] for n in sizes] for m in ("mean", "max", "maxdiff")}
    ok = (all(a < b for a, b in zip(imp["mean"], old["mean"]))
          and all(a <= b for m in ("max", "maxdiff") for a, b in zip(imp[m], old[m])))
    out.append(Claim(f"Observation 3.1 (Fig. 7), λ = 0.9, n = {' '.join(map(str, sizes))}: queue lengths "
                     "improved (nezha) vs old (power-of-d, d = 2) [mean | max | max-difference per n]",
                     "improved shorter: mean, max and max-difference",
                     "improved " + " | ".join(" ".join(f"{x:.2f}" for x in imp[m]) for m in imp)
                     + "; old " + " | ".join(" ".join(f"{x:.2f}" for x in old[m]) for m in old),
                     "improved ≤ old at every n for all three, mean strictly (criterion stated before running)", ok))
    for lam in rates:
        si = _spread(grid["improved", lam, n]["mean"] for n in sizes)
        so = _spread(grid["old", lam, n]["mean"] for n in sizes)
        out.append(Claim(f"Observation 3.2 (Figs 8–9), λ = {lam}: the improved mean queue is less size-sensitive "
                         "than the old [range over n / mean]", "improved size-insensitive, old size-sensitive",
                         f"improved {si:.3f}, old {so:.3f}", "improved ≤ old (criterion stated before running)",
                         si <= so))
    for lam in (x for x in rates if x >= 0.8):
        mi = [grid["improved", lam, n]["max"] for n in sizes]
        mo = [grid["old", lam, n]["max"] for n in sizes]
        ok = max(mi) - min(mi) <= 1.0 and mo[-1] > mo[0]
        out.append(Claim(f"Observation 3.2–3.3 (Figs 10–11), λ = {lam}: maximum queue over n = "
                         f"{' '.join(map(str, sizes))} (the improved one's limiting feature from λ = 0.8)",
                         "improved size-insensitive, old grows with n",
                         f"improved {' '.join(f'{x:.2f}' for x in mi)}; old {' '.join(f'{x:.2f}' for x in mo)}",
                         "improved's range over n ≤ 1 task and old's max at the largest n above the smallest's "
                         "(criterion stated before running)", ok))
    bad = []
    for rule in ("old", "improved"):
        for n in sizes:
            seq = [grid[rule, lam, n] for lam in rates]
            for a, b in zip(seq, seq[1:]):
                if not (b["mean"] > a["mean"] and b["max"] >= a["max"] and b["maxdiff"] >= a["maxdiff"]):
                    bad.append(f"{rule} n={n}")
    out.append(Claim(f"Observation 3.3 (Figs 8–9): raising λ ({' → '.join(map(str, rates))}) raises mean, max and "
                     "max-difference for both rules at every n", "all rise",
                     "all rise" if not bad else "not at " + ", ".join(sorted(set(bad))),
                     "mean strictly higher, max and max-difference not lower, at each step (criterion stated "
                     "before running)", not bad))
    return out


def _observation_3_4(seeds=SEEDS) -> list[Claim]:
    out = []
    lam = float(np.mean(NONUNIFORM))
    for rule, make in (("old", _old), ("improved", _improved)):
        uni = _mean_over_seeds(8, lam, make, seeds)
        non = _mean_over_seeds(8, NONUNIFORM, make, seeds)
        out.append(Claim(f"Observation 3.4 (Figs 12–13), n = 8, {rule}: mean | max | max-difference with uniform "
                         f"λ = {lam} vs the seed's non-uniform rates", "non-uniform better",
                         f"uniform {uni['mean']:.3f} | {uni['max']:.2f} | {uni['maxdiff']:.2f}; non-uniform "
                         f"{non['mean']:.3f} | {non['max']:.2f} | {non['maxdiff']:.2f}",
                         "the seed's claim: non-uniform mean queue lower than uniform's (we predicted equal: both "
                         "rules sample uniformly wherever a task arrives, so the merged arrivals are one Poisson "
                         "stream either way)", non["mean"] < uni["mean"]))
    return out


def _observation_3_5(seeds=SEEDS, readings=("gossip", "monitored")) -> list[Claim]:
    """Observation 3.5's rows: per reading (``"gossip"``, ``"monitored"``), one row per rule and the
    old-versus-improved row at the longest latency; the exact-information base is run once per rule."""
    base = {rule: _mean_over_seeds(16, 0.9, make, seeds)["mean"] for rule, make in (("old", _old),
                                                                                   ("improved", _improved))}
    out = []
    for reading in readings:
        if reading == "gossip":
            sweep, infos = LATENCY_PERIODS, [{"model": "gossip", "period": p} for p in LATENCY_PERIODS]
            how, longest = f"gossip every {', '.join(f'{p:g}' for p in sweep)} s", "period"
        else:
            sweep = MONITOR_LAGS
            infos = [{"model": "monitored", "lag": g, "period": MONITOR_PERIOD} for g in MONITOR_LAGS]
            how = (f"the monitored copy (every {MONITOR_PERIOD:g} s) seen {', '.join(f'{g:g}' for g in sweep)} s "
                   "late (the seed's model)")
            longest = "lag"
        res = {}
        for rule, make in (("old", _old), ("improved", _improved)):
            res[rule] = [base[rule]] + [_mean_over_seeds(16, 0.9, make, seeds, info=i)["mean"] for i in infos]
            worst = max(abs(x / base[rule] - 1) for x in res[rule][1:])
            out.append(Claim(f"Observation 3.5 (Fig. 14), n = 16, λ = 0.9, {rule}: mean queue with exact loads and "
                             f"with {how}", "insensitive to the updating latency",
                             " ".join(f"{x:.3f}" for x in res[rule]) + f" (largest change {100 * worst:.1f}%)",
                             "each within ±15% of exact (criterion stated before running)", worst <= 0.15))
        tail = "" if reading == "gossip" else ", monitored"
        out.append(Claim(f"Observation 3.5: at the longest {longest} ({sweep[-1]:g} s{tail}) the old rule is at most "
                         "the improved one (the adaptive threshold reacts more to stale loads)", "old slightly better",
                         f"old {res['old'][-1]:.3f}, improved {res['improved'][-1]:.3f}",
                         "old ≤ improved (criterion stated before running)", res["old"][-1] <= res["improved"][-1]))
    return out


def _observation_3_6(grid: dict, sizes=CONV_SIZES, ks=CONV_K) -> list[Claim]:
    imp = [grid["improved", n, k] for n in sizes for k in ks]
    old = [grid["old", n, k] for n in sizes for k in ks]
    label = " ".join(f"({n},{k})" for n in sizes for k in ks)
    out = [Claim(f"Observation 3.6 (Fig. 15): convergence time (s) from k over-loaded queues of {OVERLOAD} tasks until "
                 f"max − min ≤ {CONVERGED:g}, λ = {CONV_RATE}, (n, k) = {label}: improved at most old everywhere",
                 "improved converges faster", f"improved {' '.join(f'{x:.1f}' for x in imp)}; old "
                 f"{' '.join(f'{x:.1f}' for x in old)}", "improved ≤ old at every (n, k) (criterion stated before "
                 "running)", all(a <= b for a, b in zip(imp, old))),
           Claim("Observation 3.6: the improved rule converges at the same speed across n and k",
                 "same speed across n and k", f"largest / smallest {max(imp) / min(imp):.3f}",
                 "≤ 1.10 (criterion stated before running)", max(imp) / min(imp) <= 1.10)]
    n0, k1 = sizes[0], ks[-1]
    by_k = [grid["old", n0, k] for k in ks]
    by_n = [grid["old", n, k1] for n in sizes]
    out.append(Claim(f"Observation 3.6: the old rule converges slower with more over-loaded queues (n = {n0}, k = "
                     f"{' '.join(map(str, ks))}) and at smaller n (k = {k1}, n = {' '.join(map(str, sizes))})",
                     "slower with more over-loaded, slower at small n",
                     f"by k {' '.join(f'{x:.1f}' for x in by_k)}; by n {' '.join(f'{x:.1f}' for x in by_n)}",
                     "strictly increasing in k, strictly decreasing in n (criterion stated before running)",
                     all(a < b for a, b in zip(by_k, by_k[1:])) and all(a > b for a, b in zip(by_n, by_n[1:]))))
    return out


def _observation_3_7(seeds=SEEDS) -> list[Claim]:
    imp1 = _mean_over_seeds(32, 0.9, lambda: _improved(d=1), seeds)["mean"]
    old2 = _mean_over_seeds(32, 0.9, _old, seeds)["mean"]
    old1 = _mean_over_seeds(32, 0.9, RandomPlacement, seeds)["mean"]
    out = [Claim("Observation 3.7 (Fig. 16), n = 32, λ = 0.9: the improved rule with d = 1 reaches the d = 2 level "
                 "[improved d=1 | old d=2 | old d=1]", "d = 1 reaches the d ≥ 2 queue level",
                 f"{imp1:.3f} | {old2:.3f} | {old1:.3f}", "improved d=1 ≤ 1.10 × old d=2 and ≤ 0.5 × old d=1 "
                 "(criterion stated before running)", imp1 <= 1.10 * old2 and imp1 <= 0.5 * old1)]
    d1 = [_mean_over_seeds(n, 0.9, lambda: _improved(d=1), seeds)["mean"] for n in SIZES]
    d2 = [_mean_over_seeds(n, 0.9, _improved, seeds)["mean"] for n in SIZES]
    out.append(reported(f"Observation 3.7 (Fig. 17), λ = 0.9: the improved rule's mean queue over n = "
                        f"{' '.join(map(str, SIZES))} with d = 1 and with d = 2", "d = 1 lacks d ≥ 2's scalability",
                        f"d=1 {' '.join(f'{x:.3f}' for x in d1)}; d=2 {' '.join(f'{x:.3f}' for x in d2)}",
                        "the figure's shape is not stated in a form we can test"))
    return out


# --- §6.3.2.2 ----------------------------------------------------------------------------------------------

def loaded_platform() -> Platform:
    return Platform([Node(f"node{i + 1}", speed=1.0, cores=CPUS) for i in range(len(LOADED))], Network(latency=0.0))


def loaded_cluster(balancer, seed: int = 0, background: Demand | None = None) -> tuple[list[int], list[float]]:
    """§6.3.2.2 on the engine: (node of each new task, its turnaround in s)."""
    rows = [(k * GAP, "node1", STANDARD) for k in range(ARRIVALS)]
    w = Stream(trace=rows, initial=LOADED, initial_demand=background or Demand("deterministic", BACKGROUND))
    tr = simulate_stream(loaded_platform(), w, balancer, seed=seed, service="ps", samples=0)
    iv = tr.intervals()
    mine = iv["first"] < ARRIVALS
    node = dict(zip(iv["first"][mine].tolist(), iv["node"][mine].tolist()))
    turnaround = (tr.series["job_done"] - tr.series["job_time"]).tolist()
    return [node[k] for k in range(ARRIVALS)], turnaround


def _loaded_cluster_claims(seeds: int = LOADED_SEEDS) -> list[Claim]:
    rr_nodes, rr_t = loaded_cluster(RoundRobinPlacement())
    runs = [loaded_cluster(Nezha(), s) for s in range(seeds)]
    on3 = [r[0].count(2) for r in runs]
    avg = [float(np.mean(r[1])) for r in runs]
    worst = [max(r[1]) for r in runs]
    per_node = [rr_nodes.count(j) for j in range(len(LOADED))]
    layout = Counter(runs[0][0])
    out = [Claim("§6.3.2.2 loaded cluster on the engine (8 four-CPU nodes with 4 4 6 4 4 4 4 4 tasks running, "
                 "processor sharing, eight 2700-s tasks submitted at node1 10 s apart, exact loads): tasks nezha "
                 "places on node3, "
                 f"summed over {seeds} seeds", "none (Nezha put no task on node3)",
                 f"{sum(on3)} (in {sum(1 for x in on3 if x)} of {seeds} seeds)",
                 "0 in every seed (criterion stated before running)", sum(on3) == 0),
           Claim("§6.3.2.2 loaded cluster on the engine: round-robin (PVM) from node1 places one task on every node; "
                 "node3's takes 2700 · 7/4 s", "one on node3, 4724 s", f"{per_node}, node3's {rr_t[2]:.1f} s",
                 "exact: one per node, 4725 s ± 1e-6", per_node == [1] * 8 and abs(rr_t[2] - 4725.0) <= 1e-6),
           Claim("§6.3.2.2 loaded cluster: nezha's worst turnaround below round-robin's (mean over seeds)",
                 "4015 against 4724", f"{np.mean(worst):.0f} against {max(rr_t):.0f}",
                 "nezha < round-robin (criterion stated before running)", np.mean(worst) < max(rr_t)),
           reported("§6.3.2.2 loaded cluster, round-robin (PVM): average and worst turnaround (s), background tasks "
                    "lasting the run", "3400 average, 4724 worst (node3)",
                    f"{np.mean(rr_t):.0f} average, {max(rr_t):.0f} worst",
                    "in the seed the background tasks end during the run, so its times on the 5-task nodes are lower"),
           reported(f"§6.3.2.2 loaded cluster, nezha: average and worst turnaround (s), mean over {seeds} seeds "
                    "[seed 0's loads after placement]", "3542 average, 4015 worst",
                    f"{np.mean(avg):.0f} average, {np.mean(worst):.0f} worst (largest {max(worst):.0f}) "
                    f"[{' '.join(str(LOADED[j] + layout[j]) for j in range(len(LOADED)))}]",
                    "as in the seed, nezha trades a worse average for a better worst case")]
    bg = Demand("exponential", STANDARD)
    rr_e = [loaded_cluster(RoundRobinPlacement(), s, bg)[1] for s in range(20)]
    nz_e = [loaded_cluster(Nezha(), s, bg)[1] for s in range(20)]
    out.append(reported("§6.3.2.2 loaded cluster with the background tasks' remaining work exponential of mean 2700 "
                        "(partly done standard tasks; 20 seeds): average and worst turnaround (s), round-robin | nezha",
                        "3400, 4724 | 3542, 4015", f"{np.mean([np.mean(t) for t in rr_e]):.0f}, "
                        f"{np.mean([max(t) for t in rr_e]):.0f} | {np.mean([np.mean(t) for t in nz_e]):.0f}, "
                        f"{np.mean([max(t) for t in nz_e]):.0f}",
                        "a second reading of work the seed does not give"))
    return out


def claims() -> list[Claim]:
    grid = observation_grid()
    return (_loaded_cluster_claims() + _observations_3_1_to_3_3(grid) + _observation_3_4() + _observation_3_5()
            + _observation_3_6(convergence_grid()) + _observation_3_7())


if __name__ == "__main__":  # pragma: no cover
    from dlbkit.face.reproduce import format_claims
    print(format_claims(claims()))
