"""A user's signal handler that raises (a SIGTERM handler calling ``sys.exit``) on a rank of a real
``mpiexec -n 3`` job: while a worker rank waits for work, in the start-up, and while it waits for
rank 0's final broadcast. Before, the exception came out of dlbkit's own waits and the rank called ``MPI_Abort``:
the whole job was killed, and a Loop's finished steps were not recorded."""

import json
import os
import sys
import textwrap

import pytest

from support import REPO, TESTS
from support.mpi import run_job

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
pytestmark = pytest.mark.skipif(not hasattr(__import__("signal"), "SIGTERM"), reason="POSIX signals")

TIMEOUT = 90  # seconds for one mpiexec job

JOB = """
import json, signal, sys, time
from mpi4py import MPI
import dlbkit
from support.signals import signal_when, wait_for
from dlbkit import ChunkingBalancer, Taxonomy

r = MPI.COMM_WORLD.Get_rank()
case = sys.argv[1]
signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))


class Slow(ChunkingBalancer):
    \"\"\"One item a chunk, decided slowly: the worker ranks spend their time waiting for work.\"\"\"

    name = "test-slow"
    source = "test"
    taxonomy = Taxonomy("-", "-", "-", "-", "-")

    def __init__(self):
        pass

    def chunk(self, view, worker):
        time.sleep(0.05)
        return 1


def signal_here(caller, callee, nth=1):
    # SIGTERM on this rank as *caller* calls *callee* (tests/support/signals.py), marked by
    # signalled-R: not where a timer guessed the rank would be (under load a slow start-up outlasted them)
    sys.setprofile(signal_when(caller, callee, signal.SIGTERM, marker=f"signalled-{r}", nth=nth))


def fails_on_rank_1(x):
    if r == 1:  # which chunk a rank gets is a race: the failure is the rank's, not the item's
        raise ValueError("on rank 1")
    if x in (0, 10):
        time.sleep(1.5)
    return x


def report(**kw):
    with open(f"report-{r}.json", "w") as f:
        json.dump(kw, f)


steps = []
try:
    if case == "waiting for work":
        with dlbkit.Loop(abs, backend="mpi", balancer=Slow(), record="rec.json") as loop:
            for k in range(3):
                if k == 2 and r == 1:  # during the third step, as the worker loop first waits for work
                    signal_here("serve", "recv")
                steps.append(loop.map(range(10)))
    elif case == "rank 0":  # as the coordinator polls for a message the third time: during the run (a timer
        # fired in the start-up's argument check once under load: rank 0 left, the others hung; the
        # limit mpi.py's "Failures" names)
        if r == 0:
            signal_here("recv", "_take", nth=3)
        dlbkit.map(abs, range(20), backend="mpi", balancer=Slow(), progress=False)
    elif case == "start-up":  # rank 0 judges the run until rank 1, waiting for its verdict, is signalled
        from dlbkit.runtime.backends import execute
        from dlbkit.families.divisible.runtime.program import MapRun

        class SlowToJudge(MapRun):
            def problem(self, n_workers, backend):
                wait_for("signalled-1", "rank 1 never waited for the start-up's verdict")
                return None

        if r == 1:  # past the start-up's barrier, as it reads the clock before waiting for the verdict
            # (mpi4py's bcast is invisible to a profile hook); a 0.5 s timer came before the wait under load
            signal_here("start_run", "perf_counter")
        execute(SlowToJudge(abs, range(10), dlbkit.make("ss"), emulation=None, progress=False, rng=None), "mpi")
    else:  # rank 1's first item fails; rank 1 then waits for the outcome while rank 2 computes 1.5 s
        if r == 1:  # the signal comes as rank 1 enters that wait (a 0.7 s timer came in the start-up under load)
            signal_here("serve_rank", "quiet_barrier")
        dlbkit.map(fails_on_rank_1, range(20), backend="mpi", balancer="static", progress=False)
    report(steps=len(steps))
except SystemExit as e:
    report(steps=len(steps), exit=e.code)
except Exception as e:
    report(steps=len(steps), error=f"{type(e).__name__}: {e}")
"""


def _job(tmp_path, case: str):
    (tmp_path / "job.py").write_text(textwrap.dedent(JOB))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), TESTS,
                                         env.get("PYTHONPATH", "")])
    done = run_job([sys.executable, "job.py", case], 3, cwd=tmp_path, timeout=TIMEOUT, env=env)
    reports = {r: json.loads((tmp_path / f"report-{r}.json").read_text()) for r in range(3)
               if (tmp_path / f"report-{r}.json").exists()}
    assert sorted(reports) == [0, 1, 2], done.stderr[-3000:]  # MPI_Abort killed the job before
    assert "MPI_Abort" not in done.stderr and "aborting" not in done.stderr, done.stderr[-3000:]
    return done, reports


