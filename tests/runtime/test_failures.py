"""What every family does when a worker process dies or the user's code raises, on the local backend
(the MPI backend's failures are in runtime/test_mpi.py, runtime/test_tree.py and runtime/test_spmd.py:
there a dying rank ends the job, and an exception becomes a TaskError on rank 0 and one line per rank).

A map recovers a dead worker's chunk (runtime/test_local.py), a tree its share
(families/tree/runtime/test_tree_dead_worker.py) and an SPMD run its rows, from a checkpoint
(families/spmd/runtime/test_spmd_dead_worker.py), until no worker is left (or, without checkpoints, at once):
then the run ends with a DlbkitError naming the worker, with no worker process left behind. An exception in the user's code is a TaskError in every family.
"""

import multiprocessing as mp
import os

import numpy as np
import pytest

import dlbkit
from dlbkit import DlbkitError, TaskError


def _no_worker_left():
    return not [p for p in mp.active_children() if p.name.startswith("dlbkit-worker")]


def _tree_dies(n):
    if n == 3:
        os._exit(3)
    return ([n + 1, n + 1] if n < 4 else []), 1


def _tree_raises(n):
    if n == 3:
        raise ValueError("bad task 3")
    return ([n + 1, n + 1] if n < 4 else []), 1


def _spmd_dies(u):
    if (u == -1.0).any():
        os._exit(3)
    return u[1:-1]


def _spmd_raises(u):
    if (u == -1.0).any():
        raise ValueError("bad rows")
    return u[1:-1]


def _domain():
    u = np.zeros(12)
    u[9] = -1.0  # in the last worker's block (3 workers, 10 interior rows: 4, 3, 3)
    return u


def test_a_tree_whose_every_worker_dies_ends_with_an_error_naming_the_last():
    # every task 3 kills its process: the first death's share, redone by the other worker, kills it too
    with pytest.raises(DlbkitError, match=r"worker \d died \(exit code 3\) and no worker is left"):
        dlbkit.tree(_tree_dies, 0, workers=2)
    assert _no_worker_left()


def test_a_dead_spmd_worker_without_checkpoints_ends_the_run_with_an_error_naming_it():
    with pytest.raises(DlbkitError, match=r"SPMD worker 2 died \(exit code 3\) after iteration -1: its rows are lost"):
        dlbkit.spmd(_spmd_dies, _domain(), iterations=3, workers=3, balancer=None, checkpoint=0)
    assert _no_worker_left()


def test_rows_that_kill_every_worker_holding_them_end_the_run_when_no_worker_is_left():
    with pytest.raises(DlbkitError, match=r"SPMD worker \d died \(exit code 3\) and no worker is left"):
        dlbkit.spmd(_spmd_dies, _domain(), iterations=3, workers=3, balancer=None)
    assert _no_worker_left()


def test_the_user_code_raising_is_a_task_error_in_every_family():
    with pytest.raises(TaskError, match="ValueError: bad task 3"):
        dlbkit.tree(_tree_raises, 0, workers=2)
    with pytest.raises(TaskError, match="worker 2 at iteration 0.*ValueError: bad rows") as info:
        dlbkit.spmd(_spmd_raises, _domain(), iterations=3, workers=3, balancer=None)
    assert isinstance(info.value.__cause__, ValueError)
    with pytest.raises(TaskError, match="item 5 failed: ZeroDivisionError") as info:
        dlbkit.map(lambda x: 1 // 0 if x == 5 else x, range(10), workers=2)
    assert info.value.index == 5
    assert _no_worker_left()
