"""Careless inputs to :func:`dlbkit.map`/``run_map``, :func:`dlbkit.graph`/``run_graph`` and
:class:`dlbkit.Loop` on the MPI backend. Real ``mpiexec -n 3`` jobs, each under a timeout (a hang fails the test with its
stderr), call them with careless arguments: the same on every rank (an unknown balancer or
parameter, a worker count that is not the job's, an emulation of the wrong length, a record path that
is a folder, a graph with a cycle) or different per rank (what a script computing its inputs per
rank passes: its own items, tasks, balancer, seed, emulation, record path; a bad value on one rank
only).

The rule: the job ends and every rank reports. A refused call is refused on every rank: rank 0
raises a ConfigError naming the field (its own, or the refusing rank's), every other rank raises its
own ConfigError or exits with one line "rank k rejected the run: <field> ..." (here caught, so one
job goes through every case). An accepted call gives every rank rank 0's result: only rank 0's
arguments matter (docs/api.md, "Errors"); differing valid arguments are not compared (see
:func:`dlbkit.runtime.backends.mpi.agree`). Never a hang: a ConfigError raised on one rank alone
used to leave the other ranks waiting for it forever.

The default run is one job going through every case in turn (a few seconds); each case in its own
job is in the full tier.
"""

import json

import pytest

from support.mpi import case_job, every_rank_agrees

# full tier: the MPI matrix: careless arguments on ranks
pytestmark = pytest.mark.full

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 120  # seconds for one mpiexec job: every case in one job takes well under a minute

