"""Jobs that the Cluster's tests run on its nodes, on every backend (importable there).

Moved from the test modules that shared them (test modules never import one another).
"""

from __future__ import annotations

import time


def spin(seconds):
    """Busy for *seconds* of this machine's CPU (so that emulation stretches it)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
    return seconds


def boom(x):
    raise ValueError(f"job {x} failed on purpose")


def nap(x, s=0.02):
    time.sleep(s)
    return x


# --- a node killed mid-run: the scenario the local and the Dask Cluster tests share -------------------
N_JOBS = 60


def lose_a_node(c, kill, victim: int = 1) -> None:
    """On the open Cluster *c*: N_JOBS jobs of 30 ms, node *victim* killed by ``kill()`` while it holds
    two jobs not done (under load it was once killed after its last one), then 30 more jobs; every
    result is its job's, and *victim* is no longer alive."""
    from support import wait_until

    fs = [c.submit(nap, i, 0.03) for i in range(N_JOBS)]
    fs[2].result(timeout=60)
    wait_until(lambda: sum(j.node == victim and j.state in ("placed", "running") for j in c.ps()) >= 2,
               f"node {victim} holding two jobs not done")
    kill()  # the victim's queued and running jobs are lost there
    assert [f.result(timeout=60) for f in fs] == list(range(N_JOBS))
    after = [c.submit(nap, i, 0.0) for i in range(30)]
    assert [f.result(timeout=60) for f in after] == list(range(30))
    assert c.alive() == [k for k in range(c.workers) if k != victim]


def check_lost_node(c, victim: int = 1):
    """After :func:`lose_a_node` and the Cluster's shutdown: every job done once, the lost ones
    submitted again elsewhere, the dead node in no view after; the Cluster's Result."""
    jobs = c.ps()
    assert [j.state for j in jobs] == ["done"] * (N_JOBS + 30)
    moved = [j for j in jobs if j.resubmitted]
    assert moved, "the killed node held jobs: some must have been submitted again"
    assert all(j.node != victim for j in moved)
    assert all(j.node != victim for j in jobs[N_JOBS:])  # the dead node left every view
    r = c.result()
    assert r.trace.meta["duplicates"] == 0 and r.trace.meta["dead"] == [victim]
    return r
