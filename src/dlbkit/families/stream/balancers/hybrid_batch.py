"""Nezha's hybrid placement of a parallel batch: round-robin for x·n tasks, Algorithm 3.1 for the rest."""

from __future__ import annotations

from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.stream.balancers.nezha import Nezha

__all__ = ["HybridBatch"]


@register
class HybridBatch(Nezha):
    """Hybrid batch placement: a job of k tasks on n active nodes (the window of ``nezha``; all nodes
    when none is over-loaded) with k ≥ n is written k = x·n + y; x tasks go to every active node
    (round-robin over the window, in node order) and the y others are placed one by one by Algorithm
    3.1 with the view updated after each (so the round-robin part counts). With k < n, or for a
    single task, it is Algorithm 3.1. Parameters are ``nezha``'s; with *quarantine* an over-loaded
    origin keeps the whole batch.

    Source: 003 §6.3.2.3 (Table 14: 32 tasks on 8 idle nodes give exactly 4 each; the remainder y
    may still pile up, as in its 38-task row). Which n is meant, active or all, is not said (note §7
    item 8): we take the active nodes, since over-loaded ones must not receive.

    Helps: a large batch on an idle or evenly loaded cluster lands evenly, where Algorithm 3.1 on a
    single snapshot piles it up (Table 15). Backfires: round-robin ignores the loads of the active
    nodes (it "is not a load-balancing algorithm", §6.3.2.3); several users' batches may still meet.
    """

    name = "hybrid-batch"
    source = "003 §6.3.2.3 (Table 14)"
    taxonomy = Taxonomy("arrival", "distributed", "global loads (as fresh as the information model)", "a batch",
                        "x per active node in turn, the remainder by Algorithm 3.1")

    def place_batch(self, view, k: int, update: bool = True) -> list[int]:
        if k > 1 and self.quarantined(view):  # an over-loaded origin keeps the whole batch (quarantine, §3.5.3)
            return [view.node] * k
        act = self.active(view) if k > 1 else []
        if len(act) == 0 or k < len(act):
            return super().place_batch(view, k, update)
        x, y = divmod(k, len(act))
        out = [j for _ in range(x) for j in act]
        for j in act:
            view.queue[j] += x  # the round-robin part is placed before the remainder is decided
        for _ in range(y):
            j = self.place(view)
            out.append(j)
            view.queue[j] += 1
        return out