JOB = """
import json, sys
import numpy as np
from mpi4py import MPI
import dlbkit
from dlbkit.errors import ConfigError

rank = MPI.COMM_WORLD.Get_rank()

def square(x):
    return x * x

def add(a, b):
    return a + b

def smooth(u):
    return 0.25 * u[:-2] + 0.5 * u[1:-1] + 0.25 * u[2:]

def raising():
    yield 1
    raise ZeroDivisionError("items of rank 1")

r = rank
TASKS = {"a": (square, 2), "b": (square, 3), "c": (add, "a", "b")}
CASES = {
    # --- map: the same careless argument on every rank
    "map valid": ("map", {}),
    "map unknown balancer": ("map", dict(balancer="nope")),
    "map unknown parameter": ("map", dict(balancer="gss", params={"zz": 1})),
    "map workers not the job's": ("map", dict(workers=5)),
    "map emulation too long": ("map", dict(emulate=[1.0, 0.5, 0.25])),
    "map record is a folder": ("map", dict(record=".")),
    "map items not iterable": ("map", dict(items=7)),
    "map no items": ("map", dict(items=[])),
    # --- map: different per rank
    "map items per rank": ("map", dict(items=list(range(5 + r)))),
    "map balancer per rank": ("map", dict(balancer="ss" if r else "gss")),
    "map seed per rank": ("map", dict(seed=r)),
    "map emulation per rank": ("map", dict(emulate=[1.0, 0.5] if r == 0 else [1.0])),
    "map record on rank 0 only": ("map", dict(record="run.json" if r == 0 else None)),
    "map record is a folder on rank 1": ("map", dict(record="." if r == 1 else None)),
    "map record is a folder on rank 0": ("map", dict(record="." if r == 0 else "x.json")),
    "map bad items on rank 1": ("map", dict(items=None if r == 1 else range(6))),
    "map unknown balancer on rank 2": ("map", dict(balancer="nope" if r == 2 else "gss")),
    "map items raising on rank 1": ("map", dict(items=raising() if r == 1 else range(6))),
    "map unknown balancer on rank 0": ("map", dict(balancer="nope" if r == 0 else "gss")),
    "map workers on rank 0 only": ("map", dict(workers=2 if r == 0 else 5)),
    # --- graph
    "graph valid": ("graph", {}),
    "graph cycle": ("graph", dict(tasks={"a": (add, "b", 1), "b": (add, "a", 1)})),
    "graph unknown balancer": ("graph", dict(balancer="nope")),
    "graph tasks per rank": ("graph", dict(tasks={**TASKS, "b": (square, 3 + r)})),
    "graph balancer per rank": ("graph", dict(balancer="heft" if r else "pd")),
    "graph bad tasks on rank 1": ("graph", dict(tasks=5 if r == 1 else TASKS)),
    "graph unknown balancer on rank 2": ("graph", dict(balancer="nope" if r == 2 else "pd")),
    "graph record is a folder on rank 0": ("graph", dict(record="." if r == 0 else None)),
    # --- Loop (two steps)
    "loop valid": ("loop", {}),
    "loop unknown balancer": ("loop", dict(balancer="nope")),
    "loop items per rank": ("loop", dict(items=list(range(4 + r)))),
    "loop balancer per rank": ("loop", dict(balancer="ss" if r else "gss")),
    "loop unknown balancer on rank 1": ("loop", dict(balancer="nope" if r == 1 else "ss")),
    "loop record is a folder on rank 0": ("loop", dict(record="." if r == 0 else None)),
    "loop bad items on rank 2": ("loop", dict(items=None if r == 2 else range(6))),
    # --- spmd: one rank's own halo (the same careless value on every rank: runtime/test_mpi_spmd_fuzz)
    "spmd halo per rank": ("spmd", dict(halo=2 if r == 1 else 1)),
    "spmd halo 0 on rank 1": ("spmd", dict(halo=0 if r == 1 else 1)),
}


def one(kind, args):
    if kind == "map":
        items = args.pop("items", range(6))
        return dlbkit.run_map(square, items, backend="mpi", progress=False, **args).results
    if kind == "graph":
        return dlbkit.graph(args.pop("tasks", TASKS), backend="mpi", progress=False, **args)
    if kind == "loop":
        items = args.pop("items", range(6))
        with dlbkit.Loop(square, backend="mpi", **args) as loop:
            return [loop.map(items), loop.map(items)]
    return dlbkit.run_spmd(smooth, np.arange(12.0), iterations=2, backend="mpi", progress=False,
                           **args).domain.tolist()


names = sys.argv[1:] or list(CASES)
out = {}
for name in names:
    kind, args = CASES[name]
    try:
        out[name] = {"value": one(kind, dict(args))}
    except ConfigError as e:
        out[name] = {"refused": e.field, "message": str(e)}
    except SystemExit as e:  # "rank k stopping: rank j rejected the run: ...", caught to go on
        out[name] = {"stopped": str(e.code)}
    except Exception as e:  # not a ConfigError: the rank's own failure, or rank 0 naming another's
        out[name] = {"raised": f"{type(e).__name__}: {e}"}
    with open(f"report-{rank}.json", "w") as f:  # after every case: a hang shows where
        json.dump(out, f, default=str)
"""

