"""The real runtime under a careless user: what a user does wrong or unusually gets a clear answer
(a ConfigError naming the argument, a TaskError naming the item) or simply works, never a hang, a
lost or doubled item, or a worker left behind."""

import json
import threading

import numpy as np
import psutil
import pytest

import dlbkit
from dlbkit.errors import ConfigError, DlbkitError, TaskError

from support.profiles import examples

#: a hang guard only (a step of 40 trivial items takes well under a second)
HANG_GUARD_S = 120


def square(x):
    return x * x


def _living_children() -> set[int]:
    """Living child processes, but Python's own helpers (multiprocessing's resource tracker and
    forkserver live as long as the process that started them, after a spawn or forkserver run)."""
    out = set()
    for c in psutil.Process().children(recursive=True):
        try:
            if c.status() != psutil.STATUS_ZOMBIE and not any(
                    h in " ".join(c.cmdline()) for h in ("resource_tracker", "forkserver")):
                out.add(c.pid)
        except psutil.NoSuchProcess:  # ended between the listing and the question
            pass
    return out


_before: set[int] = set()


@pytest.fixture(autouse=True)
def _children_before():
    """The test process's children when a test starts: in a full run an earlier test's process (a
    Dask cluster's, or one still ending) may be there, and is not this test's leftover."""
    global _before
    _before = _living_children()
    yield


def children() -> list[int]:
    """This test's processes still alive (not those there when it started)."""
    return sorted(_living_children() - _before)


def test_loop_steps_called_from_several_threads_take_turns():
    """Two steps at once used to share the workers' pipes and wait for each other's replies forever."""
    loop = dlbkit.Loop(square, workers=2, balancer="ss")
    out: dict[int, object] = {}

    def step(k):
        try:
            out[k] = loop.map(range(40 * k, 40 * k + 40))
        except BaseException as e:  # noqa: BLE001 - reported below
            out[k] = e

    threads = [threading.Thread(target=step, args=(k,), daemon=True) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_GUARD_S)
    hung = [t for t in threads if t.is_alive()]
    if hung:
        loop._transport.stop(kill=True)
    assert not hung, "Loop.map from several threads hung"
    for k in range(3):
        assert out[k] == [x * x for x in range(40 * k, 40 * k + 40)]
    assert len(loop.steps) == 3
    # every step's items once: each step's trace tiles 0..39
    for s in loop.steps:
        rows = sorted(zip(s.table()["first"], s.table()["count"]))
        assert [f for f, _ in rows] == list(np.cumsum([0] + [c for _, c in rows])[:-1])
        assert sum(c for _, c in rows) == 40
    loop.close()
    with pytest.raises(DlbkitError, match="closed"):
        loop.map([1])
    assert children() == []


@pytest.mark.parametrize("n", [np.int64(2), np.int32(1), np.uint8(2)])
def test_a_numpy_integer_worker_count_is_a_worker_count(n):
    """A count computed with numpy is an integer, as *seed* already accepted one."""
    assert dlbkit.map(square, range(5), workers=n) == [0, 1, 4, 9, 16]
    with dlbkit.Loop(square, workers=n) as loop:
        assert loop.n_workers == int(n) and isinstance(loop.n_workers, int)
        assert loop.map([3]) == [9]
    assert children() == []


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", np.float64(2.0), np.int64(0)])
def test_bad_worker_counts_are_config_errors_naming_workers(bad):
    with pytest.raises(ConfigError, match="^workers"):
        dlbkit.map(square, range(3), workers=bad)


def inner_map(x):
    return sum(dlbkit.map(square, range(x), workers=1))


def test_a_map_inside_a_worker_is_a_task_error_saying_why():
    """A worker is daemonic: multiprocessing only asserted 'daemonic processes are not allowed to have
    children' from inside Process.start; now the inner run refuses at once, naming the backend."""
    with pytest.raises(TaskError, match=r"item 0 failed: .*ConfigError: backend must be used in a process "
                                        r"that may start processes.*daemonic"):
        dlbkit.map(inner_map, [2, 3], workers=1)
    assert children() == []


@pytest.mark.parametrize("fn", [3, None, "square"])
def test_a_cluster_job_that_is_not_callable_is_refused_at_submit(fn):
    with dlbkit.Cluster(1) as c:
        with pytest.raises(ConfigError, match="^fn must be a callable"):
            c.submit(fn, 2)
        with pytest.raises(ConfigError, match="^fn must be a callable"):
            c.submit_batch(fn, [(1,), (2,)])
        assert c.submit(square, 3).result(timeout=HANG_GUARD_S) == 9


def test_worker_ranks_name_a_failed_graph_task_as_the_task_error_does():
    """Rank 0's one line to the worker ranks said 'item b failed' for the graph's task 'b'."""
    from dlbkit.runtime.backends.mpi import _reason
    assert _reason(TaskError("b", "ValueError: x", "", what="task"), None) == "task 'b' failed (traceback on rank 0)"
    assert _reason(TaskError(3, "ValueError: x", ""), None) == "item 3 failed (traceback on rank 0)"


class Unpicklable:
    def __reduce__(self):
        raise TypeError("no pickling for you")


def ident(x):
    return x


def test_a_loop_item_that_cannot_be_pickled_is_a_config_error_naming_it():
    """A Loop sends each chunk's items to its worker; an item that cannot cross was a DlbkitError
    speaking of a 'worker rank' (MPI's word) in a local run, naming no field."""
    loop = dlbkit.Loop(ident, workers=1, balancer="ss")
    assert loop.map([1, 2]) == [1, 2]
    with pytest.raises(ConfigError, match=r"^items\[2\] must be picklable: the items of a Loop step .*no pickling"):
        loop.map([1, 2, Unpicklable(), 4])
    assert loop.closed  # a failed step closes the loop, as documented
    assert children() == []


