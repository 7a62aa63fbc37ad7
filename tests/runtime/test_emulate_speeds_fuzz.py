"""Speed factors given to ``emulate=`` / ``--emulate``:
:mod:`runtime/test_emulate_platforms_fuzz` fuzzes platform files as emulations and :mod:`runtime/test_mpi_entries_fuzz`
a few emulations under MPI; here lists of speed factors of every length and odd values, through every
entry point: :func:`dlbkit.run_map`, :class:`dlbkit.Loop`, ``dlbkit run`` (local, and on real MPI
ranks with ``--backend mpi --ranks 3``) and ``dlbkit cluster``.

The rule: a list with a factor that is not a finite number in dlbkit's range (1e-30 to 1e30), or of
the wrong length for the workers or worker ranks, is one ConfigError naming it (the CLI: one line
naming ``--emulate``, exit 2, before any process starts); an accepted one runs every item once to the
right results, and warns (one line on the CLI) exactly when a factor is above 1 or below
:data:`~dlbkit.runtime.emulation.MIN_EMULATED_SPEED`. A run's factors are not below 1e-4 here (a
factor of 1e-9 stretches every item 10⁹ times: that is what the warning is for, checked without a
run). Derandomized; each MPI example is a job of a few seconds, the full tier runs each property at its full count.
"""

import json
import math
import subprocess
import sys
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import DlbkitWarning
from dlbkit.face.cli import main
from dlbkit.errors import ConfigError
from dlbkit.model.check import HUGE, TINY
from dlbkit.runtime.emulation import MIN_EMULATED_SPEED, emulated_speed_warning, emulation_from

from support import TESTS
from support.fuzz import FUZZ, deadline
from support.fuzz_emulate import _event as event
from support.fuzz_emulate import square
from support.profiles import examples

RUN_S = 60
#: factors a run may have here: slow ones stretch a few-microsecond item to tens of milliseconds
RUNNABLE = [1, 1.0, 0.5, 0.25, 2, 3.5, MIN_EMULATED_SPEED, 5e-4, 1e-4]
ODD = [0, 0.0, -1, -1e-9, math.nan, math.inf, -math.inf, 1e-40, 1e31, 10**400, True, None, "1", [1.0]]


def refusal(speeds, n_workers: int | None) -> str | None:
    """The field a list of factors is refused by (without the flag's name), or None."""
    if not speeds:
        return "emulate"
    for i, x in enumerate(speeds):
        ok = not isinstance(x, bool) and isinstance(x, (int, float))
        try:
            ok = ok and math.isfinite(x) and TINY <= x <= HUGE
        except OverflowError:
            ok = False
        if not ok:
            return f"emulate[{i}]"
    if n_workers is not None and len(speeds) != n_workers:
        return "emulate"
    return None


def expected_warnings(speeds) -> list[str]:
    said = []
    if max(speeds) > 1:
        said.append(f"emulated speeds above 1 (the fastest {max(speeds):g})")
    if min(speeds) < MIN_EMULATED_SPEED:
        said.append(f"emulated speeds below {MIN_EMULATED_SPEED:g} (the slowest {min(speeds):g})")
    return said


SPEEDS = st.lists(st.one_of(st.sampled_from(RUNNABLE), st.sampled_from(RUNNABLE), st.sampled_from(ODD)),
                  min_size=0, max_size=4)


