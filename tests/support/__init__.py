"""What the tests share, in one place (test modules never import one another).

- :mod:`support.profiles`: the hypothesis profiles of the two tiers and :func:`~support.profiles.examples`;
- :mod:`support.processes`: the check that no process a test started outlives it;
- :mod:`support.signals`: signals raised at a named point of a run, and gates instead of naps;
- :mod:`support.mpi`: a real ``mpiexec`` job run from a test, a hang failing it;
- :mod:`support.experiment_files`: small experiment files;
- :mod:`support.fuzz`: the bad-input fuzzers' settings, hang guard, mutations and odd values;
- :mod:`support.fuzz_runs`, :mod:`support.fuzz_grid`, :mod:`support.fuzz_entries`,
  :mod:`support.fuzz_emulate`, :mod:`support.fuzz_topologies`: what the fuzzers of accepted inputs,
  grids, entry points, emulations and interconnects share;
- :mod:`support.sweeps`: sweeps on executors (a Dask client, the local reference rows);
- :mod:`support.loop_jobs`: functions and balancers that ``Loop``'s tests run in workers and MPI jobs;
- :mod:`support.streams`: checks of a stream engine's trace.

Scripts that tests run in subprocesses or under ``mpiexec`` import these with :data:`TESTS` (the
``tests`` folder) on ``sys.path``.
"""

import time as _time
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent.parent)
REPO = Path(TESTS).parent

#: the ceiling of a wait on an event (a process ending, a file appearing, a result arriving): reached
#: only by a hang, never by a slow machine — a test must not fail because the machine is loaded
HANG_S = 120.0


def wait_until(ready, what: str, timeout: float = HANG_S, poll: float = 0.02) -> None:
    """Return as soon as ``ready()`` is true; past *timeout* seconds fail, saying *what* never happened."""
    end = _time.monotonic() + timeout
    while not ready():
        if _time.monotonic() > end:
            raise AssertionError(f"not within {timeout} s: {what}")
        _time.sleep(poll)
