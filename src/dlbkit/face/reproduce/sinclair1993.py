"""Reproduction of Sinclair (002, 1993): the ranked targets R1–R11 of notes/002_sinclair.md §13.

``dlbkit reproduce sinclair1993 [--json]`` prints them; ``python -m dlbkit.face.reproduce.sinclair1993`` too.
Built so far: the task-graph workload, the thesis's cost model in the graph evaluator
(:mod:`dlbkit.families.graph.sim.static`), the Max (k-1) Sum balancer, the worst-case formulas
(:mod:`dlbkit.families.graph.model.bounds`), the heuristic mappers and the MILP (R9, reported: it is
qualitative), simulated annealing (R7), tabu search, Pseudo-Dynamic load balancing (R3 and R8
asserted; R8 misses at 4 of 7 node counts), R10 (PD, SA and tabu on surrogates) and R11 (Max (k-1) Sum
against linear clustering), both reported (``ok`` null: the note's expectations are qualitative).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from dlbkit.families.graph.balancers.max_k1_sum import max_k1_sum, symmetric_comm
from dlbkit.balancers.registry import make
from dlbkit.families.graph.model.bounds import optimal_makespan, pd_makespan, pd_makespan_uniform, ratio_limit, worst_case_ratio
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.generate import atmospheric, in_tree, sinclair_equal5, sinclair_kmeans9
from dlbkit.families.graph.sim.static import Evaluator, simulate_graph
from dlbkit.errors import ConfigError
from dlbkit.face.reproduce import Claim, format_claims, reported

__all__ = ["claims", "brute_force_two_nodes", "subtree_allocation"]

EXACT = 1e-9  # "exact": sums of floats against fractions
PRINTED = 5e-5  # a value printed with 4 decimals
NODES = range(2, 9)  # Table 4: 2..8 bus nodes
SA_ROW = (59, 50, 38, 37, 37, 37, 37)  # Table 4, simulated annealing
PD_ROW = (63, 57, 38, 40, 40, 40, 37)  # Table 4, pseudo-dynamic
#: the note's §10.5 table: (m, n) → R^PD at a = 0.1, 0.5, 1, 2
RATIO_TABLE = {(2, 7): (1.0488, 1.2222, 1.4000, 1.6667), (2, 31): (1.0870, 1.4242, 1.8235, 2.5556),
               (3, 13): (1.0769, 1.3333, 1.5714, 1.8889), (4, 21): (1.0952, 1.4000, 1.6667, 2.0000),
               (4, 341): (1.1460, 1.7200, 2.4157, 3.7391), (8, 73): (1.1308, 1.5185, 1.8235, 2.1667),
               (8, 4681): (1.1742, 1.8668, 2.7234, 4.4067)}
#: §10.5 cross-check grid: m, k, (l, c)
TREE_CASES = [(m, k, lc) for m in (2, 3, 4) for k in (3, 4, 5) for lc in ((1, 1), (2, 1), (1, 3), (5, 2))]
#: R9's effort per node count: HiGHS's root node (presolve, root LP, cuts, heuristics), no branching.
#: A node limit, not a time limit, so that the row is the same on every run: the former 5-second limit
#: reached about this far on this machine, and its row changed with the machine's load. (The thesis's
#: Sciconic took 25 min to 4 h per row; the note's HiGHS run took 60 s.)
MILP_NODES = 1
#: a wall-clock cap on top, far above the root's few seconds; a node count it cuts short shows None
MILP_SECONDS = 600.0
#: R7: the annealing mapper with its defaults (002 §6.1.2's parameters; our stop rule) and this seed
SA_SEED = 0


def _names(g, clusters):
    return [sorted(g.ids[t] if t < g.n_tasks else "φ" for t in cl) for cl in clusters]


def r1() -> list[Claim]:
    g = sinclair_kmeans9()
    loads = [g.weight(i) for i in range(9)]
    clusters, rounds = max_k1_sum(symmetric_comm(g, 9), loads, 3, 3, "load")
    s1 = {g.ids[j]: s for j, (s, _) in rounds[0].items()}
    s2 = {g.ids[j]: s for j, (s, _) in rounds[1].items()}
    want1 = {"a": Fraction(41, 3), "b": Fraction(13, 3), "c": Fraction(14, 3), "d": Fraction(16, 3),
             "e": Fraction(1, 3), "f": Fraction(25, 3), "g": Fraction(7, 3), "h": Fraction(10, 3), "i": Fraction(35, 3)}
    want2 = {"b": Fraction(11, 3), "c": Fraction(14, 3), "e": Fraction(2, 3), "f": Fraction(25, 3),
             "g": Fraction(13, 3), "h": Fraction(8, 3)}
    alloc = _names(g, clusters)
    return [
        Claim("R1 Max (k-1) Sum, §3.5.2 9-task example (note App. B): allocation", [["a", "d", "i"], ["b", "f", "g"],
              ["c", "e", "h"]], alloc, "exact", alloc == [["a", "d", "i"], ["b", "f", "g"], ["c", "e", "h"]]),
        Claim("R1 round-1 S_j of every task (g: erratum 2.6666 → 7/3)", {k: round(float(v), 4) for k, v in want1.items()},
              {k: round(v, 4) for k, v in s1.items()}, f"exact (|ours − fraction| ≤ {EXACT:g})",
              s1.keys() == want1.keys() and all(abs(s1[k] - float(v)) <= EXACT for k, v in want1.items())),
        Claim("R1 round-2 S_j (e: erratum 0.3333 → 2/3)", {k: round(float(v), 4) for k, v in want2.items()},
              {k: round(v, 4) for k, v in s2.items()}, f"exact (|ours − fraction| ≤ {EXACT:g})",
              s2.keys() == want2.keys() and all(abs(s2[k] - float(v)) <= EXACT for k, v in want2.items())),
    ]


def r2() -> Claim:
    g = sinclair_equal5()
    clusters, _ = max_k1_sum(symmetric_comm(g, 6), [1.0] * 5 + [0.0], 3, 2, "equal")
    alloc = _names(g, clusters)
    want = [["a", "d"], ["c", "e"], ["b", "φ"]]
    return Claim("R2 Max (k-1) Sum, §3.4.1 equal-load example (inertia tie-break)", want, alloc, "exact", alloc == want)


def r4() -> list[Claim]:
    diffs = [abs(pd_makespan(m, k, [lv] * k, [cv] * k) - pd_makespan_uniform(m, k, lv, cv)) /
             pd_makespan_uniform(m, k, lv, cv) for m, k, (lv, cv) in TREE_CASES]
    table = {f"m={m},n={n}": [round(worst_case_ratio(n, m, 1.0, a), 4) for a in (0.1, 0.5, 1, 2)]
             for (m, n) in RATIO_TABLE}
    worst = max(abs(worst_case_ratio(n, m, 1.0, a) - v) for (m, n), vals in RATIO_TABLE.items()
                for a, v in zip((0.1, 0.5, 1, 2), vals))
    lim = [(m, a, worst_case_ratio(10 ** 6, m, 1.0, a), ratio_limit(m, a)) for m in (2, 4, 8) for a in (0.5, 1, 2)]
    lim_err = max(abs(r - x) / x for _, _, r, x in lim)
    return [
        Claim("R4 §7.4 closed-form C^PD equals the §7.1 level sum (36 trees of §10.5)", 0.0, max(diffs),
              "relative difference ≤ 1e-9", max(diffs) <= 1e-9),
        Claim("R4 R^PD table of the note's §10.5 (a = 0.1, 0.5, 1, 2)", {f"m={m},n={n}": list(v) for (m, n), v in
              RATIO_TABLE.items()}, table, f"each within {PRINTED:g} (4 decimals printed)", worst <= PRINTED),
        Claim("R4 R^PD → 1 + 2a(m−1)/m as n → ∞ (n = 10⁶, m ∈ {2,4,8}, a ∈ {0.5,1,2})", "1 + 2a(m−1)/m",
              round(lim_err, 6), "relative difference ≤ 1e-4 (4 decimals, note §10.5)", lim_err <= 1e-4),
    ]


def subtree_allocation(g, m: int) -> list[int]:
    """One level-2 subtree per node, the root on node 0 (002 §7.2, Fig. 12) for :func:`in_tree` graphs."""
    root = g.n_tasks - 1
    a = [0] * g.n_tasks
    for i in reversed(g.topo):
        if i != root:
            parent = g.succs[i][0][0]
            a[i] = i - (root - m) if parent == root else a[parent]
    return a


def r5() -> list[Claim]:
    rr_bad, opt_bad, n_opt = [], [], 0
    for m, k, (lv, cv) in TREE_CASES:
        g = in_tree(m, k, l=lv, c=cv)
        ev = Evaluator(costs_for(g, m, "thesis"))
        cpd = pd_makespan(m, k, [lv] * k, [cv] * k)
        got = ev.makespan([i % m for i in range(g.n_tasks)])
        if got != cpd:
            rr_bad.append((m, k, lv, cv, got, cpd))
        lt = sum(m ** (i - 2) * lv for i in range(2, k + 1))
        if cv < lt:  # case (b): the subtree allocation is the optimum
            n_opt += 1
            got = ev.makespan(subtree_allocation(g, m))
            want = optimal_makespan(m, k, [lv] * k, [cv] * k)
            if got != want:
                opt_bad.append((m, k, lv, cv, got, want))
    ex = {}
    for m, k, lv, cv in ((3, 4, 1, 1), (4, 5, 5, 2)):
        g = in_tree(m, k, l=lv, c=cv)
        ev = Evaluator(costs_for(g, m, "thesis"))
        ex[f"m={m},k={k},l={lv},c={cv}"] = [ev.makespan([i % m for i in range(g.n_tasks)]),
                                             ev.makespan(subtree_allocation(g, m))]
    return [
        Claim("R5 thesis evaluator, round-robin on the worst-case in-tree = C^PD (36 cases of §10.5)", "36 equal",
              f"{36 - len(rr_bad)} equal" + (f"; differ: {rr_bad}" if rr_bad else ""), "exact", not rr_bad),
        Claim(f"R5 thesis evaluator, one subtree per node = C* case (b) ({n_opt} cases)", f"{n_opt} equal",
              f"{n_opt - len(opt_bad)} equal" + (f"; differ: {opt_bad}" if opt_bad else ""), "exact", not opt_bad),
        Claim("R5 the note's examples: [C^PD, C*]", {"m=3,k=4,l=1,c=1": [32, 16], "m=4,k=5,l=5,c=2": [688, 436]}, ex,
              "exact", ex == {"m=3,k=4,l=1,c=1": [32.0, 16.0], "m=4,k=5,l=5,c=2": [688.0, 436.0]}),
    ]


@lru_cache(maxsize=1)
def brute_force_two_nodes() -> tuple[float, tuple]:
    """The best of all 2¹⁷ allocations of the atmospheric graph to 2 bus nodes (task 1 on node 0),
    timed by the thesis evaluator: (makespan, allocation)."""
    g = atmospheric()
    ev = Evaluator(costs_for(g, 2, "thesis"))
    best, arg = float("inf"), None
    bits = [1 << b for b in range(g.n_tasks - 1)]
    for mask in range(1 << (g.n_tasks - 1)):
        a = [0] + [1 if mask & b else 0 for b in bits]
        v = ev.makespan(a)
        if v < best:
            best, arg = v, tuple(a)
    return best, arg


def r6_r7() -> list[Claim]:
    g = atmospheric()
    one = Evaluator(costs_for(g, 1, "thesis")).makespan([0] * g.n_tasks)
    two, _ = brute_force_two_nodes()
    sa = [simulate_graph(m, g, make("annealing"), cost_model="thesis", seed=SA_SEED).makespan for m in NODES]
    return [
        Claim("R6 atmospheric graph (note App. A.1), thesis evaluator: all tasks on 1 node = Σ l", 86, one, "exact",
              one == 86),
        Claim("R6 atmospheric graph: exhaustive 2-node optimum", 59, two, "exact (2¹⁷ allocations)", two == 59),
        Claim(f"R7 SA row (Table 4), 2–8 bus nodes: our annealing (002 §6.1.2 settings, seed {SA_SEED})",
              list(SA_ROW), sa, "exact for 2 nodes, ≤ +1 elsewhere (note §13)",
              sa[0] == SA_ROW[0] and all(o <= p + 1 for o, p in zip(sa[1:], SA_ROW[1:]))),
    ]


def r9() -> Claim:
    g = atmospheric()
    b = make("milp", {"model": "relaxed", "node_limit": MILP_NODES, "time_limit": MILP_SECONDS})
    ours = []
    for m in NODES:
        try:
            ours.append(simulate_graph(m, g, b, cost_model="thesis").makespan)
        except ConfigError:  # no integer solution within the limits
            ours.append(None)
    return reported(f"R9 relaxed non-symmetric MILP (C = 9.5), HiGHS's incumbent after {MILP_NODES} branch-and-bound "
                    "node(s) per node count, re-timed by the thesis evaluator (Table 4's relaxed row, 2–8 nodes)",
                    [73, 64, 42, 41, 42, 38, 40], ours,
                    "qualitative: the relaxation is not a bound, and a short search's incumbent is not the "
                    "thesis's hours-long one; None: no integer solution within the limits (the note's HiGHS run "
                    "at 60 s gave 63, 63, 40, 50, 41, 40, 41)")


#: 002 Fig. 7 (note §8.3): task → (holds, comp, prec, printed C_l row, printed C_c row); P = 14, L = 9, 4, 10, 14, 3
FIG7 = {"k": (1, 4, 79, [4, 4, 4, -4, 4], [-5, -10, -5, -8, -9]), "e": (0, 6, 76, [-1, 6, -2, -6, 6], [-4, -4, -4, -8, -4]),
        "h": (0, 4, 76, [4, 4, 4, -4, 4], [-4, -4, -2, -12, -8]), "i": (2, 3, 72, [3, 3, 3, -3, 3], [-1, -3, -3, -4, -6]),
        "J": (1, 15, 70, [-10, -5, -11, -15, -4], [-3, -5, -6, -3, -2]),
        "n": (1, 8, 69, [-3, 8, -4, -8, 8], [-8, -8, -10, -6, -8]), "o": (3, 5, 64, [5, 5, -1, -5, 5], [-4, -4, -2, -4, -4]),
        "q": (0, 6, 61, [-1, 6, -2, -6, 6], [-3, -3, -3, -3, -3])}


def r3() -> Claim:
    import numpy as np

    from dlbkit.families.graph.balancers.pd import choose, scores
    level, tasks = [9, 4, 10, 14, 3], list(FIG7)
    comp, prec = [FIG7[t][1] for t in tasks], [FIG7[t][2] for t in tasks]
    cl, cp, h = scores(comp, np.array([[c] * 5 for c in comp]), level, 14, prec, 61, [FIG7[t][4] for t in tasks])
    zero = [k for k, t in enumerate(tasks) if FIG7[t][0] == 0]
    r, j = choose(h[zero], [prec[k] for k in zero], level)
    got = f"{tasks[zero[r]]} → node {j + 1} (h = {h[zero[r], j]:g})"
    ok = (cl.tolist() == [FIG7[t][3] for t in tasks] and cp.tolist() == [p - 61 for p in prec]
          and got == "e → node 5 (h = 17)")
    return Claim("R3 PD heuristic h = C_l + C_c + C_p on the Fig. 7 GST (40 C_l, 8 C_p; e → node 5)",
                 "e → node 5 (h = 17)", got, "exact (every C_l and C_p equal)", ok)


def r8() -> Claim:
    """Reading (issue 13 and the note's §13): asserted, each of our PD's makespans ≤ 1.15 × Table 4's
    SA row, with pd's defaults (``p_rule = "avg_active"``, the text's reading of P, chosen as the
    default before this row was run); the note calls the target soft and offers "within 10% of the
    thesis after tuning" instead, which we do not take (it would tune PD to the row). The other reading
    of P (``max_load``, Fig. 7) is shown beside it, not asserted."""
    from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
    g = atmospheric()
    rows = {rule: [simulate_graph_dynamic(m, g, make("pd", {"p_rule": rule}), cost_model="thesis").makespan
                   for m in NODES] for rule in ("avg_active", "max_load")}
    within = {rule: [x <= PD_SOFT * s for x, s in zip(v, SA_ROW)] for rule, v in rows.items()}
    return Claim("R8 PD on the atmospheric graph (Table 4), our pd (defaults) on the dynamic engine, thesis cost "
                 "model, 2–8 bus nodes; max_load shown, not asserted", list(PD_ROW), rows,
                 f"each ≤ {PD_SOFT} × the SA row {list(SA_ROW)} (avg_active; within at "
                 + "; ".join(f"{k}: {sum(w)}/7" for k, w in within.items()) + " node counts); the note's §9.5 "
                 "naive PD was also −3% to +28% off: P, hold release, waiting and ties are unspecified in 002",
                 all(within["avg_active"]))


#: R10's surrogates for the thesis's missing graphs (note §9.3): Gaussian elimination of a 10 × 10 matrix
#: (54 tasks; the note: "N = 10 gives 54–55") for Table 7, a random layered DAG of 31 tasks for Table 6
R10_GRAPHS = (("gaussian_elimination", {"m": 10}), ("layered", {"n": 31, "width": 4, "seed": 0}))
#: R10: a PD allocation within this factor of SA's counts as "within ~15%" (002 §8.2: "less than 115%")
PD_SOFT = 1.15
#: R11: Table 1's node counts
R11_NODES = range(1, 11)


def _surrogate(name: str, kw: dict):
    from dlbkit.families.graph.model import generate as graph_gen
    return getattr(graph_gen, name)(**kw)


def r10() -> Claim:
    """Reading (note §9.2, §13): Tables 6–7 compare PD, SA and tabu on 2–8 bus nodes under the
    thesis's model; the graphs are lost, so surrogates (:data:`R10_GRAPHS`); our annealing and tabu
    with the thesis's settings (seed 0), our pd (defaults) on the dynamic engine. The note's
    expectation, qualitative: PD within ~15% of SA, tabu usually worse than SA. Reported: the three
    rows per graph, and at how many node counts PD ≤ 1.15 × SA and tabu > SA."""
    from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
    ours, counts = {}, []
    for name, kw in R10_GRAPHS:
        g = _surrogate(name, kw)
        sa = [simulate_graph(m, g, make("annealing"), cost_model="thesis", seed=SA_SEED).makespan for m in NODES]
        tabu = [simulate_graph(m, g, make("tabu"), cost_model="thesis", seed=SA_SEED).makespan for m in NODES]
        pd = [simulate_graph_dynamic(m, g, make("pd"), cost_model="thesis").makespan for m in NODES]
        ours[f"{g.name} ({g.n_tasks} tasks)"] = {"pd": [round(x, 2) for x in pd], "sa": [round(x, 2) for x in sa],
                                                 "tabu": [round(x, 2) for x in tabu],
                                                 "pd/sa": [round(x / y, 3) for x, y in zip(pd, sa)]}
        counts.append(f"{g.name}: PD ≤ {PD_SOFT:g} × SA at {sum(x <= PD_SOFT * y for x, y in zip(pd, sa))}/7, "
                      f"tabu > SA at {sum(x > y for x, y in zip(tabu, sa))}/7")
    return reported("R10 PD vs SA vs tabu (Tables 6–7) on surrogates, thesis cost model, 2–8 bus nodes",
                    "PD within ~15% of SA; tabu usually worse than SA (thesis: CV PD/SA 0.97–1.14, GE 0.92–1.15)",
                    ours, "qualitative (the thesis's graphs are lost; surrogates): " + "; ".join(counts))


def _max_busy(trace) -> float:
    """Table 1's metric: the largest total time a node spends on its tasks (under the thesis model a
    task's time includes its receiving and transmitting)."""
    busy: dict = {}
    for p, t0, t1 in zip(trace.node, trace.t_start, trace.t_end):
        busy[p] = busy.get(p, 0.0) + (t1 - t0)
    return max(busy.values())