@pytest.mark.full  # the MPI matrix: users' signal handlers on ranks (the hold-back rules stay in the fast tier)
def test_a_worker_ranks_exiting_signal_handler_ends_the_step_and_the_finished_steps_are_recorded(tmp_path):
    """SIGTERM on rank 1 while it waits for work in a Loop's third step: rank 1 stops with its
    handler's exit (3), rank 0 ends the step with a DlbkitError naming the rank and the handler, and
    saves the two finished steps; rank 2 is told and stops with one line."""
    done, reports = _job(tmp_path, "waiting for work")
    assert (tmp_path / "signalled-1").exists(), f"rank 1 never waited for work in the third step: {reports}"
    why = "rank 1 stopped the run: its handler of SIGTERM raised SystemExit: 3"
    assert reports[0] == {"steps": 2, "error": f"DlbkitError: {why}"}, reports
    assert reports[1] == {"steps": 2, "exit": 3}, reports
    assert reports[2] == {"steps": 2, "exit": f"dlbkit: rank 2 stopping: rank 0 stopped the run: DlbkitError: {why}"}
    rec = json.loads((tmp_path / "rec.json").read_text())
    assert [s["items"] for s in rec["meta"]["time_steps"]] == [10, 10]


@pytest.mark.full  # the MPI matrix: users' signal handlers on ranks
def test_a_signal_while_a_rank_waits_for_the_final_broadcast_is_handled_after_it(tmp_path):
    """Rank 1 failed its item and waits for rank 0's outcome (rank 2 still computes) when its SIGTERM
    handler raises: the run ends as it would have (rank 0's TaskError, rank 2's line), then rank 1's
    handler runs and the rank exits as it says."""
    done, reports = _job(tmp_path, "final broadcast")
    assert (tmp_path / "signalled-1").exists(), f"rank 1 never reached the final wait: {reports}"
    item = 0 if reports[0].get("error", "").startswith("TaskError: item 0 ") else 10  # rank 1's chunk
    assert reports[0] == {"steps": 0, "error": f"TaskError: item {item} failed: ValueError: on rank 1"}, reports
    assert reports[1] == {"steps": 0, "exit": 3}, reports
    assert reports[2] == {"steps": 0, "exit": f"dlbkit: rank 2 stopping: item {item} failed on rank 1 (traceback "
                                              "on rank 0)"}, reports


@pytest.mark.full  # the MPI matrix: users' signal handlers on ranks
def test_a_signal_during_the_start_up_ends_the_run_on_every_rank(tmp_path):
    """SIGTERM on rank 1 while it waits for rank 0's verdict on the run (the start-up broadcast): the
    run ends on every rank as when it comes during the run."""
    done, reports = _job(tmp_path, "start-up")
    assert (tmp_path / "signalled-1").exists(), f"rank 1 never waited for the start-up's verdict: {reports}"
    why = "rank 1 stopped the run: its handler of SIGTERM raised SystemExit: 3"
    assert reports[0] == {"steps": 0, "error": f"DlbkitError: {why}"}, reports
    assert reports[1] == {"steps": 0, "exit": 3}, reports
    assert reports[2] == {"steps": 0, "exit": f"dlbkit: rank 2 stopping: rank 0 stopped the run: DlbkitError: {why}"}


@pytest.mark.full  # the MPI matrix: users' signal handlers on ranks
def test_rank_0s_exiting_signal_handler_ends_the_run_as_any_failure_of_the_coordinator(tmp_path):
    """On rank 0 the handler runs at the coordinator's next wait: rank 0 exits as it says, and the worker
    ranks are stopped and told, in one line each."""
    done, reports = _job(tmp_path, "rank 0")
    assert (tmp_path / "signalled-0").exists(), f"rank 0 never polled for a message three times in the run: {reports}"
    assert reports[0] == {"steps": 0, "exit": 3}, reports
    for r in (1, 2):
        assert reports[r] == {"steps": 0, "exit": f"dlbkit: rank {r} stopping: rank 0 stopped the run: SystemExit: 3"}


