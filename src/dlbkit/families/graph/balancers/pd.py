"""Pseudo-Dynamic Load Balancing (PD): Sinclair 1993, 002 §5 (the note's §8)."""

from __future__ import annotations

from collections import deque
from numbers import Real
from typing import Sequence

import numpy as np

from dlbkit.families.graph.model.gst import load_units
from dlbkit.families.graph.model.view import Candidates
from dlbkit.params import Interval, Options
from dlbkit.families.graph.balancers.base import OnlineMapping
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register

__all__ = ["PseudoDynamic", "scores", "choose", "P_RULES"]

#: how P, the load a node may carry before C_l turns negative, is read (002 §5.2.1; note §8.2):
#: "avg_active": the text's "sum of the computational load of all active tasks divided by the number of
#: processing nodes" (active: running or ready; we add the tasks placeable now, the note's §9.5 first
#: variant, so that P is not 0 before anything runs); "max_load": max_j L(j), what Fig. 7's P = 14 is
P_RULES = ("avg_active", "max_load")
#: relative tolerance under which two scores are equal (the tie rules then decide)
TIE = 1e-9
#: from this many candidates on, twins (equal rows of h) are scored once; fewer are all scored (a
#: narrow graph: the signature pass would cost more than it saves); the choice is the same either way
TWINS_FROM = 64
#: a node measured at no speed is scored as this slow (its tasks' times are then huge, not infinite)
MIN_SPEED = 1e-9


def scores(load: Sequence[float], exec_: np.ndarray, level: Sequence[float], p: float, prec: Sequence[float],
           t_p: float, cc: np.ndarray, weights: tuple[float, float, float] = (1.0, 1.0, 1.0)):
    """002 §5.2.1–5.2.3 for candidate tasks (rows) on nodes (columns): (C_l, C_p, h).

    C_l(i,j) = l_i if l_i/s_j + L(j) ≤ P, else P − (l_i/s_j + L(j)) (L_p = 0: a task's descendants are
    never placed before it in this engine, note §8.2); C_p(i) = prec(i) − t_p; *cc* = C_c(i,j) =
    −Σ d·c over placed partners; h = w_l·C_l + w_c·C_c + w_p·C_p (002's unweighted sum: weights 1)."""
    fit = np.asarray(exec_, dtype=float) + np.asarray(level, dtype=float)[None, :]
    cl = np.where(fit <= p, np.asarray(load, dtype=float)[:, None], p - fit)
    cp = np.asarray(prec, dtype=float) - t_p
    wl, wc, wp = weights
    return cl, cp, wl * cl + wc * np.asarray(cc, dtype=float) + wp * cp[:, None]


def choose(h: np.ndarray, prec: Sequence[float], level: Sequence[float]) -> tuple[int, int]:
    """(row, node) of the largest h (002 §5.4 Phase 2(a)). Ties: between tasks the higher precedence,
    then the earlier row (the note's §8.3 suggestion: 002 leaves it open); between nodes the smaller load
    level, then the lower index (§5.4, §6)."""
    top = float(h.max())
    tol = TIE * max(1.0, abs(top))
    tied = h >= top - tol
    rows, cols = np.nonzero(tied)
    if len(rows) <= 16:  # a few tied cells (most placements): one key each is quicker than numpy's steps
        return min(zip(rows.tolist(), cols.tolist()), key=lambda rc: (-prec[rc[0]], rc[0], level[rc[1]], rc[1]))
    # the least (−prec, row, level, node) over the tied cells, in two steps since the row keys come
    # first: the row of highest precedence (argmax: its first, so the earliest), then in that row the
    # node of least level (argmin: the lowest index). Thousands of leaves of an in-tree tie on every
    # node, and one Python key per cell made placing them quadratic with a large constant.
    rows = np.flatnonzero(tied.any(axis=1))
    r = int(rows[np.argmax(np.asarray(prec, dtype=float)[rows])])
    cols = np.flatnonzero(tied[r])
    c = int(cols[np.argmin(np.asarray(level, dtype=float)[cols])])
    return r, c


