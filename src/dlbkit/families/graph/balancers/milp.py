"""MILP mapping with scipy.optimize.milp (HiGHS): an exact linearised makespan model, and the
thesis's relaxed non-symmetric formulation (002 §4)."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np

from dlbkit.errors import ConfigError, DlbkitWarning, caller_level
from dlbkit.params import Interval, Options
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.families.graph.balancers.heft import HEFT
from dlbkit.families.graph.model.evaluate import evaluate
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["MILP"]


class _Rows:
    """Sparse constraint rows lb ≤ A x ≤ ub, appended one at a time."""

    def __init__(self):
        self.r, self.c, self.v, self.lb, self.ub = [], [], [], [], []

    def add(self, coefs: dict, lb: float, ub: float) -> None:
        k = len(self.lb)
        for col, val in coefs.items():
            if val:
                self.r.append(k)
                self.c.append(col)
                self.v.append(val)
        self.lb.append(lb)
        self.ub.append(ub)

    def constraint(self, n_vars: int):
        from scipy.optimize import LinearConstraint
        from scipy.sparse import coo_array
        a = coo_array((self.v, (self.r, self.c)), shape=(len(self.lb), n_vars)).tocsr()
        return LinearConstraint(a, np.array(self.lb), np.array(self.ub))


def _or(res, name: str, default):
    """*res*'s field *name*, or *default* where scipy left it out or None (a search that found no plan)."""
    v = getattr(res, name, None)
    return default if v is None else v


def _ancestors(g) -> list[set]:
    anc: list[set] = [set() for _ in range(g.n_tasks)]
    for i in g.topo:
        for p, _ in g.preds[i]:
            anc[i] |= anc[p] | {p}
    return anc


