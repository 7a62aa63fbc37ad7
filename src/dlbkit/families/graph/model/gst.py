"""The Global Scheduling Table's rules (002 §5.2.4, §5.4), shared by the ``dynamic`` engine and the
real runs, so that an online mapper meets one holds rule in simulation and for real.

A task enters the table when its program arrives (a root, and a root's successors) or when one of its
predecessors is placed; it has one *hold* per predecessor, and a predecessor releases it the first
time the predecessor receives data (a root: when it is placed; 002 §5.4 Phase 2(b), Event 1). A task
with zero holds is a *candidate* (placeable now). What "receives data" means is the caller's: the
engine calls :meth:`Table.first_data` when a task's first input arrives on its processor (or it is a
root and placed), a real run when the first of a placed task's inputs is computed (its value is at
the coordinator, which sends it along with the task).
"""

from __future__ import annotations

import heapq

from dlbkit.families.graph.model.view import Candidates, GraphOnlineView

__all__ = ["Table", "load_units"]


def load_units(loads) -> tuple[list[int], int]:
    """Each of *loads* (non-negative floats) as a whole number of 2^-*shift*, *shift* the least for
    which all are whole: sums of these integers are exact in any order, and ``units / 2**shift`` is
    the exact sum rounded once (Python's int division rounds correctly)."""
    ratios = [float(x).as_integer_ratio() for x in loads]  # the denominator is a power of two
    shift = max((d.bit_length() - 1 for _, d in ratios), default=0)
    return [n << (shift - d.bit_length() + 1) for n, d in ratios], shift


class Table:
    """The table of one run, kept in the :class:`~dlbkit.families.graph.model.view.GraphOnlineView` it is given
    (``gst``, ``holds``, ``placed``, ``load_level``, ``active``, and ``candidates``: the tasks in the
    order they became placeable, which mappers break ties by: 002 §5.4, "table order"), with the view's
    running sums (``active_load``, ``candidate_load``, ``gst_min_priority``) kept as those sets change.
    The engine and the real runs change ``gst``, ``active`` and ``candidates`` only through it. It
    reads ``view.priority`` (t_p's heap), which both give."""

    def __init__(self, view: GraphOnlineView):
        self.view = view
        g = view.costs.graph
        self.graph = g
        view.holds = [len(p) for p in g.preds]
        self.cand = Candidates()
        view.candidates = self.cand
        self.got_data = [False] * g.n_tasks
        self.dropped: set[int] = set()  # tasks that will not run (drop): never in the table again
        # the load sums as exact integers (floats added and taken away drift from the sum of what is left)
        self.units, shift = load_units(map(g.weight, range(g.n_tasks)))
        self.unit = 1 << shift
        self.active_units = sum(self.units[i] for i in view.active)
        self.cand_units = 0
        view.active_load = self.active_units / self.unit
        view.candidate_load = 0.0
        # (priority, task) of the tasks in gst, and of some that left it (dropped when on top)
        self.by_priority = [(view.priority[i], i) for i in view.gst]
        heapq.heapify(self.by_priority)
        self._least()

    # ---- the sets, with their sums ---------------------------------------------------------------
    def enter(self, i: int) -> None:
        """Task *i* is in the table (``gst``)."""
        v = self.view
        if i not in v.gst and i not in self.dropped:
            v.gst.add(i)
            heapq.heappush(self.by_priority, (v.priority[i], i))
            if v.priority[i] < v.gst_min_priority:
                v.gst_min_priority = v.priority[i]

    def _least(self) -> None:
        heap, gst = self.by_priority, self.view.gst
        while heap and heap[0][1] not in gst:
            heapq.heappop(heap)
        self.view.gst_min_priority = heap[0][0] if heap else float("inf")

    def _candidate(self, i: int) -> None:
        if i not in self.cand and i not in self.dropped:
            self.cand._add(i)
            self.cand_units += self.units[i]
            self.view.candidate_load = self.cand_units / self.unit

    def activate(self, i: int) -> None:
        """Task *i* is ready or running (``active``)."""
        v = self.view
        if i not in v.active:
            v.active.add(i)
            self.active_units += self.units[i]
            v.active_load = self.active_units / self.unit

    def deactivate(self, i: int) -> None:
        """Task *i* finished (or was lost with its worker): out of ``active``."""
        v = self.view
        if i in v.active:
            v.active.discard(i)
            self.active_units -= self.units[i]
            v.active_load = self.active_units / self.unit

    # ---- the rules --------------------------------------------------------------------------------
    def arrive(self, roots) -> None:
        """A program arrives: its *roots* (zero holds) and their successors enter the table (Phase 1)."""
        succs = self.graph.succs
        for i in roots:
            self.enter(i)
            self._candidate(i)
            for j, _ in succs[i]:
                self.enter(j)

    def place(self, i: int, p: int, work: float) -> None:
        """Task *i* placed on processor *p*, where it takes *work*: out of the table, its successors in
        (Phase 3(a)); a root releases its successors at once (Phase 2(b))."""
        v = self.view
        v.placed[i] = p
        self.cand._remove(i)
        self.cand_units -= self.units[i]
        v.candidate_load = self.cand_units / self.unit
        v.gst.discard(i)
        v.load_level[p] += work
        for j, _ in self.graph.succs[i]:
            self.enter(j)
        self._least()
        if not self.graph.preds[i]:
            self.first_data(i)

    def first_data(self, i: int) -> bool:
        """Task *i* receives data (its first input, or a root placed): each successor loses a hold, and
        one with none left becomes a candidate (Event 1). False if *i* had received data before."""
        if self.got_data[i]:
            return False
        self.got_data[i] = True
        v = self.view
        for j, _ in self.graph.succs[i]:
            v.holds[j] -= 1
            if v.holds[j] == 0:
                self._candidate(j)
        return True

    def drop(self, i: int) -> None:
        """Task *i* will not run (a real run that returns exceptions: a task it needs raised): out of
        the candidates, the table and ``active``, and kept out. The caller takes its work off its
        processor's ``load_level``, as when a task finishes."""
        v = self.view
        self.dropped.add(i)
        if i in self.cand:
            self.cand._remove(i)
            self.cand_units -= self.units[i]
            v.candidate_load = self.cand_units / self.unit
        if i in v.gst:
            v.gst.discard(i)
            self._least()
        self.deactivate(i)

    def readmit(self, i: int) -> None:
        """A placed task lost with its worker (a real run) is placeable again."""
        self._candidate(i)
