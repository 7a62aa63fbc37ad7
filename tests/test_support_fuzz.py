"""The fuzzers' hang guard (tests/support/fuzz.py): CPU time by default, so a loaded machine does not
trip it, and wall-clock time on request, for a block that waits on other processes."""

import time

import pytest

from support.fuzz import Hang, deadline


def test_a_loop_is_stopped_by_its_cpu_time():
    with pytest.raises(Hang, match="CPU time"):
        with deadline(0.2):
            while True:
                pass


def test_waiting_uses_no_cpu_time_and_is_not_stopped():
    with deadline(0.2):
        time.sleep(0.5)  # wall-clock time passes, this process's CPU time does not


def test_a_wait_is_stopped_by_a_wall_clock_deadline():
    with pytest.raises(Hang, match="wall-clock"):
        with deadline(0.2, wall=True):
            time.sleep(5)
