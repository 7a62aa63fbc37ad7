"""``dlbkit.spmd``: 1-D decomposed stencils on real workers equal the serial loop, and rows
move away from a slow worker. Local runs and real ``mpiexec`` jobs (each under a timeout)."""

import json
import multiprocessing
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

import dlbkit
from dlbkit import SpmdResult, run_spmd, spmd
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.balancers.registry import REGISTRY
from dlbkit.errors import ConfigError, TaskError

from support import TESTS
from support.mpi import run_job

TOL = 1e-12
MPI_TIMEOUT = 90  # seconds for any one mpiexec job
# seconds of (sleeping) work per row and iteration: load ∝ rows, no CPU used. The tests read which worker
# measured slowest, so a fast worker's wall-clock noise (woken late on a loaded machine) must stay well
# below the emulated 4× difference: at 2e-5 (0.64 ms per 32-row iteration) a 20 ms delay in a 10-iteration
# window made a fast worker look the slowest (about 1 run in 30-100 under load); 2e-4 needs 200 ms.
ROW_DELAY = 2e-4


class SlowestSheds(RepartitionBalancer):
    """Test-only rule: the slowest node gives an eighth of its rows to each neighbour it is > 30% slower than."""

    name = "test-slowest-sheds"
    source = "test"
    taxonomy = Taxonomy("periodic", "central", "global", "an eighth of the rows", "boundary rows")
    central = True
    _parameter_constraints: ClassVar[dict] = {}

    def __init__(self):
        pass

    def decide(self, view, node):
        t = view.loop_time
        s = max(range(view.n_nodes), key=lambda i: t[i])
        return [Transfer(s, j, max(1, view.points[s] // 8)) for j in view.neighbours[s] if t[s] > 1.3 * t[j]]


def jacobi(u):
    """A 2-D Jacobi sweep of u[1:-1] (one halo row each side); columns 0 and -1 fixed."""
    new = u[1:-1].copy()
    new[:, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return new


def weighted(u):
    """Jacobi plus ROW_DELAY seconds per row: a load proportional to the rows owned."""
    time.sleep(ROW_DELAY * (len(u) - 2))
    return jacobi(u)


def wide(u):
    """A 1-D stencil reaching two rows each side (halo 2)."""
    return (u[:-4] + 2 * u[1:-3] + 4 * u[2:-2] + 2 * u[3:-1] + u[4:]) / 10


def serial(step, domain, iterations, halo=1):
    u = np.array(domain)
    for _ in range(iterations):
        u[halo:-halo] = step(u)
    return u


def field(rows=34, cols=16, seed=1):
    return np.random.default_rng(seed).random((rows, cols))


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_unbalanced_run_equals_the_serial_loop(workers):
    """Without balancing the decomposed run equals the serial loop to 1e-12 (bit for bit here)."""
    d = field()
    r = run_spmd(jacobi, d, iterations=25, balancer=None, workers=workers)
    assert isinstance(r, SpmdResult)
    assert np.abs(r.domain - serial(jacobi, d, 25)).max() <= TOL
    assert sum(r.rows) == len(d) - 2 and len(r.rows) == workers
    assert r.trace.n_intervals == 25 * workers and r.transfers == []
    assert np.array_equal(d, field())  # the caller's domain is not written


needs_dlah = pytest.mark.skipif("dlah" not in REGISTRY, reason="the DLAH balancer is not registered")


@needs_dlah
@pytest.mark.parametrize("workers", [2, 3, 4])
def test_dlah_moves_rows_away_from_a_slow_worker_and_the_field_equals_serial(workers):
    """The default balancer (DLAH, 000 §7.3) on a real run: rows leave a worker four times slower,
    and the field still equals the serial loop."""
    d = field(rows=2 + 32 * workers)
    slow = 1
    speeds = [0.25 if w == slow else 1.0 for w in range(workers)]
    r = run_spmd(weighted, d, iterations=40, emulate=speeds, window=10)
    assert r.balancer.name == "dlah"
    assert np.abs(r.domain - serial(jacobi, d, 40)).max() <= TOL
    assert r.rows[slow] < 32
    assert sum(r.rows) == 32 * workers
    moved = [t for t in r.transfers if t[4] > 0]
    assert moved and moved[0][:2] == (10, slow)  # the first decision, after window 1, is the slow worker's
    # what the balancer saw: the slow worker's loop time is the largest in the first window
    first = r.trace.meta["windows"][0]
    assert first["loop"] == 10 and first["points"] == [32] * workers
    assert max(range(workers), key=lambda w: first["loop_time"][w]) == slow


def test_a_central_rule_is_called_once_per_window():
    """A central rule (node = -1) drives the same mechanics; rows moved are those of the decision."""
    d = field(rows=2 + 3 * 32)
    r = run_spmd(weighted, d, iterations=30, balancer=SlowestSheds(), emulate=[1.0, 1.0, 0.25], window=10)
    assert np.abs(r.domain - serial(jacobi, d, 30)).max() <= TOL
    assert [t[:3] for t in r.transfers][:1] == [(10, 2, 1)]  # the end worker sheds to its one neighbour
    assert r.rows[2] < 32 and sum(r.rows) == 96
    assert len(r.trace.meta["windows"]) == 2  # before iterations 10 and 20 (none at the end)


def test_halo_two_and_zero_iterations():
    d = np.random.default_rng(2).random(23)
    assert np.abs(spmd(wide, d, iterations=15, halo=2, workers=3, balancer=None) - serial(wide, d, 15, 2)).max() <= TOL
    assert np.array_equal(spmd(wide, d, iterations=0, halo=2, workers=3, balancer=None), d)


def test_exception_in_step_is_a_task_error_with_worker_and_iteration():
    """A step that raises on worker 1's third iteration stops the run: TaskError, no worker left behind."""
    d = field(rows=22)
    d[15, 0] = -1.0  # a marker in a fixed column, inside worker 1's rows (interior rows 10..19)
    calls = []

    def step(u):
        if (u[1:-1, 0] == -1.0).any():
            calls.append(1)
            if len(calls) == 3:
                raise ZeroDivisionError("boom")
        return jacobi(u)

    with pytest.raises(TaskError, match="worker 1 at iteration 2.*boom") as info:
        run_spmd(step, d, iterations=10, workers=2, balancer=None)
    assert (info.value.worker, info.value.iteration) == (1, 2)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert multiprocessing.active_children() == []


def test_a_step_returning_the_wrong_shape_is_a_task_error():
    with pytest.raises(TaskError, match="shape"):
        run_spmd(lambda u: u, field(), iterations=2, workers=2, balancer=None)


@pytest.mark.parametrize("kwargs, field_name", [
    ({"domain": np.zeros((5, 3)), "workers": 4}, "domain"),  # 3 interior rows for 4 workers
    ({"domain": np.zeros((9, 3)), "workers": 3, "halo": 2}, "domain"),  # 5 interior rows, 3×2 needed
    ({"halo": 0}, "halo"),
    ({"iterations": -1}, "iterations"),
    ({"window": 0}, "window"),
    ({"balancer": "ss"}, "balancer"),  # a chunking balancer
    ({"step": 3}, "step"),
    ({"backend": "tcp"}, "backend"),
    ({"domain": np.float64(1.0)}, "domain"),
])
def test_bad_input_is_a_config_error_naming_the_field(kwargs, field_name):
    args = {"step": jacobi, "domain": field(), "iterations": 3, "workers": 2, "balancer": None, **kwargs}
    step, domain = args.pop("step"), args.pop("domain")
    with pytest.raises(ConfigError) as info:
        run_spmd(step, domain, **args)
    assert info.value.field == field_name


# --- MPI ------------------------------------------------------------------------------------------
MPIEXEC = Path(sys.executable).with_name("mpiexec")
mpi = pytest.mark.skipif(not MPIEXEC.exists() and not shutil.which("mpiexec"), reason="no mpiexec")

JOB = """
import sys
import numpy as np
from mpi4py import MPI
from dlbkit import run_spmd
sys.path[:0] = [{here!r}, {tests!r}]
from test_spmd import field, jacobi, serial, weighted

rank, n = MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size() - 1
d = field(rows=2 + 24 * n)
speeds = [0.25 if w == n - 1 else 1.0 for w in range(n)]
fail = {fail!r}

def step(u):
    if fail and (u[1:-1, 0] == -1.0).any():
        raise ValueError("bad row")
    return weighted(u)

if fail:
    d[3, 0] = -1.0
r = run_spmd(step, d, iterations=30, backend="mpi", emulate=speeds, window=10,
              balancer=None if fail else "dlah")
ok = np.abs(r.domain - serial(jacobi, d, 30)).max() <= 1e-12
with open(f"report-{{rank}}.txt", "w") as f:  # one file per rank: mpiexec may merge stdout lines
    f.write(f"rank {{rank}}: equal {{ok}} rows {{sum(r.rows)}} slow {{r.rows[-1]}}")
"""


def _mpi_job(tmp_path, n, fail=False):
    pytest.importorskip("mpi4py")
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB.format(here=str(Path(__file__).parent), tests=TESTS, fail=fail)))
    return run_job([sys.executable, script], n, cwd=tmp_path, timeout=MPI_TIMEOUT)


@mpi
@needs_dlah
@pytest.mark.parametrize("n", [3, 4])
def test_mpi_run_equals_serial_on_every_rank(tmp_path, n):
    done = _mpi_job(tmp_path, n)
    assert done.returncode == 0, done.stderr
    lines = [(tmp_path / f"report-{rank}.txt").read_text() for rank in range(n)]
    assert len(lines) == n
    for rank, line in enumerate(lines):
        words = line.split()
        assert words[:4] == ["rank", f"{rank}:", "equal", "True"], line
        assert int(words[5]) == 24 * (n - 1)  # every rank holds the whole final domain
        assert int(words[7]) < 24  # the slow last worker shed rows


@mpi
def test_mpi_step_error_ends_the_job_with_a_message(tmp_path):
    done = _mpi_job(tmp_path, 3, fail=True)
    assert done.returncode != 0
    assert "step failed on worker 0 at iteration 0: ValueError: bad row" in done.stderr
    assert "dlbkit: rank 2 stopping: step failed on worker 0 (rank 1) at iteration 0" in done.stderr


def test_real_transfers_are_rows_of_the_loop_they_were_decided_after():
    """As in the simulator (dlbkit.families.spmd.model.trace): a move made before iteration it was decided at the
    end of loop it - 1, and its time is when that loop ended on the sender."""
    from dlbkit.families.spmd.model.trace import finish_times
    r = dlbkit.run_spmd(_mean3, np.linspace(0.0, 1.0, 62), iterations=40, window=5, workers=3, balancer="dlah",
                        emulate=[1.0, 0.25, 1.0])
    assert r.trace.transfers and r.metrics["dp_moved"] == sum(t[4] for t in r.trace.transfers) > 0
    ends = finish_times(r.trace)
    for loop, when, src, dst, n in r.trace.transfers:
        assert (loop + 1) % 5 == 0 and when == ends[loop, src] and abs(src - dst) == 1 and n > 0
    assert {(it - 1, s, d, k) for it, s, d, _a, k in r.transfers if k} == {(lp, s, d, n) for lp, _t, s, d, n in
                                                                            r.trace.transfers}


def _mean3(u):
    return (u[:-2] + u[1:-1] + u[2:]) / 3.0


# --- the user's code that runs in the coordinator --------------------------------------------------
class FailingRule(RepartitionBalancer):
    """A repartition rule of the user's that raises: it runs in the coordinator, not in a worker."""

    name = "test-failing-rule"

    def decide(self, view, node):
        raise ValueError("no rule for this view")


def test_a_failure_of_the_users_code_in_the_coordinator_names_it_and_no_worker():
    """A balancer's rule raising in the coordinator is the user's exception as it is, with a note naming
    the function (a stack through dlbkit's coordinator, its workers killed, read as theirs otherwise)."""
    with pytest.raises(ValueError, match="no rule for this view") as info:
        dlbkit.run_spmd(_mean3, np.linspace(0.0, 1.0, 22), iterations=4, window=2, workers=2, balancer=FailingRule())
    line = FailingRule.decide.__code__.co_firstlineno + 1
    assert info.value.__notes__ == [f"dlbkit: raised by FailingRule.decide (test_spmd.py:{line}) in the "
                                    "coordinator (this process), not in a worker"]


class StdlibFailingRule(RepartitionBalancer):
    """A rule of the user's whose failure is raised inside the standard library it calls."""

    name = "test-stdlib-failing-rule"

    def decide(self, view, node):
        return json.loads("{not json")


def test_a_failure_raised_in_the_stdlib_the_users_code_called_names_the_users_function():
    """The note named the innermost frame outside dlbkit: here json's decoder ("raised by
    JSONDecoder.raw_decode (decoder.py:…)"), which is no one's failing code. It names the user's
    function dlbkit called, at its line that made the failing call."""
    with pytest.raises(json.JSONDecodeError) as info:
        dlbkit.run_spmd(_mean3, np.linspace(0.0, 1.0, 22), iterations=4, window=2, workers=2,
                        balancer=StdlibFailingRule())
    line = StdlibFailingRule.decide.__code__.co_firstlineno + 1
    assert info.value.__notes__ == [f"dlbkit: raised by StdlibFailingRule.decide (test_spmd.py:{line}) in "
                                    "the coordinator (this process), not in a worker"]


TYPED_IN = """
import numpy as np, dlbkit
from dlbkit.families.spmd.balancers.base import RepartitionBalancer
class R(RepartitionBalancer):
    name = "r-typed"
    def decide(self, view, node):
        raise ValueError("typed in")
try:
    dlbkit.run_spmd(lambda u: u[1:-1], np.linspace(0.0, 1.0, 22), iterations=4, window=2, workers=2, balancer=R())
except ValueError as e:
    print(e.__notes__)
"""


def test_a_rule_typed_in_with_python_c_is_named_too():
    """Code without a file (``python -c``'s ``<string>``, ``<stdin>``, a notebook cell) is the user's,
    not the standard library's (only ``<frozen …>`` modules are)."""
    done = subprocess.run([sys.executable, "-c", TYPED_IN], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == ("['dlbkit: raised by R.decide (<string>:7) in the coordinator (this process), "
                                   "not in a worker']"), (done.stdout, done.stderr[-2000:])


CTRL_C_JOB = """
import signal, sys, time
import dlbkit
sys.path.insert(0, {tests!r})
from support.signals import signal_when

def nap(x):
    time.sleep(0.5)
    return x

if __name__ == "__main__":
    # Ctrl-C as the coordinator's wait on its workers' pipes enters the selector (a 1 s timer came
    # in a start-up slower than that under load, and the test passed without testing the wait)
    sys.setprofile(signal_when("wait", "select", signal.SIGINT, marker="interrupted-in-select"))
    try:
        dlbkit.map(nap, range(40), workers=2, balancer="ss", progress=False)
    except KeyboardInterrupt as e:
        print("notes:", getattr(e, "__notes__", None))
"""


def test_ctrl_c_while_the_coordinator_waits_is_not_noted_as_someones_failure(tmp_path):
    """Ctrl-C while the coordinator waited on its workers' pipes got the note "raised by
    _PollLikeSelector.select (selectors.py:415) in the coordinator (this process), not in a worker":
    the standard library's wait, named as the user's failing code. An interrupt has no such note."""
    script = tmp_path / "job.py"
    script.write_text(CTRL_C_JOB.format(here=str(Path(__file__).parent), tests=TESTS))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False,
                          cwd=tmp_path)
    assert (tmp_path / "interrupted-in-select").exists(), ("the coordinator never waited in a selector",
                                                           done.stdout, done.stderr[-2000:])
    assert done.stdout.strip() == "notes: None", (done.stdout, done.stderr[-2000:])


FAILING_RULE_JOB = """
import sys
import numpy as np
from mpi4py import MPI
import dlbkit
sys.path[:0] = [{here!r}, {tests!r}]
from test_spmd import FailingRule, _mean3

try:
    dlbkit.run_spmd(_mean3, np.linspace(0.0, 1.0, 22), iterations=4, window=2, backend="mpi", balancer=FailingRule())
except ValueError as e:
    # one write: the worker ranks' lines reach the same stderr, and print's pieces interleave with them
    sys.stderr.write(f"rank 0 notes: {{e.__notes__}}\\n")
    sys.stderr.flush()
"""


@mpi
def test_under_mpi_the_worker_ranks_name_the_users_function_that_failed_on_rank_0(tmp_path):
    pytest.importorskip("mpi4py")
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(FAILING_RULE_JOB.format(here=str(Path(__file__).parent), tests=TESTS)))
    done = run_job([sys.executable, script], 3, cwd=tmp_path, timeout=MPI_TIMEOUT)
    line = FailingRule.decide.__code__.co_firstlineno + 1
    where = f"FailingRule.decide (test_spmd.py:{line})"
    for k in (1, 2):
        assert (f"dlbkit: rank {k} stopping: rank 0 stopped the run: ValueError: no rule for this view (raised by "
                f"{where} on rank 0)") in done.stderr, done.stderr
    assert f"rank 0 notes: ['dlbkit: raised by {where} in the coordinator (rank 0), not in a worker']" in done.stderr