def test_a_held_back_handler_runs_at_the_safe_point_or_when_the_block_ends():
    """No MPI: what :class:`Deferred` does with a handler of the user's (SIGUSR1 here)."""
    import signal

    from dlbkit.runtime.backends.deferred import Deferred

    seen = []

    def handler(signum, frame):
        seen.append(signum)
        raise SystemExit(3)

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        with Deferred() as held:
            signal.raise_signal(signal.SIGUSR1)
            assert seen == [] and held.pending == [signal.SIGUSR1]  # held back, not raised here
            with pytest.raises(SystemExit) as e:
                held.run_pending()  # the safe point: its exception comes out there
            assert e.value.code == 3 and seen == [signal.SIGUSR1] and held.running == signal.SIGUSR1
            held.inside = lambda: True  # the user's code is running: the handler runs at once
            with pytest.raises(SystemExit):
                signal.raise_signal(signal.SIGUSR1)
            held.inside = lambda: False
            signal.raise_signal(signal.SIGUSR1)
        pytest.fail("the signal still held back was not delivered when the block ended")  # pragma: no cover
    except SystemExit as e:
        assert e.code == 3 and seen == [signal.SIGUSR1] * 3
    finally:
        assert signal.getsignal(signal.SIGUSR1) is handler  # restored
        signal.signal(signal.SIGUSR1, old)


def test_a_handler_the_user_sets_during_the_block_is_kept_when_it_ends():
    """No MPI: a handler that, as many do, sets another for its signal (ignore a second SIGUSR1 while
    cleaning up) keeps it after the run; before, the block's end put the first handler back."""
    import signal

    from dlbkit.runtime.backends.deferred import Deferred

    seen = []

    def handler(signum, frame):
        seen.append(signum)
        signal.signal(signum, signal.SIG_IGN)

    old = signal.signal(signal.SIGUSR1, handler)
    try:
        with Deferred() as held:
            signal.raise_signal(signal.SIGUSR1)
            held.run_pending()
            assert seen == [signal.SIGUSR1]
            signal.raise_signal(signal.SIGUSR1)  # ignored, as the handler asked: not held back
            assert held.pending == []
        assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
        assert seen == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, old)


def test_every_signal_still_held_back_is_delivered_when_the_block_ends_even_if_one_raises():
    """No MPI: two signals held back to the end of the run; the first one's handler exits. The
    second is still delivered (as Python delivers a second pending signal after the first's
    exception); before, it was dropped."""
    import signal

    from dlbkit.runtime.backends.deferred import Deferred

    seen = []

    def exiting(signum, frame):
        seen.append(signum)
        raise SystemExit(3)

    old1 = signal.signal(signal.SIGUSR1, exiting)
    old2 = signal.signal(signal.SIGUSR2, lambda signum, frame: seen.append(signum))
    try:
        with pytest.raises(SystemExit) as e:
            with Deferred():
                signal.raise_signal(signal.SIGUSR1)
                signal.raise_signal(signal.SIGUSR2)
                assert seen == []
        assert e.value.code == 3 and seen == [signal.SIGUSR1, signal.SIGUSR2]
    finally:
        signal.signal(signal.SIGUSR1, old1)
        signal.signal(signal.SIGUSR2, old2)


def test_a_signal_whose_handler_raises_while_the_handlers_are_put_back_leaves_none_held():
    """No MPI: SIGUSR1 arrives when its handler is already put back and SIGUSR2's is not yet, and
    its handler exits. Every handler is still put back and SIGUSR2, held back during the run, still
    delivered; before, SIGUSR2 kept dlbkit's holding handler for good and was never delivered.
    The arrival is placed by a trace function at a line of the restoration (where Python would run a
    real signal's handler), so the window is hit every time, not by timing."""
    import signal

    from dlbkit.runtime.backends import deferred
    from dlbkit.runtime.backends.deferred import Deferred

    seen, fired = [], []

    def exiting(signum, frame):
        seen.append(signum)
        raise SystemExit(3)

    def counting(signum, frame):
        seen.append(signum)

    def between_two_restorations(frame, event, arg):
        if frame.f_code.co_filename != deferred.__file__:
            return None

        def at_line(frame, event, arg):
            if (event == "line" and not fired and signal.getsignal(signal.SIGUSR1) is exiting
                    and signal.getsignal(signal.SIGUSR2) is not counting):
                fired.append(frame.f_code.co_name)
                signal.raise_signal(signal.SIGUSR1)  # its handler's SystemExit comes out at this line
            return at_line
        return at_line

    old1 = signal.signal(signal.SIGUSR1, exiting)
    old2 = signal.signal(signal.SIGUSR2, counting)
    old_trace = sys.gettrace()
    try:
        with pytest.raises(SystemExit) as e:
            with Deferred():
                signal.raise_signal(signal.SIGUSR2)
                assert seen == []
                sys.settrace(between_two_restorations)
        sys.settrace(old_trace)
        assert fired, "the restoration never reached the window between SIGUSR1 and SIGUSR2"
        assert e.value.code == 3 and seen == [signal.SIGUSR1, signal.SIGUSR2]
        assert signal.getsignal(signal.SIGUSR1) is exiting and signal.getsignal(signal.SIGUSR2) is counting
    finally:
        sys.settrace(old_trace)
        signal.signal(signal.SIGUSR1, old1)
        signal.signal(signal.SIGUSR2, old2)