@register
class MILP(MappingBalancer):
    """MILP: a mixed-integer model solved by HiGHS (``scipy.optimize.milp``), within a time limit.

    ``model="exact"`` (the note's §7.7 replacement for the thesis's relaxation): assignment binaries
    x_ip, start times s_i, makespan C. Precedence with the transfer linearised over processor pairs,
    s_j ≥ s_i + Σ_p w_ip x_ip + comm(p, q)(x_ip + x_jq − 1) for all p, q; one task at a time by a
    big-M disjunction for every pair of tasks not ordered by precedence (order binaries o_ij);
    C ≥ s_i + Σ_p w_ip x_ip; minimise C. It is exact for the **standard** cost model (processors free
    while data flies); the plan's order is the solution's start times. With identical processors the
    first task is fixed on processor 0 (symmetry). Size O(n²·m + e·m²) rows: small graphs only.

    ``model="relaxed"``: the thesis's "non-symmetric" relaxed formulation as solved with Sciconic
    (002 §4.2–4.3, eqs 4.22–4.36, the MGG constraint names ES, OT with EXISTS, ZB, WA, WB, ASS, SYM,
    DIAG, N1, NL, NU, SUMN): same-node binaries a_ij, representative binaries m_i, continuous y, z,
    w; objective C·Σy − Σw with the bounding constant C = *bcoeff* (default n/2 + 0.5, i.e. 9.5 for
    n = 18 as the thesis's data file). The clusters of a are numbered in task order onto processors
    0, 1, …; the re-timing is the evaluator's (the thesis's report writer). Not a bound (note §7.7).

    *time_limit* (seconds, wall clock), *node_limit* (branch-and-bound nodes, HiGHS's
    ``mip_max_nodes``; None: no limit) and *mip_rel_gap* go to HiGHS; ``plan.info`` reports the
    status, the objective, the dual bound, the gap and the nodes searched. A solve stopped by the time
    limit depends on the machine, the only decision in dlbkit that can (its plan is recorded in the
    trace); one stopped by the node limit does not, since HiGHS's branch and bound makes no decision
    on time: set *node_limit* where the same plan must come back (a reproduction).

    **Never worse than HEFT** (the exact model): a search stopped by a limit is compared with HEFT's
    list schedule on the same costs, and where HEFT's plan is shorter (or HiGHS found no plan in
    time) that plan is returned, with ``plan.info["incumbent"] = "heft"``, both makespans, the gap
    measured from it to HiGHS's dual bound, and a :class:`~dlbkit.errors.DlbkitWarning` saying so.
    This stands in for a warm start from HEFT's plan, which ``scipy.optimize.milp`` cannot take: the
    plan returned is the better of the two, though HiGHS's search did not start from HEFT's. A
    search that ended within *mip_rel_gap* is not compared (HEFT cannot beat it by more than the gap).
    The relaxed model is the thesis's formulation as it stands (not a makespan model): not compared.

    Helps: small graphs (the 18-task graph) where a proven optimum or a certified gap matters.
    Backfires: the model grows as n²·m; beyond a few dozen tasks the time limit decides.
    """

    name = "milp"
    source = "002 §4 (Sinclair 1993, relaxed non-symmetric MILP); the note's §7.7 exact linearisation"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its costs",
                        "every task placed once", "mixed-integer program (HiGHS branch and bound)")
    _parameter_constraints = {"model": [Options("exact", "relaxed")],
                              "time_limit": [Interval(Real, 0, None, closed="neither")],
                              # HiGHS keeps mip_max_nodes in a 32-bit int
                              "node_limit": [None, Interval(Integral, 1, 2**31 - 1, closed="both")],
                              "mip_rel_gap": [Interval(Real, 0, 1, closed="both")],
                              # HiGHS reads a cost of 1e20 or more as infinite (its infinite_cost)
                              "bcoeff": [None, Interval(Real, 0, 1e19, closed="right")]}

    def __init__(self, *, model: str = "exact", time_limit: float = 60.0, node_limit: int | None = None,
                 mip_rel_gap: float = 1e-4, bcoeff: float | None = None):
        self.model = model
        self.time_limit = time_limit
        self.node_limit = node_limit
        self.mip_rel_gap = mip_rel_gap
        self.bcoeff = bcoeff

    def check_graph(self, n_tasks: int, n_processors: int) -> None:
        if self.model == "relaxed" and self.bcoeff is not None and self.bcoeff < n_tasks / 2:
            # each w_ij is at most y_j / 2 (WA, WB), so C·Σy − Σw ≥ (C − n/2)·Σy: bounded from C = n/2 on,
            # and below it HiGHS finds the objective unbounded
            raise ConfigError(self.param_field("bcoeff"), self.bcoeff,
                              f"at least n/2 = {n_tasks}/2 for the relaxed model (below it the objective "
                              "C·Σy − Σw is unbounded), or omitted (n/2 + 0.5)")

    def map(self, view) -> Plan:
        self.check_graph(view.costs.graph.n_tasks, view.n_nodes)
        if self.model == "exact":
            return self._exact(view)
        return self._relaxed(view.costs)

    def _solve(self, c, rows, n_vars, integrality, lb, ub):
        from scipy.optimize import Bounds, milp
        options = {"time_limit": float(self.time_limit), "mip_rel_gap": float(self.mip_rel_gap)}
        if self.node_limit is not None:
            options["node_limit"] = int(self.node_limit)
        res = milp(c=c, constraints=rows.constraint(n_vars), integrality=integrality, bounds=Bounds(lb, ub),
                   options=options)
        stopped = None  # the limit that ended the search, if one did
        if res.status == 1:  # scipy: iteration or time limit reached
            stopped = "time_limit"
        elif self.node_limit is not None and "Solution limit reached" in res.message:
            # HiGHS ends a node-limited search with its status 16, which scipy does not name (its status 4)
            stopped = "node_limit"
        if res.x is None and stopped and self.model == "relaxed":
            raise ConfigError(self.param_field(stopped), getattr(self, stopped),
                              f"large enough for HiGHS to find a feasible plan ({res.message})")
        if res.x is None and not stopped:
            raise ConfigError(self.param_field("model"), self.model,
                              f"a model HiGHS solves on this graph (HiGHS: {res.message})")
        info = {"model": self.model, "status": int(res.status), "message": res.message,
                "objective": float(_or(res, "fun", math.nan)), "dual_bound": float(_or(res, "mip_dual_bound", math.nan)),
                "gap": float(_or(res, "mip_gap", np.nan)), "nodes": int(_or(res, "mip_node_count", -1)),
                "stopped_by": stopped, "optimal": res.status == 0}
        return res.x, info

    def _exact(self, view) -> Plan:
        costs = view.costs
        g = costs.graph
        n, m = g.n_tasks, costs.n_nodes
        w = costs.exec
        X = lambda i, p: i * m + p  # noqa: E731
        S = lambda i: n * m + i  # noqa: E731
        C = n * m + n
        anc = _ancestors(g)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if i not in anc[j] and j not in anc[i]]
        O = {pr: C + 1 + k for k, pr in enumerate(pairs)}
        n_vars = C + 1 + len(pairs)
        comm = [[costs.comm(1.0, p, q) - costs.comm(0.0, p, q) for q in range(m)] for p in range(m)]
        lat = [[costs.comm(0.0, p, q) for q in range(m)] for p in range(m)]
        big = sum(max(r) for r in w) + sum(max(lat[p][q] + d * comm[p][q] for p in range(m) for q in range(m))
                                           for _, _, d in _edges(g))
        big = max(big, 1.0)
        rows = _Rows()
        for i in range(n):
            rows.add({X(i, p): 1.0 for p in range(m)}, 1.0, 1.0)
            rows.add({C: 1.0, S(i): -1.0, **{X(i, p): -w[i][p] for p in range(m)}}, 0.0, np.inf)
        for i, j, d in _edges(g):
            base = {S(j): 1.0, S(i): -1.0, **{X(i, r): -w[i][r] for r in range(m)}}
            rows.add(base, 0.0, np.inf)
            for p in range(m):
                for q in range(m):
                    k = lat[p][q] + d * comm[p][q]
                    if k > 0:
                        coefs = dict(base)
                        coefs[X(i, p)] = coefs[X(i, p)] - k
                        coefs[X(j, q)] = coefs.get(X(j, q), 0.0) - k
                        rows.add(coefs, -k, np.inf)
        for (i, j), o in O.items():
            for p in range(m):
                # o = 1: i before j on p; o = 0: j before i (only when both are on p)
                rows.add({S(j): 1.0, S(i): -1.0, X(i, p): -w[i][p] - big, X(j, p): -big, o: -big}, -3 * big, np.inf)
                rows.add({S(i): 1.0, S(j): -1.0, X(j, p): -w[j][p] - big, X(i, p): -big, o: big}, -2 * big, np.inf)
        lb = np.zeros(n_vars)
        ub = np.concatenate([np.ones(n * m), np.full(n + 1, big), np.ones(len(pairs))])
        identical = len(set(costs.host)) == m and all(len(set(r)) == 1 for r in w) and \
            len({lat[p][q] for p in range(m) for q in range(m) if p != q}) <= 1 and \
            len({comm[p][q] for p in range(m) for q in range(m) if p != q}) <= 1
        if identical:
            lb[X(g.topo[0], 0)] = 1.0
        integ = np.concatenate([np.ones(n * m), np.zeros(n + 1), np.ones(len(pairs))])
        c = np.zeros(n_vars)
        c[C] = 1.0
        x, info = self._solve(c, rows, n_vars, integ, lb, ub)
        mine = None
        if x is not None:
            a = tuple(int(np.argmax(x[i * m:(i + 1) * m])) for i in range(n))
            pos = {t: k for k, t in enumerate(g.topo)}
            order = tuple(sorted(range(n), key=lambda i: (round(x[S(i)], 9), pos[i])))
            info["estimate"] = float(x[C])
            mine = Plan(a, order, info)
        if info["stopped_by"] is None:
            return mine
        return self._better_of(view, mine, info)

    def _better_of(self, view, mine: Plan | None, info: dict) -> Plan:
        """A stopped search's plan, or HEFT's where that is shorter (see the class: never worse than HEFT)."""
        costs = view.costs
        heft = HEFT().map(view)
        heft_span = max(evaluate(costs, heft.assignment, heft.order)[2], default=0.0)
        mine_span = max(evaluate(costs, mine.assignment, mine.order)[2], default=0.0) if mine else math.inf
        info.update(heft_makespan=heft_span, milp_makespan=mine_span if mine else None)
        if mine_span <= heft_span:
            info["incumbent"] = "milp"
            return mine
        dual = info["dual_bound"]
        # the objective is the plan returned's (HiGHS's best stays as milp_makespan), the gap measured from it
        info.update(incumbent="heft", objective=heft_span, optimal=False,
                    gap=(heft_span - dual) / heft_span if heft_span > 0 and math.isfinite(dual) else math.nan)
        found = f"its best plan's makespan {mine_span:.6g}" if mine else "no plan"
        warnings.warn(DlbkitWarning(
            f"milp: HiGHS stopped at its {info['stopped_by']} ({getattr(self, info['stopped_by'])}) with {found}; "
            f"HEFT's list schedule ({heft_span:.6g}) is better and is returned (plan.info['incumbent'] = 'heft'): "
            f"raise {info['stopped_by']} for HiGHS to search further"), stacklevel=caller_level())
        return Plan(heft.assignment, heft.order, info)

    def _relaxed(self, costs) -> Plan:
        from dlbkit.families.graph.model.costs import upward_rank
        g = costs.graph
        n, m = g.n_tasks, costs.n_nodes
        load = [g.weight(i) for i in range(n)]
        cl = {}
        for i, j, d in _edges(g):
            cl[(i, j)] = d
        prec = upward_rank(type(costs)(**{**costs.__dict__, "kind": "thesis"}))
        inc = [sum(d for _, d in g.preds[i]) for i in range(n)]
        A = lambda i, j: i * n + j  # noqa: E731
        Y = lambda i: n * n + i  # noqa: E731
        Z = lambda i, j: n * n + n + i * n + j  # noqa: E731
        W = lambda i, j: 2 * n * n + n + i * n + j  # noqa: E731
        N = lambda i: 3 * n * n + n + i  # noqa: E731
        n_vars = 3 * n * n + 2 * n
        bcoeff = self.bcoeff if self.bcoeff is not None else n / 2 + 0.5
        rows = _Rows()
        for (i, j), d in cl.items():  # ES [4.23]
            rows.add({Y(j): 1.0, Y(i): -1.0, A(i, j): d}, load[i] + d, np.inf)

        def exists(i, j):  # MGG's EXISTS(I, J): the one ordering rule for OT
            return prec[i] > prec[j] or (prec[i] == prec[j] and (inc[i] < inc[j] or (inc[i] == inc[j] and i < j)))

        for i in range(n):
            for j in range(n):
                if i != j and exists(i, j):  # OT [4.33]
                    rows.add({Z(i, j): 1.0, Z(j, i): -1.0, A(i, j): -load[i]}, 0.0, np.inf)
                rows.add({Z(i, j): 1.0, Y(j): -1.0}, -np.inf, 0.0)  # ZB [4.34]
                rows.add({W(i, j): 1.0, Z(i, j): -1.0}, -np.inf, 0.0)  # WA [4.35]
                rows.add({W(i, j): 1.0, Y(j): -1.0, Z(i, j): 1.0}, -np.inf, 0.0)  # WB [4.36]
                if i < j:
                    rows.add({A(i, j): 1.0, A(j, i): -1.0}, 0.0, 0.0)  # SYM [4.25]
                for k in range(n):  # ASS [4.24]
                    if len({i, j, k}) == 3 and j < k:
                        rows.add({A(i, j): 1.0, A(i, k): 1.0, A(j, k): -1.0}, -np.inf, 1.0)
            if i > 0:
                rows.add({N(i): 1.0, **{A(i, j): -1.0 for j in range(i)}}, -np.inf, 0.0)  # NL [4.30]
                for j in range(i):
                    rows.add({N(i): 1.0, A(i, j): -1.0}, 0.0, np.inf)  # NU [4.31]
        rows.add({N(i): 1.0 for i in range(n)}, n - m, np.inf)  # SUMN [4.32]
        lb = np.zeros(n_vars)
        ub = np.full(n_vars, np.inf)
        ub[:n * n] = 1.0
        ub[N(0):N(0) + n] = 1.0
        for i in range(n):
            lb[A(i, i)] = 1.0  # DIAG
        ub[Y(0)] = 0.0  # FIRST: y_1 = 0
        ub[N(0)] = 0.0  # N1
        integ = np.zeros(n_vars)
        integ[:n * n] = 1
        integ[N(0):N(0) + n] = 1
        c = np.zeros(n_vars)
        c[n * n:n * n + n] = bcoeff
        c[2 * n * n + n:3 * n * n + n] = -1.0
        x, info = self._solve(c, rows, n_vars, integ, lb, ub)
        cluster = [-1] * n
        k = 0
        for i in range(n):  # the report writer's decoding (002 App. B.3)
            if cluster[i] < 0:
                for j in range(n):
                    if cluster[j] < 0 and x[A(i, j)] > 0.5:
                        cluster[j] = k
                k += 1
        if k > m:
            raise ConfigError(f"{self.name} (relaxed) clusters", k, f"at most {m} (SUMN)")
        info["clusters"] = k
        info["bcoeff"] = bcoeff
        return Plan(tuple(cluster), None, info)


def _edges(g):
    return [(i, j, d) for i in range(g.n_tasks) for j, d in g.succs[i]]