def r11() -> Claim:
    """Reading (note §6, §13): Table 1 compares Max (k-1) Sum with chain-clustering heuristics +
    modulo allocation by the maximum node busy time, 1–10 nodes; the computer-vision graph is lost.
    Ours: our max-k1-sum (load variant) and our linear-clustering (Kim & Browne 1988, modulo
    allocation), the thesis's model on a bus, on the R10 31-task surrogate. Expected, qualitative:
    Max (k-1) Sum loses for small m (≤ 5 in Table 1) and wins for large m (≥ 6). Reported: both
    rows and the node counts where Max (k-1) Sum is lower."""
    g = _surrogate(*R10_GRAPHS[1])
    rows = {b: [round(_max_busy(simulate_graph(m, g, make(b), cost_model="thesis")), 2) for m in R11_NODES]
            for b in ("max-k1-sum", "linear-clustering")}
    wins = [m for m, x, y in zip(R11_NODES, rows["max-k1-sum"], rows["linear-clustering"]) if x < y]
    return reported(f"R11 Max (k-1) Sum vs linear clustering + modulo (Table 1's metric: max node busy time), "
                    f"{g.name} ({g.n_tasks} tasks), thesis cost model, 1–10 bus nodes",
                    "Max (k-1) Sum loses for m ≤ 5, wins for m ≥ 6 (Table 1)", rows,
                    f"qualitative (surrogate graph); Max (k-1) Sum lower at m = {wins or 'none'}")


def claims() -> list[Claim]:
    rows = r1() + [r2()]
    rows.append(r3())
    rows += r4() + r5() + r6_r7()
    rows.append(r8())
    rows.append(r9())
    rows.append(r10())
    rows.append(r11())
    return rows


if __name__ == "__main__":  # pragma: no cover
    print(format_claims(claims()))
