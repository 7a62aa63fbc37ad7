"""An emulated speed above 1 cannot be emulated (a worker computes at this machine's speed at most):
the run goes on with the speeds as given, and a DlbkitWarning says so, at the caller's line; the CLI
says it in one line. Speed factors in (0, 1] are emulated and warn nothing."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import dlbkit
from dlbkit import DlbkitWarning, Node, Platform
from dlbkit.runtime.emulation import Emulation, emulated_speed_warning, emulation_from


def test_the_warning_names_the_fastest_and_the_divisor():
    assert emulated_speed_warning([1.0, 0.5, 0.25]) is None
    assert emulated_speed_warning([1.0]) is None
    msg = emulated_speed_warning([1.0, 4.0, 2.0])
    assert msg.startswith("emulated speeds above 1 (the fastest 4) cannot be emulated") and "divide the speeds by 4" in msg


def test_a_speed_above_1_is_not_realised_so_it_warns():
    e = Emulation.from_speeds([2.0, 1.0])
    # the stretch never makes a worker faster than its real time: 1 s of work at speed 2 ends at 0.5 s
    # on the emulated clock, which a worker that has taken 1 s cannot sleep back to
    assert e.duration(0, 0.0, 1.0) == pytest.approx(0.5)
    with pytest.warns(DlbkitWarning, match=r"^emulated speeds above 1 \(the fastest 2\)") as w:
        emulation_from([2.0, 1.0])
    assert w[0].filename == __file__  # pointed at the caller, not at dlbkit
    with pytest.warns(DlbkitWarning, match=r"the fastest 4"):
        emulation_from(Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=4.0)]), master="m")


def test_speed_factors_up_to_1_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DlbkitWarning)
        emulation_from([1.0, 0.5, 0.25])
        emulation_from(Platform([Node("m"), Node("a", speed=1.0), Node("b", speed=0.5)]), master="m")
        assert dlbkit.map(abs, [-1, 2], workers=1, emulate=[0.5]) == [1, 2]


def test_a_run_with_speeds_above_1_warns_and_keeps_the_speeds(recwarn):
    warnings.simplefilter("always", DlbkitWarning)
    r = dlbkit.run_map(abs, [-1, 2, -3], emulate=[1.0, 3.0])
    assert r.results == [1, 2, 3] and list(r.trace.speeds) == [1.0, 3.0]
    assert any("the fastest 3" in str(w.message) for w in recwarn.list)


def test_the_cli_says_it_in_one_line(tmp_path):
    (tmp_path / "p.toml").write_text('[[nodes]]\nname = "m"\nspeed = 1\n[[nodes]]\nname = "a"\nspeed = 2\n')
    p = subprocess.run([sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--emulate", "p.toml",
                        "--master", "m"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dlbkit: warning: emulated speeds above 1 (the fastest 2)"), p.stderr
