"""The record of one pipelined-SPMD run (:func:`dlbkit.sim.spmd.simulate_spmd`).

Per loop and workstation (numpy arrays of shape loops × P): ``loop_time``, the workstation's own
busy seconds in that loop (compute + swap + boundary communication + any transfer it sent or
received; 000's loop time L_i, see the note §5.6 for why it is not wall-clock); ``points``, the DP it
held. Every transfer is a row (loop, src, dst, dp): decided at the end of ``loop``, its DP are
computed by ``dst`` from loop + 1 on and its cost is paid by both ends in loop + 1. ``steps[i]``
counts the balancing actions workstation i initiated (decisions that moved DP), ``decisions[i]``
every time its balancer was asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SpmdTrace", "pipeline_finish_times"]


def pipeline_finish_times(loop_time: np.ndarray, layout: str) -> np.ndarray:
    """Wall-clock end of every loop on every workstation (loops × P) in the pipelined model.

    A workstation starts loop k when it has finished loop k−1 and its neighbours have finished
    theirs (their boundaries of loop k−1 have arrived; the transfer time is already in the busy
    time): ``end[k, i] = max(end[k−1, i], end[k−1, j] for j ∈ N(i)) + loop_time[k, i]``. No global
    barrier (000 §4.4). With constant loop times the slowest workstation never waits, so the
    makespan is exactly loops × its loop time (000 §8.1, eq 4.1).
    """
    loops, P = loop_time.shape
    out = np.empty_like(loop_time)
    end = np.zeros(P)
    ring = layout == "ring" and P > 2
    for k in range(loops):
        ready = end.copy()
        if P > 1:
            if ring:
                np.maximum(ready, np.roll(end, 1), out=ready)
                np.maximum(ready, np.roll(end, -1), out=ready)
            else:
                np.maximum(ready[1:], end[:-1], out=ready[1:])
                np.maximum(ready[:-1], end[1:], out=ready[:-1])
        end = ready + loop_time[k]
        out[k] = end
    return out


@dataclass
class SpmdTrace:
    """What happened in one pipelined-SPMD run; metrics in :mod:`dlbkit.sim.spmd_metrics`."""

    n_nodes: int
    layout: str
    window: int
    loop_time: np.ndarray  # (loops, P) busy seconds
    points: np.ndarray  # (loops, P) DP held during each loop
    steps: np.ndarray  # (P,) balancing actions initiated (decisions that moved DP)
    decisions: np.ndarray  # (P,) times the balancer decided for the node (central: node -1 not counted)
    starts: np.ndarray  # (loops, P) first DP offset of every block (see :meth:`ownership`)
    transfers: list[tuple[int, int, int, int]] = field(default_factory=list)  # (loop, src, dst, dp)
    balancer: str = ""
    seed: object = None
    meta: dict = field(default_factory=dict)

    @property
    def loops(self) -> int:
        return int(self.loop_time.shape[0])

    def transfer_table(self) -> dict[str, np.ndarray]:
        cols = list(zip(*self.transfers)) if self.transfers else [[], [], [], []]
        return {name: np.asarray(col, dtype=np.int64) for name, col in zip(("loop", "src", "dst", "dp"), cols)}

    @property
    def dp_exchanged(self) -> int:
        """Total DP moved by balancing (000's "load exchange")."""
        return int(sum(t[3] for t in self.transfers))

    def finish_times(self) -> np.ndarray:
        """Wall-clock end of every loop on every workstation (see :func:`pipeline_finish_times`)."""
        return pipeline_finish_times(self.loop_time, self.layout)

    @property
    def makespan(self) -> float:
        """Wall-clock time until every workstation has finished its last loop (pipelined)."""
        return float(self.finish_times()[-1].max()) if self.loops else 0.0

    @property
    def eq41_time(self) -> float:
        """000's eq 4.1: Σ over loops of the slowest workstation's loop time (a barrier after every loop)."""
        return float(self.loop_time.max(axis=1).sum()) if self.loops else 0.0

    def ownership(self, loop: int) -> np.ndarray:
        """Block start offsets of every workstation during *loop* (node 0 starts where it started).

        Blocks are contiguous and in node order; on a ring offsets are modulo the domain size and
        node 0's start moves when the wrap-around pair (P−1, 0) exchanges DP.
        """
        return self.starts[loop]