def _speeds_through(entry: str, speeds: list, capsys) -> str:
    field = refusal(speeds, None)
    items = range(7)
    if entry in ("cli run", "cli cluster"):
        text = ",".join("nan" if isinstance(x, float) and math.isnan(x) else str(x) for x in speeds)
        if any(isinstance(x, (bool, list)) or x is None for x in speeds):
            return "skipped"  # the command line has numbers and words only: '1' is a number there
        speeds = [float(x) for x in text.split(",")] if text else []  # what the command line reads
        field = refusal(speeds, None)
        argv = (["run", "support.fuzz_emulate:square", "--items", "7", "--no-progress"] if entry == "cli run"
                else ["cluster", "support.fuzz_emulate:square", "--jobs", "4", "--rate", "1000"])
        with deadline(RUN_S, wall=True):
            # "--emulate=" and "--emulate -1e-09" alike (test_a_negative_factor_after_the_flag_reaches_dlbkits_check)
            code = main(argv + [f"--emulate={text}", "--seed", "1"])
        err = capsys.readouterr().err.strip("\n").splitlines()
        if field is not None or not speeds:
            want = "dlbkit: error: --emulate" + (field[len("emulate"):] if field and speeds else "")
            assert code == 2 and len(err) == 1 and err[0].startswith(want + " "), (speeds, err)
            event(f"{entry}: refused")
            return "refused"
        assert code == 0, (speeds, err)
        said = [e for e in err if e.startswith("dlbkit: warning: emulated")]
        assert len(said) == (1 if expected_warnings(speeds) else 0), err
        for part in expected_warnings(speeds):
            assert part in said[0], (part, said)
        event(f"{entry}: ran")
        return "ran"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", DlbkitWarning)
        warnings.simplefilter("error", RuntimeWarning)
        try:
            with deadline(RUN_S, wall=True):
                if entry == "api":
                    r = dlbkit.run_map(square, items, emulate=speeds, seed=1, progress=False)
                    got = r.results
                    assert list(r.trace.speeds) == [float(x) for x in speeds]  # kept as given
                else:
                    with dlbkit.Loop(square, emulate=speeds, seed=1) as loop:
                        got = [loop.map(items), loop.map(items)]
                    got = got[0] if got[0] == got[1] else got
        except ConfigError as e:
            assert field is not None and e.field == field and "\n" not in str(e), (speeds, field, str(e))
            event(f"{entry}: refused")
            return "refused"
    assert field is None, (speeds, field, "accepted")
    assert got == [x * x for x in items]
    said = [str(w.message) for w in seen if issubclass(w.category, DlbkitWarning) and "emulated" in str(w.message)]
    assert len(said) == (1 if expected_warnings(speeds) else 0), said
    for part in expected_warnings(speeds):
        assert part in said[0], (part, said)
    event(f"{entry}: ran")
    return "ran"


ENTRIES = st.sampled_from(["api", "loop", "cli run", "cli cluster"])


@settings(FUZZ, max_examples=examples(150))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(speeds=SPEEDS, entry=ENTRIES)
def test_speed_factors_are_refused_by_name_or_run_warning_as_they_should(speeds, entry, here, capsys):
    _speeds_through(entry, speeds, capsys)


# --- real MPI ranks: dlbkit run --backend mpi --ranks 3 ---------------------------------------------------
MPI_SPEEDS = st.lists(st.one_of(st.sampled_from(RUNNABLE), st.sampled_from(RUNNABLE),
                                st.sampled_from([0, -1, "nan", "inf", "1e400", "1e-40", "x", ""])),
                      min_size=1, max_size=3)


