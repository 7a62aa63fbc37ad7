"""The local runtime: real worker processes driven by the same chunking balancers as the simulator."""

import copy
import functools
import io
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import dlbkit
from dlbkit import ChunkingBalancer, ConfigError, Divisible, Network, Node, Platform, TaskError, Taxonomy
from dlbkit.balancers.registry import REGISTRY
from dlbkit.runtime.emulation import Emulation
from dlbkit.runtime.progress import Progress
from dlbkit.families.divisible.sim.engine import simulate_divisible

from support import HANG_S, wait_until


def square(x):
    return x * x


def uneven(x):
    """A few hundred microseconds of real work, uneven across items."""
    s = 0
    for i in range(300 * (1 + x % 5)):
        s += i ^ x
    return s


def _tiles(trace, n):
    pos = 0
    for first, count in sorted(zip(trace.first, trace.count)):
        if first != pos:
            return False
        pos += count
    return pos == n


CHUNKING = sorted(n for n, c in REGISTRY.items() if c.kind == "chunking")


@pytest.mark.parametrize("name", CHUNKING)
def test_every_chunking_balancer_gives_the_serial_results(name):
    items = list(range(157))
    r = dlbkit.run_map(uneven, items, balancer=name, workers=2, seed=3)
    assert r.results == [uneven(x) for x in items]
    assert _tiles(r.trace, len(items))
    assert sum(r.trace.count) == len(items)
    assert r.metrics["makespan"] >= r.metrics["lower_bound"] * (1 - 1e-9)


def test_map_accepts_any_iterable_and_keeps_input_order():
    assert dlbkit.map(square, (x for x in range(50)), workers=3, balancer="gss") == [x * x for x in range(50)]
    assert dlbkit.map(square, [], workers=2) == []


def test_measurements_reach_the_view_as_in_the_simulator():
    r = dlbkit.run_map(uneven, list(range(200)), workers=2, balancer="fac2")
    done = [sum(c for w, c in zip(r.trace.node, r.trace.count) if w == i) for i in range(2)]
    assert sum(done) == 200
    assert r.trace.total_work > 0 and len(r.trace.meta["item_cost"]) == 200
    assert r.trace.source == "local"


def test_exception_surfaces_with_index_and_traceback_and_no_orphans():
    def boom(x):
        if x == 41:
            raise ValueError(f"bad item {x}")
        return x

    with pytest.raises(TaskError) as e:
        dlbkit.map(boom, range(100), workers=2, balancer="ss")
    err = e.value
    assert err.index == 41 and err.what == "item"
    assert "bad item 41" in str(err) and "in boom" in err.remote_traceback
    assert isinstance(err.__cause__, ValueError)
    import multiprocessing
    wait_until(lambda: multiprocessing.active_children() == [], "every worker ended after the run")


def test_a_killed_worker_loses_nothing_and_duplicates_nothing(tmp_path):
    marker = tmp_path / "killed"

    def dies_once(x):
        if x == 30 and not marker.exists():
            marker.write_text("x")
            os.kill(os.getpid(), signal.SIGKILL)  # killed mid-chunk
        return -x

    r = dlbkit.run_map(dies_once, list(range(120)), workers=3, balancer="static", params={"size": 7})
    assert r.results == [-x for x in range(120)]
    assert _tiles(r.trace, 120)  # the lost chunk was redone once, by another worker
    faults = r.trace.meta["faults"]
    assert len(faults) == 1 and faults[0][1] <= 30 < faults[0][1] + faults[0][2]


def test_every_worker_dying_is_an_error():
    def die(x):
        os._exit(3)

    with pytest.raises(dlbkit.DlbkitError, match="every worker died"):
        dlbkit.map(die, range(10), workers=2)


def test_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError, match="backend"):
        dlbkit.map(square, [1], backend="carrier-pigeon")
    with pytest.raises(ConfigError, match="workers"):
        dlbkit.map(square, [1], workers=0)
    with pytest.raises(ConfigError, match="chunking balancer"):
        dlbkit.map(square, [1], balancer=_NotChunking())
    with pytest.raises(ConfigError, match="emulate"):
        dlbkit.map(square, [1], emulate=[1.0, -2.0])
    with pytest.raises(ConfigError, match="worker count"):
        dlbkit.map(square, [1], emulate=[1.0, 2.0], workers=3)


class _NotChunking(dlbkit.Balancer):
    name = "not-chunking"
    kind = "placement"
    source = "test"
    taxonomy = Taxonomy("-", "-", "-", "-", "-")

    def __init__(self):
        pass


def nap_square(x):
    """2 ms of waiting, then x²: the emulation stretches measured busy time whatever fills it, and a
    sleep, unlike a spin, is not slowed down by other processes on a loaded machine."""
    time.sleep(0.002)
    return x * x


def test_emulated_slow_worker_does_less():
    """Speeds 1 and 0.2: the slow worker's items take five times as long, so it gets fewer of them.

    With ``ss`` each item costs a request round trip that is not stretched; the items sleep 2 ms so
    that the stretch dominates it even on a loaded machine (a spin of a few hundred µs did not: this
    test failed once in a full run beside other jobs). Expected shares about 5 : 1; asserted > 2 : 1."""
    r = dlbkit.run_map(nap_square, list(range(150)), emulate=[1.0, 0.2], balancer="ss")
    done = [sum(c for w, c in zip(r.trace.node, r.trace.count) if w == i) for i in range(2)]
    assert sum(done) == 150
    assert done[0] > 2 * done[1], done
    assert r.results == [x * x for x in range(150)]


