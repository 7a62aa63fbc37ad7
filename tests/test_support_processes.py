"""The check that no test leaves a process behind (tests/support/processes.py): it finds a child
left running, an orphan the test's child left (re-parented to init, found by the test's tag), and
kills both; a process that ends within the grace time, or one started before the test, is not a leak."""

import subprocess
import sys
import time

import psutil
import pytest

from support import processes
from support.processes import Watch

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]


@pytest.fixture
def short_grace(monkeypatch):
    monkeypatch.setattr(processes, "GRACE_S", 0.5)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_child_left_running_is_named_and_killed(short_grace):
    watch = Watch("test-child")
    watch.start()
    p = subprocess.Popen(SLEEP)
    try:
        left = watch.leaked()
        assert len(left) == 1 and left[0].startswith(f"pid {p.pid}: ") and "time.sleep(120)" in left[0]
        assert p.wait(timeout=10) is not None  # killed
    finally:
        p.kill()
        p.wait()


def test_an_orphan_of_the_tests_child_is_found_by_its_tag_and_killed(short_grace):
    watch = Watch("test-orphan")
    watch.start()
    # the child starts a grandchild and exits at once: the grandchild is re-parented to init
    done = subprocess.run([sys.executable, "-c", "import subprocess, sys; "
                           f"print(subprocess.Popen({SLEEP!r}, start_new_session=True, stdout=subprocess.DEVNULL, "
                           "stderr=subprocess.DEVNULL).pid)"],
                          capture_output=True, text=True, timeout=60, check=True)
    orphan = int(done.stdout)
    try:
        assert psutil.Process(orphan).ppid() != psutil.Process().pid
        left = watch.leaked()
        assert len(left) == 1 and left[0].startswith(f"pid {orphan}: ")
        assert not _alive(orphan)  # killed (and reaped by init)
    finally:
        if _alive(orphan):
            psutil.Process(orphan).kill()


def test_a_child_that_ends_within_the_grace_time_is_no_leak(monkeypatch):
    monkeypatch.setattr(processes, "GRACE_S", 60.0)
    watch = Watch("test-ending")
    watch.start()
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    t = time.monotonic()
    assert watch.leaked() == []
    assert time.monotonic() - t < 30  # it returned when the child ended, not at the ceiling
    p.wait()


def test_a_process_started_before_the_test_is_not_its_leak(short_grace):
    p = subprocess.Popen(SLEEP)
    try:
        watch = Watch("test-before")
        watch.start()
        assert watch.leaked() == []
        assert _alive(p.pid)
    finally:
        p.kill()
        p.wait()