def _mpi_run(speeds: list, tmp_path, platform: bool = False) -> str:
    """*speeds* as ``--emulate 1,0.5`` or, with *platform*, as the nodes of a platform file whose
    first node is ``--master`` when the speeds are three (so two compute)."""
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    import os
    text = ",".join(str(x) for x in speeds)
    numbers = []
    for x in speeds:
        try:
            numbers.append(float(x))
        except ValueError:
            numbers = None
            break
    flags = [f"--emulate={text}"]
    field = refusal(numbers, 2) if numbers is not None else "emulate"
    if platform:
        if numbers is None:
            return "skipped"  # a word is no TOML number
        master = len(numbers) == 3
        # repr writes nan, inf and -inf as TOML does
        (tmp_path / "p.toml").write_text("".join(f'[[nodes]]\nname = "n{k}"\nspeed = {x!r}\n'
                                                 for k, x in enumerate(numbers)))
        flags = ["--emulate", "p.toml"] + (["--master", "n0"] if master else [])
        field = refusal(numbers, None) or refusal(numbers[1:] if master else numbers, 2)
    out = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "-m", "dlbkit", "run", "support.fuzz_emulate:square", "--items", "9",
                           "--backend", "mpi", "--ranks", "3", *flags, "--results", str(out), "--json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
                          env={**os.environ, "PYTHONPATH": TESTS})
    err = done.stderr.strip("\n").splitlines()
    if field is not None:
        assert done.returncode == 2 and len(err) == 1 and err[0].startswith("dlbkit: error: --emulate"), (flags, err)
        if platform and field != "emulate":  # the file's node, by its place
            assert err[0].startswith(f"dlbkit: error: --emulate p.toml: nodes[{field[8:-1]}].speed "), (speeds, err)
        elif field != "emulate":  # the factor, by its place
            assert err[0].startswith(f"dlbkit: error: --{field} "), (text, err)
        elif numbers is not None and all(TINY <= x <= HUGE for x in numbers):
            assert "one speed per worker rank: 2 for " in err[0], err
        event(f"mpi{' platform' if platform else ''}: refused")
        return "refused"
    assert done.returncode == 0, (flags, done.stderr[-2000:])
    assert json.loads(out.read_text()) == [x * x for x in range(9)]
    assert json.loads(done.stdout)["workers"] == 2
    computing = numbers[1:] if platform and len(numbers) == 3 else numbers
    said = [e for e in err if e.startswith("dlbkit: warning: emulated")]
    assert len(said) == (1 if expected_warnings(computing) else 0), err  # rank 0 says it, once
    for part in expected_warnings(computing):
        assert part in said[0], (part, said)
    assert "Traceback" not in done.stderr
    event(f"mpi{' platform' if platform else ''}: ran")
    return "ran"


@pytest.mark.full  # the MPI matrix: fuzzed emulation factors on ranks
@settings(FUZZ, max_examples=examples(30))  # halved 2026-12-03 (the full tier near 30 min on CI's 2 cores); the full profile draws fresh examples each run
@given(speeds=MPI_SPEEDS, platform=st.booleans())
def test_mpi_ranks_take_one_factor_each_or_refuse_by_name(speeds, platform, tmp_path_factory):
    _mpi_run(speeds, tmp_path_factory.mktemp("mpi"), platform)


# --- the Python entries inside an MPI job -----------------------------------------------------------------
JOB = """
import json, math, sys, warnings
from mpi4py import MPI
import dlbkit
from dlbkit.errors import ConfigError

warnings.simplefilter("ignore")  # the tiny factor's warning, said on every rank: checked locally
rank = r = MPI.COMM_WORLD.Get_rank()

def square(x):
    return x * x

CASES = {
    "map tiny factor": ("map", [1.0, 5e-4]),
    "map nan factor": ("map", [1.0, math.nan]),
    "map no factors": ("map", []),
    "map nan on rank 1 only": ("map", [1.0, math.nan] if r == 1 else [1.0, 1.0]),
    "map 1e-9 on rank 2 only": ("map", [1.0, 1e-9] if r == 2 else [1.0, 1.0]),
    "loop tiny factor": ("loop", [5e-4, 1.0]),
    "loop one factor for two ranks": ("loop", [1.0]),
    "loop three factors for two ranks": ("loop", [1.0, 0.5, 0.25]),
}

def one(kind, speeds):
    if kind == "map":
        return dlbkit.run_map(square, range(6), backend="mpi", progress=False, emulate=speeds).results
    with dlbkit.Loop(square, backend="mpi", emulate=speeds) as loop:
        return [loop.map(range(6)), loop.map(range(6))]

out = {}
for name in sys.argv[1:] or list(CASES):
    try:
        out[name] = {"value": one(*CASES[name])}
    except ConfigError as e:
        out[name] = {"refused": e.field, "message": str(e)}
    except SystemExit as e:
        out[name] = {"stopped": str(e.code)}
    except Exception as e:
        out[name] = {"raised": f"{type(e).__name__}: {e}"}
    with open(f"report-{rank}.json", "w") as f:
        json.dump(out, f, default=str)
"""
SQUARES = [x * x for x in range(6)]
MPI_EXPECTED = {
    "map tiny factor": ("value", SQUARES),
    "map nan factor": ("refused", "emulate[1]"),
    "map no factors": ("refused", "emulate"),
    "map nan on rank 1 only": ("refused", "emulate[1]"),
    "map 1e-9 on rank 2 only": ("value", SQUARES),  # rank 0's emulation is the run's: no 10⁹ stretch
    "loop tiny factor": ("value", [SQUARES, SQUARES]),
    "loop one factor for two ranks": ("refused", "emulate"),
    "loop three factors for two ranks": ("refused", "emulate"),
}


