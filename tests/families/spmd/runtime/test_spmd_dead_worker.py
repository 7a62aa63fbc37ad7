"""An SPMD worker that dies is survived on the local backend: every survivor starts again from the last
checkpoint (the field after the last iteration whose blocks are all in), the dead worker's rows joined to a
neighbour's, and the run carries on with one worker fewer, to the serial result row for row.

The kills are at a worker's k-th step (the first worker to reach it claims the kill, atomically), one or more,
drawn by hypothesis with the iteration count, the balancer, the window and the checkpoint interval; every
iteration of the trace holds each interior row once (what was redone after the checkpoint is not counted twice).
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit.errors import ConfigError, DlbkitError

from support.profiles import examples

ROWS = 40
_STEPS = [0]  # the steps this process has computed (each worker process has its own)


def smooth(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3


def dying(u, kills, marks):
    """:func:`smooth`; the first process to compute its k-th step, for each k of *kills*, dies there."""
    _STEPS[0] += 1
    if _STEPS[0] in kills:
        try:
            os.close(os.open(os.path.join(marks, str(_STEPS[0])), os.O_CREAT | os.O_EXCL))  # this process claims it
        except FileExistsError:
            return smooth(u)
        os._exit(5)
    return smooth(u)


def _serial(u, iterations):
    u = u.copy()
    for _ in range(iterations):
        u[1:-1] = smooth(u)
    return u


@settings(max_examples=examples(50))
@given(iterations=st.integers(1, 40), workers=st.sampled_from([2, 3, 4]), data=st.data(),
       balancer=st.sampled_from(["dlah", None, "homogeneous-diffusion", "processor-only"]),
       window=st.sampled_from([1, 3, 10]), checkpoint=st.sampled_from([None, 1, 4]))
def test_the_serial_result_and_every_row_once_after_deaths(tmp_path_factory, iterations, workers, data, balancer,
                                                          window, checkpoint):
    kills = data.draw(st.lists(st.integers(1, iterations), min_size=1, max_size=workers - 1, unique=True))
    marks = tmp_path_factory.mktemp("marks")
    u = np.random.default_rng(iterations).random(ROWS + 2)
    r = dlbkit.run_spmd(functools.partial(dying, kills=frozenset(kills), marks=str(marks)), u, iterations=iterations,
                        workers=workers, balancer=balancer, window=window, checkpoint=checkpoint,
                        emulate=[1.0] + [0.5] * (workers - 1))
    assert np.array_equal(r.domain, _serial(u, iterations))  # bit for bit
    died = len(os.listdir(marks))  # kills some process reached (a kill past the run's steps is never reached)
    assert len(r.trace.meta["dead"]) == died == len(r.trace.meta["recovery"])
    assert sum(r.rows) == ROWS and all(r.rows[w] == 0 for w in r.trace.meta["dead"])
    iv = r.trace.intervals()
    for it in range(iterations):  # each interior row computed once per iteration in the trace
        mine = iv["round"] == it
        assert iv["count"][mine].sum() == ROWS
        starts = np.sort(iv["first"][mine])
        assert starts[0] == 0 and len(set(starts)) == len(starts)


def test_a_death_goes_back_to_the_last_checkpoint(tmp_path):
    u = np.random.default_rng(1).random(ROWS + 2)
    r = dlbkit.run_spmd(functools.partial(dying, kills=frozenset({7}), marks=str(tmp_path)), u, iterations=20,
                        workers=3, balancer="dlah", window=5, checkpoint=5)
    assert np.array_equal(r.domain, _serial(u, 20))
    (x,) = r.trace.meta["recovery"]
    # killed computing iteration 6 (its 7th step): back to the checkpoint after iteration 4, a window's end
    assert (x["exit"], x["after"], x["from"]) == (5, 5, 4)


def test_without_checkpoints_a_death_ends_the_run(tmp_path):
    with pytest.raises(DlbkitError, match=r"SPMD worker \d died \(exit code 5\) after iteration \d+: its rows are "
                                          r"lost and checkpoint=0 keeps none"):
        dlbkit.spmd(functools.partial(dying, kills=frozenset({3}), marks=str(tmp_path)), np.zeros(ROWS + 2),
                    iterations=10, workers=2, checkpoint=0)
    with pytest.raises(ConfigError, match="checkpoint must be an integer ≥ 0"):
        dlbkit.spmd(smooth, np.zeros(ROWS + 2), iterations=10, workers=2, checkpoint=-1)


def test_every_worker_dead_is_an_error(tmp_path):
    with pytest.raises(DlbkitError, match=r"SPMD worker \d died \(exit code 5\) and no worker is left"):
        dlbkit.spmd(functools.partial(dying, kills=frozenset({2, 3}), marks=str(tmp_path)), np.zeros(ROWS + 2),
                    iterations=10, workers=2, balancer=None)


def test_a_recording_with_a_death_is_refused_by_replay(tmp_path):
    rec = tmp_path / "run.json"
    marks = tmp_path / "marks"
    marks.mkdir()
    r = dlbkit.run_spmd(functools.partial(dying, kills=frozenset({4}), marks=str(marks)), np.zeros(ROWS + 2),
                        iterations=12, workers=2, record=rec)
    assert dlbkit.load_trace(rec).meta["dead"] == r.trace.meta["dead"] != []
    with pytest.raises(ConfigError, match=r"trace meta.dead must be \[\] \(a run in which no worker died: the run "
                                          r"went back to a checkpoint"):
        dlbkit.replay(rec, "dlah")


def slow_dying(u, kills, marks):
    import time
    time.sleep(0.003)
    return dying(u, kills, marks)


def test_by_default_a_checkpoint_is_taken_every_checkpoint_s_seconds(tmp_path, monkeypatch):
    from dlbkit.families.spmd.runtime import program
    monkeypatch.setattr(program, "CHECKPOINT_S", 0.03)  # (30 s by default: a test run is shorter)
    u = np.random.default_rng(2).random(ROWS + 2)
    r = dlbkit.run_spmd(functools.partial(slow_dying, kills=frozenset({50}), marks=str(tmp_path)), u, iterations=60,
                        workers=2, balancer=None)
    assert np.array_equal(r.domain, _serial(u, 60))
    (x,) = r.trace.meta["recovery"]
    assert 0 <= x["from"] <= x["after"]  # a timed checkpoint, not the domain as given (-1)
