"""No local worker outlives its coordinator, however the coordinator ends, on every family; the
worker count is bounded before anything starts; more workers than CPUs is said, once."""

import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import dlbkit
from dlbkit import ConfigError, DlbkitWarning
from dlbkit.families.divisible.balancers.static import Static
from dlbkit.runtime.backends import local
from dlbkit.runtime.backends.local import default_workers, max_workers

TIMEOUT = 30  # seconds for a coordinator to start its workers
GONE_S = 5.0  # a worker must be gone this soon after its coordinator

# each script's user code records the pid of every worker that runs it, then takes long
SCRIPTS = {
    "map": """
        def slow(x):
            mark()
            time.sleep(0.5)
            return x
        dlbkit.map(slow, range(10000), workers=2, balancer="ss")
    """,
    "tree": """
        def expand(depth):
            mark()
            time.sleep(0.2)
            return [depth + 1, depth + 1], 1
        dlbkit.tree(expand, 0, workers=2)
    """,
    "spmd": """
        import numpy as np
        def step(u):
            mark()
            time.sleep(0.2)
            return u[1:-1]
        dlbkit.spmd(step, np.zeros(10), iterations=10000, workers=2, balancer=None)
    """,
}


def _script(tmp_path, family: str):
    pids = tmp_path / "pids"
    pids.mkdir()
    path = tmp_path / f"{family}.py"
    path.write_text(textwrap.dedent(f"""
        import os, time, dlbkit
        def mark():
            open(os.path.join({str(pids)!r}, str(os.getpid())), "w").close()
    """) + textwrap.dedent(SCRIPTS[family]))
    return path, pids


def alive(pid: int) -> bool:
    """True while *pid* runs (a zombie, dead but not yet reaped by its new parent, is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = [p for p in pids if alive(p)]
        if not left:
            return []
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def _start(tmp_path, family: str) -> tuple[subprocess.Popen, list[int]]:
    path, pid_dir = _script(tmp_path, family)
    proc = subprocess.Popen([sys.executable, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    while len(os.listdir(pid_dir)) < 2 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    workers = [int(p) for p in os.listdir(pid_dir)]
    if len(workers) < 2:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the {family} workers did not start: {err}")
    return proc, workers


@pytest.mark.parametrize("family", sorted(SCRIPTS))
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_worker_outlives_a_killed_coordinator(tmp_path, family, sig):
    """SIGTERM (a scheduler's time limit) or SIGKILL to the coordinator: its workers end within seconds."""
    proc, workers = _start(tmp_path, family)
    try:
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == -sig  # SIGTERM still ends the process as SIGTERM does, after clean-up
        assert "Traceback" not in err
        assert _wait_gone(workers, GONE_S) == []
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_ends_with_its_coordinator_without_a_death_signal(tmp_path):
    """The portable path alone (no prctl, as on macOS): the watchdog notices the coordinator is gone."""
    ready = tmp_path / "ready"
    script = tmp_path / "tie.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys, time
        from dlbkit.runtime.backends import local
        coordinator = os.getpid()
        child = os.fork()
        if child == 0:
            sys.platform = "darwin"  # no PR_SET_PDEATHSIG: the watchdog thread alone
            local._tie_to_coordinator(coordinator)
            open({str(ready)!r}, "w").write(str(os.getpid()))
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
    """))
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (ready.exists() and ready.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        worker = int(ready.read_text())
        proc.kill()
        proc.wait(timeout=TIMEOUT)
        assert _wait_gone([worker], GONE_S) == []
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_handler_is_restored_after_a_run():
    assert dlbkit.map(abs, [-1, 2], workers=1) == [1, 2]
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def _on_term(signum, frame):  # pragma: no cover - never called: only installed
    pass


class SetsSigterm(Static):
    """STATIC whose first decision installs a SIGTERM handler of the user's (in the coordinator)."""

    def chunk(self, view, worker):
        if signal.getsignal(signal.SIGTERM) is not _on_term:
            signal.signal(signal.SIGTERM, _on_term)
        return super().chunk(view, worker)


def test_a_sigterm_handler_set_during_a_run_is_kept_after_it():
    """The run put SIG_DFL back whatever the user's code had set meanwhile."""
    try:
        assert dlbkit.map(abs, [-1, 2], workers=1, balancer=SetsSigterm()) == [1, 2]
        assert signal.getsignal(signal.SIGTERM) is _on_term
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


# --- bounds on the worker count ----------------------------------------------------------------
def _huge_runs():
    return {
        "map": lambda **kw: dlbkit.map(abs, [1, 2, 3], **kw),
        "tree": lambda **kw: dlbkit.tree(lambda n: ([], 1), 0, **kw),
        "spmd": lambda **kw: dlbkit.spmd(lambda u: u[1:-1], np.zeros(10), iterations=1, balancer=None, **kw),
    }


@pytest.mark.parametrize("family", ["map", "tree", "spmd"])
def test_absurd_worker_counts_are_refused_before_any_process_starts(family, monkeypatch):
    started = []
    monkeypatch.setattr(local, "LocalTransport", lambda *a, **k: started.append(a))
    limit, _ = max_workers()
    t = time.monotonic()
    for n in (10**9, limit + 1):
        with pytest.raises(ConfigError, match=rf"^workers must be .*at most {limit}.*; got {n}$"):
            _huge_runs()[family](workers=n)
    assert started == [] and time.monotonic() - t < 5


def test_an_emulated_platform_too_large_for_this_machine_is_refused():
    limit, _ = max_workers()
    with pytest.raises(ConfigError, match=r"^emulate \(one worker per emulated core\) must be .*at most"):
        dlbkit.map(abs, [1], emulate=[1.0] * (limit + 1))


def test_the_limit_is_at_least_256_and_within_the_open_file_limit():
    limit, why = max_workers()
    resource = pytest.importorskip("resource")
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert limit >= min(256, (soft - 64) // local.FDS_PER_WORKER)
    if soft != resource.RLIM_INFINITY:
        assert limit * local.FDS_PER_WORKER <= soft
    assert str(limit) in why


# --- more workers than CPUs ---------------------------------------------------------------------
def test_more_workers_than_cpus_warns_that_efficiency_is_not_meaningful():
    n = default_workers() + 1
    with pytest.warns(DlbkitWarning, match=rf"^{n} workers on {n - 1} usable CPUs?: .*efficiency"):
        assert dlbkit.map(abs, [-1, 2, -3], workers=n) == [1, 2, 3]


def test_workers_within_the_cpus_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DlbkitWarning)
        assert dlbkit.map(abs, [-1, 2], workers=1) == [1, 2]


def test_the_cli_says_it_in_one_line(tmp_path):
    n = default_workers() + 1
    p = subprocess.run([sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--workers", str(n)],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"dlbkit: warning: {n} workers on ")