def test_map_and_loop_on_mpi_ranks_take_rank_0s_factors_or_refuse_them_on_every_rank(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import case_job, every_rank_agrees
    done, reports = case_job(tmp_path, JOB, [], 120)
    assert done.returncode == 0, done.stderr[-2000:]
    for case, (how, expected) in MPI_EXPECTED.items():
        every_rank_agrees(done, reports, case, how, expected)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


# --- regressions ----------------------------------------------------------------------------------------
def test_a_tiny_factor_warns_how_much_it_stretches_and_how_to_keep_the_ratios():
    """emulate=[1e-9] was accepted without a word and stretched every item 10⁹ times: an MPI job of
    `abs` on 3 ranks looked hung (killed after 120 s). Now it warns, at the caller's line, as a speed
    above 1 does."""
    assert emulated_speed_warning([1.0, MIN_EMULATED_SPEED]) is None
    assert emulated_speed_warning([0.5, 1e-9]) == (
        "emulated speeds below 0.001 (the slowest 1e-09) stretch every item 1e+09 times its real time (a "
        "millisecond of work takes 1e+06 s), so the run may take very long: a factor is a fraction of this "
        "machine's speed; multiply the speeds by 2 to emulate their ratios with the fastest at 1")
    both = emulated_speed_warning([4.0, 1e-4])
    assert both.startswith("emulated speeds above 1 (the fastest 4)") and both.endswith("a fraction of this machine's "
                                                                                          "speed")
    with pytest.warns(DlbkitWarning, match=r"^emulated speeds below 0\.001 \(the slowest 1e-09\)") as w:
        emulation_from([1.0, 1e-9])
    assert w[0].filename == __file__


def test_map_loop_and_the_cli_warn_of_a_tiny_factor(here, capsys):
    with pytest.warns(DlbkitWarning, match=r"the slowest 0\.0005"):
        assert dlbkit.map(abs, [-1, 2, -3], emulate=[1.0, 5e-4]) == [1, 2, 3]
    with pytest.warns(DlbkitWarning, match=r"the slowest 0\.0005"):
        with dlbkit.Loop(abs, emulate=[5e-4]) as loop:
            assert loop.map([-1, 2]) == [1, 2]
    assert main(["run", "builtins:abs", "--items", "3", "--emulate", "1,5e-4", "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("dlbkit: warning: emulated speeds below 0.001 (the slowest 0.0005)")


@pytest.mark.parametrize("text, field, allowed", [
    ("1,nan", "--emulate[1]", "a finite number > 0; got nan"),
    ("1e-40", "--emulate[0]", "a number in [1e-30, 1e30] (dlbkit's limits on magnitudes: 1e-30 to 1e30); got 1e-40"),
    ("0,1", "--emulate[0]", "a number > 0; got 0.0")])
def test_the_cli_names_its_flag_for_a_bad_factor(text, field, allowed, here, capsys):
    """The error said ``emulate[1]``, the Python argument's name, and only once the run's checks ran
    (under ``--ranks``, inside the MPI job); now the flag, before anything starts."""
    assert main(["run", "builtins:abs", "--items", "3", "--emulate", text]) == 2
    assert capsys.readouterr().err == f"dlbkit: error: {field} must be {allowed}\n"


@pytest.mark.parametrize("command", [["run", "builtins:abs", "--items", "3"], ["cluster", "builtins:abs", "--jobs", "2"]])
@pytest.mark.parametrize("text, field, allowed", [
    ("-1e-09", "--emulate[0]", "a number > 0; got -1e-09"),
    ("-1,0.5", "--emulate[0]", "a number > 0; got -1.0"),
    ("-.5,1", "--emulate[0]", "a number > 0; got -0.5"),
    ("-inf", "--emulate[0]", "a finite number > 0; got -inf")])
def test_a_negative_factor_after_the_flag_reaches_dlbkits_check(command, text, field, allowed, here, capsys):
    """``--emulate -1e-09`` (a space, not ``=``) was read by argparse as an option: "argument
    --emulate: expected one argument", which says nothing of the factor. Now the value reaches the
    factor's check, which names it as ``--emulate=-1e-09`` does."""
    assert main(command + ["--emulate", text]) == 2
    assert capsys.readouterr().err == f"dlbkit: error: {field} must be {allowed}\n"
    assert main(command + [f"--emulate={text}"]) == 2
    assert capsys.readouterr().err == f"dlbkit: error: {field} must be {allowed}\n"
    assert main(command + ["--emulate", "--seed", "1"]) == 2  # an option after it is still an option
    assert capsys.readouterr().err == (f"dlbkit: error: argument --emulate: expected one argument (see 'dlbkit "
                                       f"{command[0]} --help')\n")


def test_an_emulation_made_from_an_infinite_factor_is_refused():
    """``Emulation.from_speeds([inf])`` gave a worker that takes no time at all (a zero stretch)."""
    with pytest.raises(ConfigError) as e:
        dlbkit.runtime.emulation.Emulation.from_speeds([1.0, math.inf])
    assert e.value.field == "emulate[1]"


def test_a_bare_mpiexec_run_names_the_flag_for_factors_of_the_wrong_length(tmp_path):
    """``mpiexec -n 3 dlbkit run ... --backend mpi --emulate 1`` (no --ranks, so the command line does
    not know the job's size): the run's check said ``emulate must be ...``, on rank 0 and in the worker
    ranks' "rank 0 rejected the run" lines; now ``--emulate``, on every rank."""
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    from support.mpi import run_job
    done = run_job([sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--backend", "mpi",
                    "--emulate", "1"], 3, cwd=tmp_path, timeout=120)
    assert done.returncode != 0
    # counted, not split in lines: mpiexec forwards the ranks' stderr in pieces, and another rank's
    # line can land before rank 0's newline (seen once in a loaded run)
    said = ("dlbkit: error: --emulate must be one speed per worker rank: 2 for this 3-rank MPI job (rank 0 "
            "coordinates); got [1.0]")
    assert done.stderr.count("dlbkit: error:") == done.stderr.count(said) == 1, done.stderr[-2000:]
    # the worker ranks name the flag too (they said "emulate must be", the API's name)
    for r in (1, 2):
        line = f"dlbkit: rank {r} stopping: rank 0 rejected the run: {said[len('dlbkit: error: '):]}"
        assert done.stderr.count(line) == 1, done.stderr[-2000:]
    assert done.stderr.count("rejected the run: --emulate must be ") == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr


def test_a_platform_of_the_wrong_worker_count_for_the_ranks_is_one_line_before_the_job(tmp_path):
    """``--ranks 3 --emulate p.toml`` with three computing nodes: the list's length was checked before
    the job, a platform's only inside it, where every rank said so and the command exited 3. Now the
    job's own check (``emulation_problem``) runs first: one line, exit 2; with ``--master a`` it runs."""
    pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")
    (tmp_path / "p.toml").write_text("".join(f'[[nodes]]\nname = "{n}"\nspeed = {s}\n'
                                             for n, s in (("a", 1), ("b", 0.5), ("c", 0.5))))
    argv = [sys.executable, "-m", "dlbkit", "run", "builtins:abs", "--items", "3", "--backend", "mpi", "--ranks", "3",
            "--emulate", "p.toml"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 2 and done.stderr == (
        "dlbkit: error: --emulate must be one speed per worker rank: 2 for this 3-rank MPI job (rank 0 coordinates); "
        "got [1.0, 0.5, 0.5]\n"), done.stderr
    done = subprocess.run(argv + ["--master", "a"], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          check=False)
    assert done.returncode == 0 and "3 items on 2 workers (mpi" in done.stdout, done.stderr[-2000:]
