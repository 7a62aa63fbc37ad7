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


# --- an availability level that brings a worker below MIN_EMULATED_SPEED ---------------------------------
LOW = Platform([Node("m"), Node("a", speed=1.0),
                Node("b", speed=0.5, cores=2, availability=dlbkit.model.availability.Step(at=1e3, level=1e-3))])
LOW_SAID = ("emulated availability level 0.001 of worker 1 (node 'b', speed 0.5) (and 1 other worker) gives an "
            "effective speed 0.0005, below 0.001: while that level lasts, every item there takes 2e+03 times its "
            "real time (a millisecond of work takes 2 s), so the run may take very long")


def test_a_low_availability_level_warns_naming_the_worker_and_the_level():
    """A level of 1e-3 on a node of speed 0.5 stretches its items 2 000 times, as a factor of 5e-4
    does; the factor was warned about, the level was not."""
    from dlbkit.model.availability import Markov, Pulse, Recorded

    with pytest.warns(DlbkitWarning) as w:
        emulation_from(LOW, master="m")
    assert [str(x.message) for x in w] == [LOW_SAID] and w[0].filename == __file__
    # every kind, by its lowest level, and only below the threshold (speed × level = 1e-3 is not)
    for availability, level in ((Markov(1.0, 1.0, low=1e-4), "0.0001"), (Pulse(5.0, 1.0, level=0.5, base=1e-4), "0.0001"),
                                (Recorded((0.0, 9.0), (1.0, 2e-4)), "0.0002")):
        with pytest.warns(DlbkitWarning, match=rf"^emulated availability level {level} of worker 0 \(node 'x', speed 1\) "
                                                rf"gives an effective speed {level}, below 0\.001: "):
            emulation_from(Platform([Node("x", availability=availability)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DlbkitWarning)
        emulation_from(Platform([Node("x", speed=0.5, availability=dlbkit.model.availability.Step(at=1.0, level=2e-3))]))
        emulation_from(Platform([Node("x", availability=dlbkit.model.availability.Step(at=0.0, level=0.5, before=1e-9))]))
    # a tiny speed and a low level: one warning of both
    with pytest.warns(DlbkitWarning) as w:
        emulation_from(Platform([Node("x", speed=1e-4, availability=0.5)]))
    assert len(w) == 1 and str(w[0].message).startswith("emulated speeds below 0.001 (the slowest 0.0001)")
    assert "; emulated availability level 0.5 of worker 0 (node 'x', speed 0.0001) gives an effective speed 5e-05" in str(w[0].message)


def test_a_run_on_a_platform_with_a_low_level_warns_once(recwarn):
    warnings.simplefilter("always", DlbkitWarning)
    with dlbkit.Loop(abs, emulate=LOW, master="m") as loop:
        assert loop.map([-1, 2, -3]) == [1, 2, 3] and loop.map([-4]) == [4]
    assert [str(w.message) for w in recwarn.list if "availability level" in str(w.message)] == [LOW_SAID]


def _low_toml(tmp_path):
    (tmp_path / "p.toml").write_text('[[nodes]]\nname = "m"\nspeed = 1\n[[nodes]]\nname = "a"\nspeed = 1\n[[nodes]]\n'
                                     'name = "b"\nspeed = 0.5\ncores = 2\n'
                                     'availability = {kind = "step", at = 1e3, level = 1e-3}\n')


def test_the_cli_says_a_low_level_in_one_line(tmp_path):
    _low_toml(tmp_path)
    p = subprocess.run([sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--emulate", "p.toml",
                        "--master", "m"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()  # and, on this 2-CPU machine, the three workers' own warning
    assert [x for x in lines if "emulated" in x] == [f"dlbkit: warning: {LOW_SAID}"], lines


def test_an_mpi_job_says_a_low_level_once(tmp_path):
    """Real ranks (``--ranks 4``: three worker ranks for the three cores): rank 0 says it, once."""
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    _low_toml(tmp_path)
    p = subprocess.run([sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--emulate", "p.toml",
                        "--master", "m", "--backend", "mpi", "--ranks", "4", "--no-progress"],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("availability level") == 1 and f"dlbkit: warning: {LOW_SAID}" in p.stderr, p.stderr