SQUARES = [x * x for x in range(6)]
GRAPH = {"a": 4, "b": 9, "c": 13}
#: case -> the field every rank refuses, or rank 0's value every rank returns
EXPECTED = {
    "map valid": ("value", SQUARES),
    "map unknown balancer": ("refused", "balancer"),
    "map unknown parameter": ("refused", "params.zz"),
    "map workers not the job's": ("refused", "workers"),
    "map emulation too long": ("refused", "emulate"),
    "map record is a folder": ("refused", "record"),
    "map items not iterable": ("refused", "items"),
    "map no items": ("value", []),
    "map items per rank": ("value", SQUARES[:5]),
    "map balancer per rank": ("value", SQUARES),
    "map seed per rank": ("value", SQUARES),
    "map emulation per rank": ("value", SQUARES),
    "map record on rank 0 only": ("value", SQUARES),
    "map record is a folder on rank 1": ("value", SQUARES),   # rank 0 writes the record: rank 1's is unused
    "map record is a folder on rank 0": ("refused", "record"),
    "map bad items on rank 1": ("refused", "items"),
    "map unknown balancer on rank 2": ("refused", "balancer"),
    "map items raising on rank 1": ("raised", "ZeroDivisionError: items of rank 1"),
    "map unknown balancer on rank 0": ("refused", "balancer"),
    "map workers on rank 0 only": ("refused", "workers"),
    "graph valid": ("value", GRAPH),
    "graph cycle": ("refused", "tasks"),
    "graph unknown balancer": ("refused", "balancer"),
    "graph tasks per rank": ("value", GRAPH),
    "graph balancer per rank": ("value", GRAPH),
    "graph bad tasks on rank 1": ("refused", "tasks"),
    "graph unknown balancer on rank 2": ("refused", "balancer"),
    "graph record is a folder on rank 0": ("refused", "record"),
    "loop valid": ("value", [SQUARES, SQUARES]),
    "loop unknown balancer": ("refused", "balancer"),
    "loop items per rank": ("value", [SQUARES[:4], SQUARES[:4]]),
    "loop balancer per rank": ("value", [SQUARES, SQUARES]),
    "loop unknown balancer on rank 1": ("refused", "balancer"),
    "loop record is a folder on rank 0": ("refused", "record"),
    "loop bad items on rank 2": ("refused", "items"),
    "spmd halo per rank": ("value", [float(i) for i in range(12)]),  # rank 0's: a linear domain is a fixed point
    "spmd halo 0 on rank 1": ("refused", "halo"),
}


def _job(tmp_path, cases: list[str]):
    return case_job(tmp_path, JOB, cases, TIMEOUT)


def _every_rank_agrees(done, reports, case: str):
    every_rank_agrees(done, reports, case, *EXPECTED[case])


def test_careless_map_graph_and_loop_arguments_on_mpi_end_with_one_verdict_on_every_rank(tmp_path):
    """Every case in turn in one job: it ends, and every case is refused on every rank or returns rank
    0's result on every rank."""
    done, reports = _job(tmp_path, [])
    assert done.returncode == 0, done.stderr[-2000:]
    for case in EXPECTED:
        _every_rank_agrees(done, reports, case)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert json.loads((tmp_path / "run.json").read_text())  # rank 0 wrote the record asked of it alone


@pytest.mark.full
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_careless_case_alone_in_its_job(tmp_path, case):
    """Each case as the job's only call: a rank that exits with its one line ends the job (mpiexec
    exits non-zero then), the others too; never a hang."""
    done, reports = _job(tmp_path, [case])
    _every_rank_agrees(done, reports, case)
    if EXPECTED[case][0] == "value":
        assert done.returncode == 0, done.stderr[-2000:]


# --- regressions (one job: the cases that hung) ----------------------------------------------------------
HUNG = ["map bad items on rank 1", "map unknown balancer on rank 2", "map unknown balancer on rank 0",
        "map workers on rank 0 only", "map record is a folder on rank 1", "graph bad tasks on rank 1",
        "loop unknown balancer on rank 1", "loop bad items on rank 2", "spmd halo 0 on rank 1",
        "spmd halo per rank"]


def test_a_bad_argument_on_one_rank_ends_the_call_on_every_rank(tmp_path):
    """A ConfigError raised on one rank alone (its own items, balancer, worker count; a record path
    only rank 1 gave, which entered rank 0's verdict broadcast alone) left the other ranks in the
    run's start, waiting for it: the job hung until killed. Now every entry point's checks end with
    one agreement (runtime.backends.mpi.agree): the call is refused on every rank. And a worker rank
    cut its SPMD blocks by its own halo (every step failed with "step returned an array of shape");
    now rank 0's halo is broadcast with its emulation."""
    done, reports = _job(tmp_path, HUNG)
    for case in HUNG:
        _every_rank_agrees(done, reports, case)