def test_emulation_duration_closed_form():
    from dlbkit import Step
    p = Platform([Node("a", speed=2.0, availability=Step(at=1.0, level=0.5)), Node("b", speed=0.5)])
    em = Emulation.from_platform(p)
    # a: 1 s of work at speed 2 from t=0.5: 0.5 s at full share does 1 s·2·0.5=... work units 0.5/2
    # busy 1.0 s -> 0.5 capacity-seconds needed: 0.5 by t=1.0 (capacity 0.5), done at 1.0
    assert em.duration(0, 0.5, 1.0) == pytest.approx(0.5)
    # 2 s of work from t=0.5: 0.5 by t=1, the remaining 0.5 at level 0.5 takes 1 s -> ends at 2.0
    assert em.duration(0, 0.5, 2.0) == pytest.approx(1.5)
    assert em.duration(1, 0.0, 1.0) == pytest.approx(2.0)


def test_progress_bar_only_when_asked_or_on_a_terminal():
    buf = io.StringIO()
    p = Progress(10, None, stream=buf)
    p.update(5, force=True)
    p.close()
    assert buf.getvalue() == ""  # StringIO is not a terminal
    buf = io.StringIO()
    p = Progress(10, True, stream=buf)
    p.update(5, force=True)
    p.close()
    assert re.search(r"50%\|.*\| 5/10 \[", buf.getvalue())


def _listening_inodes() -> set[str]:
    """Inodes of this machine's listening TCP and bound unconnected UDP sockets (Linux /proc)."""
    out = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(name) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if parts[3] in ("0A", "07"):  # LISTEN (tcp), unconnected (udp)
                        out.add(parts[9])
        except FileNotFoundError:
            pass
    return out


def _process_tree(root: int) -> set[int]:
    """*root* and every process descended from it (a worker's parent may be a fork server)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])  # the name in (...) may hold spaces
        except (OSError, IndexError, ValueError):  # the process ended meanwhile
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = set(), [root]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo.extend(children.get(pid, []))
    return tree


def _listeners_of(root: int) -> set[str]:
    """The listening sockets held by *root*'s process tree. Only its own: the machine's whole list
    also showed other jobs' listeners (another user's ``mpiexec`` starting meanwhile failed this test)."""
    held = set()
    for pid in _process_tree(root):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                held.add(target[8:-1])
    return held & _listening_inodes()


def _listeners_during_run(root, _x):
    time.sleep(0.05)  # the other workers are started and running too
    return sorted(_listeners_of(root))


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="needs Linux /proc")
def test_local_backend_opens_no_network_listener():
    """No process of the run (the caller, its workers, any helper they start) holds a listening
    socket it did not hold before the run."""
    root = os.getpid()
    before = _listeners_of(root)
    seen = dlbkit.map(functools.partial(_listeners_during_run, root), range(4), workers=2, balancer="ss")
    assert len(seen) == 4
    for s in seen:
        assert set(s) <= before, f"listening sockets opened by the run: {sorted(set(s) - before)}"


class _Recorder(ChunkingBalancer):
    """Wraps a balancer and records (view, worker, decision) at each call (test double)."""

    name = "recorder"
    source = "test"
    taxonomy = Taxonomy("-", "-", "-", "-", "-")

    def __init__(self, *, inner=None):
        self.inner = inner

    def start(self, view, rng=None):
        super().start(view, rng)
        self.inner.start(view, rng)
        self.calls_ = []

    def chunk(self, view, worker):
        n = self.inner.chunk(view, worker)
        self.calls_.append((copy.deepcopy(view), worker, n))
        return n


@pytest.mark.parametrize("name", ["gss", "fac2", "awf-c", "af", "awf-e"])
def test_same_view_same_decision_in_simulator_and_runtime(name):
    """The balancer is engine-blind: replaying the views either engine showed it to a fresh copy
    gives the same decisions, and the first decision (same initial view) is the same in both."""
    real = _Recorder(inner=dlbkit.make(name))
    dlbkit.run_map(uneven, list(range(300)), balancer=real, workers=2)
    p = Platform([Node("m"), Node("a"), Node("b")], Network(latency=1e-4))
    sim = _Recorder(inner=dlbkit.make(name))
    simulate_divisible(p, Divisible(300), sim)
    for rec in (real, sim):
        fresh = dlbkit.make(name)
        fresh.start(copy.deepcopy(rec.calls_[0][0]))
        for view, w, n in rec.calls_:
            assert fresh.chunk(copy.deepcopy(view), w) == n
    assert real.calls_[0][2] == sim.calls_[0][2]


def test_ctrl_c_stops_the_workers(tmp_path):
    pids = tmp_path / "pids"
    pids.mkdir()
    script = tmp_path / "long.py"
    script.write_text(textwrap.dedent(f"""
        import os, time, dlbkit
        def slow(x):
            open(os.path.join({str(pids)!r}, str(os.getpid())), "w").close()
            time.sleep(0.2)
            return x
        print("started", flush=True)
        dlbkit.map(slow, range(10000), workers=2, balancer="ss")
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "started"
        # Ctrl-C once both workers compute (each wrote its pid): inside the run, wherever it is in it
        wait_until(lambda: len(os.listdir(pids)) >= 2, "both workers started an item")
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=HANG_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    workers = [int(p) for p in os.listdir(pids)]
    assert len(workers) == 2

    def gone(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(lambda: all(gone(pid) for pid in workers), "both workers ended after the coordinator")
