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

from .view import GraphOnlineView

__all__ = ["Table"]


class Table:
    """The table of one run, kept in the :class:`~dlbkit.model.view.GraphOnlineView` it is given
    (``gst``, ``holds``, ``placed``, ``load_level``) plus the candidates in the order they became
    placeable (mappers break ties by that order: 002 §5.4, "table order")."""

    def __init__(self, view: GraphOnlineView):
        self.view = view
        g = view.costs.graph
        self.graph = g
        view.holds = [len(p) for p in g.preds]
        self.cand: dict[int, None] = {}
        self.got_data = [False] * g.n_tasks

    def candidates(self) -> list[int]:
        return list(self.cand)

    def arrive(self, roots) -> None:
        """A program arrives: its *roots* (zero holds) and their successors enter the table (Phase 1)."""
        v, succs = self.view, self.graph.succs
        for i in roots:
            v.gst.add(i)
            self.cand[i] = None
            for j, _ in succs[i]:
                v.gst.add(j)

    def place(self, i: int, p: int, work: float) -> None:
        """Task *i* placed on processor *p*, where it takes *work*: out of the table, its successors in
        (Phase 3(a)); a root releases its successors at once (Phase 2(b))."""
        v = self.view
        v.placed[i] = p
        del self.cand[i]
        v.gst.discard(i)
        v.load_level[p] += work
        for j, _ in self.graph.succs[i]:
            v.gst.add(j)
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
                self.cand[j] = None
        return True

    def readmit(self, i: int) -> None:
        """A placed task lost with its worker (a real run) is placeable again."""
        self.cand[i] = None