@register
class PseudoDynamic(OnlineMapping):
    """PD: place each task, as soon as its holds reach zero, on the node of largest
    h(i,j) = C_l(i,j) + C_c(i,j) + C_p(i); each node runs its ready task of highest precedence.

    Source: Sinclair 1993 (002), §5.2 (derivation: average the load of the tasks able to run over the
    nodes, keep communicating tasks together, start high-precedence tasks first), §5.2.1–5.2.3 (C_l,
    C_c, C_p), §5.2.4 (the Global Scheduling Table with holds), §5.3 (local schedulers: highest
    precedence first, preemptive, no time slicing; a task waits, freeing its node, until its receivers
    are placed), §5.4 (the algorithm), §6 (several programs; precedence factors shifted by arrival).
    The engine (:mod:`dlbkit.families.graph.sim.dynamic`) keeps the table and the local schedulers; this class
    scores and chooses (Phase 2). ``cc_`` caches C_c per task (its parents are all placed once it is a
    candidate, so it never changes); candidates of equal load, priority, times and C_c have equal
    rows of h, and only the first of them in table order is scored (the others lose its ties): pd
    queues the candidates by signature as they join (``twins_``, kept across calls on one table), so a
    placement takes a step per signature, not per candidate. t_p is the view's ``gst_min_priority``;
    P the view's ``active_load`` + ``candidate_load`` when every partial sum of the graph's loads is a
    float exactly (``exact_sums_``: whole loads, say), else summed over the sets as before (the
    exact sum would differ in the last bit, and at a tie with a fit, change a choice).
    A task's time on node j is its time at j's nominal speed scaled by the view's ``measured_speed``
    (the engine: speed × availability now; a real run: measured from the worker's last task), so
    C_l follows a node that slows during the run; with speeds as nominal, the thesis's l_i / s_j
    exactly.

    Parameters: *w_load*, *w_comm*, *w_prec* weigh the three terms (the note's §15: "offer weights";
    002's unweighted form is 1, 1, 1); *p_rule* reads P (:data:`P_RULES`; 002's text says the average,
    its Fig. 7 uses the maximum); *preemptive* (002 §5.3 rule 2: True).

    Helps: on-line, O(distinct candidates × nodes) per placement, so it follows load that changes during the run
    and programs that arrive; the thesis finds it within 0–15% of simulated annealing (Tables 4–7).
    Backfires: the score adds a load, a communication time and a precedence level (unweighted, of
    different dimensions); with P from the average it overfills no node early but scatters chains; its
    worst case tends to 1 + 2a (§7, a = c_max / l_max); under unplaced receivers a task waits (rule 3).
    """

    name = "pd"
    source = "Sinclair 1993 (002) §5.2–5.4, §6"
    taxonomy = Taxonomy("arrival (a task's holds reach zero)", "central (the Global Scheduling Table)",
                        "global: load level of every node, placements, precedence levels",
                        "each task placed once, when placeable; preemptive local schedulers",
                        "largest h = C_l + C_c + C_p; ties: smaller load level, lower node")
    _parameter_constraints = {"w_load": [Interval(Real, 0, None)], "w_comm": [Interval(Real, 0, None)],
                              "w_prec": [Interval(Real, 0, None)], "p_rule": [Options(*P_RULES)],
                              "preemptive": [bool]}

    def __init__(self, *, w_load: float = 1.0, w_comm: float = 1.0, w_prec: float = 1.0,
                 p_rule: str = "avg_active", preemptive: bool = True):
        self.w_load = w_load
        self.w_comm = w_comm
        self.w_prec = w_prec
        self.p_rule = p_rule
        self.preemptive = preemptive

    def start(self, view, rng=None) -> None:
        super().start(view, rng)
        c = view.costs
        m = view.n_nodes
        host = np.asarray(c.host[:m])
        same = host[:, None] == host[None, :]  # without m² Python booleans (0.5 GB and seconds at 8 192)
        # zeroed in place: np.where made a second m × m array per table (0.5 GB each at 8 192)
        self.lat_ = np.array(c.lat, dtype=float)
        self.lat_[same] = 0.0
        self.per_ = np.array(c.per, dtype=float)
        self.per_[same] = 0.0
        g = c.graph
        self.load_ = [g.weight(i) for i in range(g.n_tasks)]
        self.exec_ = np.asarray(c.exec, dtype=float)
        self.cc_: dict[int, np.ndarray] = {}
        # a candidate's row of h depends on nothing but its load, priority, exec row and C_c row (the
        # rest is the same for every row), all fixed once it is a candidate; twins (an in-tree's
        # leaves: thousands) share a signature, and only the first of them in table order can win
        # choose's tie rules, so only that one is scored (see place)
        self.sig_: dict[int, int] = {}
        self.sig_ids_: dict[tuple, int] = {}
        # the candidates seen, by the rank they had (Candidates.rank), and per signature a queue of
        # (rank, task) in table order whose head is the one scored; kept across calls of the twin pass
        # on one table (seen_: that table's candidates)
        self.seen_ = None
        self.rank_: dict[int, int] = {}
        self.twins_: dict[int, deque] = {}
        # P from the view's running sums (exact, rounded once) is P as summed before (in the sets' order)
        # when every partial sum is exact: whole loads, say (see load_units)
        units, _ = load_units(self.load_)
        self.exact_sums_ = sum(units) <= 2 ** 53

    def _cc(self, view, i: int) -> np.ndarray:
        v = self.cc_.get(i)
        if v is None:
            v = np.zeros(view.n_nodes)
            for k, d in view.costs.graph.preds[i]:
                q = view.placed[k]
                v -= self.lat_[q] + d * self.per_[q]
            self.cc_[i] = v
            key = (self.load_[i], view.priority[i], self.exec_[i].tobytes(), v.tobytes())
            self.sig_[i] = self.sig_ids_.setdefault(key, len(self.sig_ids_))
        return v

    def _discover(self, view, cand: Candidates) -> None:
        """Sign the candidates that joined since the last call and queue each under its signature, in
        table order. They joined at the table's end, so a pass from the end stops at the first one
        seen before (with the rank it had then: one that left and joined again is new)."""
        if cand is not self.seen_:  # after a narrow stretch, or another table (a recorded view): start over
            self.seen_, self.rank_, self.twins_ = cand, {}, {}
        rank, new = self.rank_, []
        for i in reversed(cand):
            r = cand.rank(i)
            if rank.get(i) == r:
                break
            new.append((r, i))
        for r, i in reversed(new):
            rank[i] = r
            self._cc(view, i)
            self.twins_.setdefault(self.sig_[i], deque()).append((r, i))

    def _twinless(self, cand: Candidates) -> list:
        """The first candidate of each signature, in table order: every other one has its row of h,
        and loses to it on choose's "earlier row". A queue's head that is no longer a candidate (placed)
        is dropped as it is met, so this costs a step per signature, not per candidate."""
        firsts = []
        for sig, q in list(self.twins_.items()):
            while q and not (q[0][1] in cand and cand.rank(q[0][1]) == q[0][0]):
                q.popleft()
            if q:
                firsts.append(q[0])
            else:
                del self.twins_[sig]
        firsts.sort()
        return [i for _, i in firsts]

    def place(self, view) -> list:
        cand = view.candidates
        if not cand:
            return []
        # the view's sums are kept by the table that keeps its Candidates; a list set on the view by
        # hand after it was built comes with no table, so its sums may be stale: count from the sets
        kept = isinstance(cand, Candidates)
        if not kept:
            cand = Candidates(cand)
        level = view.load_level
        load = self.load_
        if self.p_rule == "max_load":
            p = max(level)
        elif kept and self.exact_sums_:  # the view's sums are the float sums below to the last bit
            p = (view.active_load + view.candidate_load) / view.n_nodes
        else:  # loads whose sums round: summed as before, in the sets' order (same P, same choices)
            p = (sum(map(load.__getitem__, view.active)) + sum(map(load.__getitem__, cand))) / view.n_nodes
        prio = view.priority
        t_p = view.gst_min_priority if kept else min(map(prio.__getitem__, view.gst))
        if len(cand) < TWINS_FROM:
            rep = list(cand)
            for i in rep:
                self._cc(view, i)
            self.seen_ = None  # no queues kept for a narrow stretch: rebuilt when the twin pass is next needed
        else:
            self._discover(view, cand)
            rep = self._twinless(cand)
        cc = np.array([self.cc_[i] for i in rep])
        pr = np.fromiter(map(prio.__getitem__, rep), dtype=float, count=len(rep))
        ex = self.exec_[rep]
        if view.measured_speed != view.speeds:  # a node measured slower (faster) takes longer (less)
            ex = ex * (np.asarray(view.speeds, dtype=float) / np.maximum(view.measured_speed, MIN_SPEED))[None, :]
        ld = np.fromiter(map(load.__getitem__, rep), dtype=float, count=len(rep))
        _, _, h = scores(ld, ex, level, p, pr, t_p, cc,
                         (self.w_load, self.w_comm, self.w_prec))
        r, j = choose(h, pr, level)
        return [(rep[r], j)]
