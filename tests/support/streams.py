"""Checks of a stream engine's trace, shared by the engine's tests (exact placement and late binding)."""

from __future__ import annotations

import numpy as np


def check_served_once_fifo(tr, w_tasks: int, slots, round_trip: float = 0.0) -> None:
    """Every one of *w_tasks* tasks served once, after it reached its node; at each node the tasks
    start in the order they reached it (``t_ask``, then task id) and never more at once than its
    *slots*; a job is done when its last task ends. With late binding (*round_trip* > 0) a slot is
    claimed in FIFO order of the reservations and its task starts a round trip later unless its
    origin is the node itself, so the starts keep that order up to *round_trip*."""
    iv = tr.intervals()
    assert sorted(iv["first"].tolist()) == list(range(w_tasks))  # every task once
    assert np.all(iv["t_start"] >= iv["t_ask"] - 1e-12) and np.all(iv["t_end"] > iv["t_start"])
    for j in range(tr.n_nodes):
        m = iv["node"] == j
        order = np.lexsort((iv["first"][m], iv["t_ask"][m]))  # arrival at the node, then task id
        starts = iv["t_start"][m][order]
        if round_trip:
            assert np.all(starts >= np.maximum.accumulate(starts) - round_trip - 1e-12)
        else:
            assert np.all(np.diff(starts) >= -1e-12)  # first in, first started
        # never more tasks running than slots (an end before a start at the same instant)
        ev = sorted([(t, 1) for t in iv["t_start"][m]] + [(t, -1) for t in iv["t_end"][m]])
        run = 0
        for _, dx in ev:
            run += dx
            assert run <= slots[j]
    s = tr.series
    done = s["job_done"]
    assert np.all(np.isfinite(done))
    for b in range(len(done)):
        f, k = s["job_first"][b], s["job_width"][b]
        mine = np.isin(iv["first"], np.arange(f, f + k))
        assert done[b] == iv["t_end"][mine].max() and iv["t_ask"][mine].min() >= s["job_time"][b]
