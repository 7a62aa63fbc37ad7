"""PEFT: Predict Earliest Finish Time with an optimistic cost table (Arabnejad & Barbosa 2014)."""

from __future__ import annotations

import numpy as np

from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.balancers.base import Taxonomy
from dlbkit.balancers.registry import register
from dlbkit.families.graph.balancers._common import list_schedule, plan_order
from dlbkit.families.graph.balancers.heft import _standard

__all__ = ["PEFT"]


def optimistic_cost_table(costs) -> list[list[float]]:
    """OCT(t_i, p_k) = max over successors t_j of min over processors p_w of
    OCT(t_j, p_w) + w(t_j, p_w) + c̄_ij·[p_w ≠ p_k]; 0 for an exit task (eq. 1 of the paper), with
    c̄_ij the mean transfer time of the edge over pairs of distinct machines."""
    g = costs.graph
    m = costs.n_nodes
    lat_m, per_m = costs.mean_comm_factor()
    ex = np.asarray(costs.exec, dtype=float)
    oct_ = np.zeros((g.n_tasks, m))
    # a processor's machine as a small integer; the least of base over each machine's processors is one
    # pass over the row, not one per processor (that was m² per edge: 30 s at 10 000 tasks × 256)
    machine = np.unique(np.asarray(costs.host[:m]), return_inverse=True)[1].reshape(-1)
    n_machines = int(machine.max(initial=-1)) + 1
    shared = n_machines < m
    for i in reversed(g.topo):
        row = oct_[i]
        for j, d in g.succs[i]:
            cbar = lat_m + d * per_m
            base = oct_[j] + ex[j]  # elementwise as the Python floats were: the same values
            best_any = float(base.min()) + cbar
            if shared:  # a processor on k's machine receives for free
                local = np.full(n_machines, np.inf)
                np.minimum.at(local, machine, base)
                base = local[machine]
            np.maximum(row, np.minimum(best_any, base), out=row)  # min and max: exact in any order
    return oct_.tolist()


@register
class PEFT(MappingBalancer):
    """PEFT: HEFT's list scheduling with a look-ahead: the priority is the mean optimistic cost to
    the exit, and a task goes to the processor minimising EFT + OCT (its optimistic remaining time).

    Source: Arabnejad & Barbosa 2014, "List scheduling algorithm for heterogeneous systems by an
    optimistic cost table", IEEE TPDS 25(3), §4: the optimistic cost table OCT (eq. 1), rank_oct =
    the mean of a task's OCT row (eq. 2), a ready list by decreasing rank_oct, insertion-based EFT
    and the processor of least O_EFT = EFT + OCT (eq. 3). Ties: the lowest index. Estimates use the
    standard transfer formula; the evaluator times the plan under the run's cost model.

    Helps: graphs where HEFT's greedy choice strands a task's successors (the paper's motivation);
    same O(n²·m) cost as HEFT.
    Backfires: OCT is optimistic (ignores processor contention), so on loaded processors its
    look-ahead can mislead.
    """

    name = "peft"
    source = "Arabnejad & Barbosa 2014 §4"
    taxonomy = Taxonomy("static (before the run)", "central", "global: the whole graph and its cost estimates",
                        "every task placed once", "decreasing rank_oct; least EFT + OCT with insertion")

    def map(self, view) -> Plan:
        costs = view.costs if view.costs.kind == "standard" else _standard(view.costs)
        m = view.n_nodes
        oct_ = optimistic_cost_table(costs)
        rank = [sum(r) / m for r in oct_]
        proc, start, finish, pos = list_schedule(costs, m, rank, extra=oct_)
        return Plan(tuple(proc), plan_order(start, finish, pos), {"estimate": max(finish)})