# --- every chunking balancer, with parameters a careless user might give ---------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dlbkit.balancers.registry import REGISTRY  # noqa: E402

CHUNKING = sorted(n for n, c in REGISTRY.items() if getattr(c, "kind", None) == "chunking")
VALUES = st.one_of(st.integers(-3, 50), st.floats(allow_nan=True, allow_infinity=True), st.none(),
                   st.text(max_size=3), st.booleans(), st.lists(st.integers(0, 3), max_size=3))


def _params(data, name):
    names = list(getattr(REGISTRY[name], "_parameter_constraints", None) or {})
    keys = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names))) if names else []
    return {k: data.draw(VALUES) for k in keys}


def _check_map_with(name, params, n, workers):
    try:
        r = dlbkit.run_map(square, range(n), balancer=name, params=params, workers=workers)
    except ConfigError:  # refused up front: before any worker started
        assert children() == []
        return
    assert r.results == [x * x for x in range(n)]
    rows = sorted(zip(r.table()["first"], r.table()["count"]))  # every item in exactly one chunk
    at = 0
    for first, count in rows:
        assert first == at and count >= 1
        at += count
    assert at == n
    assert children() == []


@settings(max_examples=examples(12), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CHUNKING), st.data(), st.integers(0, 40), st.integers(1, 2))
def test_any_chunking_balancer_with_any_params_is_refused_up_front_or_computes_every_item_once(name, data, n, w):
    _check_map_with(name, _params(data, name), n, w)


@pytest.mark.full
@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(CHUNKING), st.data(), st.integers(0, 300), st.integers(1, 3))
def test_any_chunking_balancer_with_any_params_long(name, data, n, w):
    _check_map_with(name, _params(data, name), n, w)


# --- close() from a signal handler ---------------------------------------------------------------------
import os  # noqa: E402
import signal  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402


def slow_square(x):
    time.sleep(0.1)
    return x * x


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")
def test_close_from_a_signal_handler_during_a_step_stops_the_workers_and_lets_the_handler_go_on():
    """A SIGTERM-style handler (close, then exit) during a step: close() used to raise a DlbkitError inside
    the handler, so the handler's exit never ran; now the workers are killed, the handler goes on, and
    the step raises what the handler raised (here SystemExit). The signal comes as the coordinator
    waits on its workers for the third time (a profile hook): a 0.3 s timer could fire before the
    step began, where the test passed without a step to end."""
    from support.signals import signal_when

    loop = dlbkit.Loop(slow_square, workers=2, balancer="ss")
    seen = []

    def handler(*_):
        loop.close()
        seen.append("closed")
        raise SystemExit(3)

    old = signal.signal(signal.SIGUSR1, handler)
    hook = signal_when("recv", "wait", signal.SIGUSR1, nth=3)
    try:
        with pytest.raises(SystemExit) as e:
            sys.setprofile(hook)
            loop.map(range(40))
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGUSR1, old)
    assert hook.fired, "the coordinator never waited on its workers a third time in the step"
    assert e.value.code == 3 and seen == ["closed"] and loop.closed and children() == []


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")
def test_close_from_a_signal_handler_during_close_does_not_wait_for_itself():
    """The handler runs in the thread that is inside close(): with a plain Lock it waited for itself."""
    loop = dlbkit.Loop(square, workers=1, balancer="ss")
    assert loop.map([1, 2]) == [1, 4]
    stop = loop._transport.stop
    fired = []

    def stop_after_a_signal(*a, **k):
        os.kill(os.getpid(), signal.SIGUSR1)  # delivered before the next bytecode: inside close()
        return stop(*a, **k)

    loop._transport.stop = stop_after_a_signal
    old = signal.signal(signal.SIGUSR1, lambda *_: (loop.close(), fired.append(1)))
    guard = threading.Timer(HANG_GUARD_S, lambda: os._exit(99))  # a hang ends the test run, it does not wait
    guard.start()
    try:
        loop.close()
    finally:
        guard.cancel()
        signal.signal(signal.SIGUSR1, old)
    assert fired == [1] and loop.closed and children() == []


@pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="POSIX signals")
def test_close_from_a_signal_handler_after_a_steps_last_wait_still_saves_the_record(tmp_path):
    """A handler's close() that lands after the step's last message (the step completes) used to leave
    nothing recorded: close() had cleared the pool, so neither the step nor a later close() saved."""
    path = tmp_path / "run.json"
    loop = dlbkit.Loop(square, workers=2, balancer="ss", record=path)
    assert loop.map(range(10)) == [x * x for x in range(10)]
    book = loop._book

    def book_after_a_signal(*a, **k):  # the coordinator has returned: the signal lands while booking
        os.kill(os.getpid(), signal.SIGUSR1)
        return book(*a, **k)

    loop._book = book_after_a_signal
    old = signal.signal(signal.SIGUSR1, lambda *_: loop.close())
    try:
        assert loop.map(range(5)) == [x * x for x in range(5)]  # the step completed: its results
    finally:
        signal.signal(signal.SIGUSR1, old)
    assert loop.closed and children() == []
    rec = json.loads(path.read_text())
    assert [s["items"] for s in rec["meta"]["time_steps"]] == [10, 5]
