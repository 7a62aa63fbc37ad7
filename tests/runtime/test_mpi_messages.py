"""Under MPI, bad input gets the one-line message the local backend gives (real ``mpiexec -n 3`` jobs):
the tree runtime's topology check, and a ``did you mean`` suggestion when the ranks agree on a
refusal (``mpi.agree``)."""

import json
import sys
import textwrap

import pytest

import dlbkit
from dlbkit.errors import ConfigError

from support.mpi import run_job

# full tier: the MPI matrix: refusals on ranks (the local messages are tested in the fast tier)
pytestmark = pytest.mark.full

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 90  # seconds for one mpiexec job of a few cases

JOB = """
import json, sys
from mpi4py import MPI
import dlbkit
from dlbkit.errors import ConfigError

r = MPI.COMM_WORLD.Get_rank()

def expand(n):
    return ([n + 1, n + 1] if n < 3 else []), 1

CASES = {
    "kind mistyped": dict(topology={"kind": "rign"}),
    "field mistyped": dict(topology={"knd": "ring"}),
    "name mistyped": dict(topology="rign"),
    "not fitting": dict(topology="ring"),
    "rows not fitting": dict(topology={"kind": "torus", "rows": 3}),
    "name mistyped on rank 1": dict(topology="rign" if r == 1 else "chain"),
}

out = {}
for name in sys.argv[1:]:
    try:
        out[name] = {"value": dlbkit.run_tree(expand, 0, backend="mpi", progress=False, **CASES[name]).value}
    except ConfigError as e:
        out[name] = {"message": str(e)}
    except SystemExit as e:
        out[name] = {"stopped": str(e.code)}
    with open(f"report-{r}.json", "w") as f:
        json.dump(out, f)
"""


def expand(n):
    return ([n + 1, n + 1] if n < 3 else []), 1


def _local(topology) -> str:
    """The local backend's message for *topology* on 2 workers (an MPI job of 3 ranks has 2)."""
    with pytest.raises(ConfigError) as e:
        dlbkit.run_tree(expand, 0, workers=2, topology=topology, progress=False)
    return str(e.value)


def _job(tmp_path, cases) -> dict:
    (tmp_path / "job.py").write_text(textwrap.dedent(JOB))
    done = run_job([sys.executable, "job.py", *cases], 3, cwd=tmp_path, timeout=TIMEOUT)
    reports = {r: json.loads((tmp_path / f"report-{r}.json").read_text()) for r in range(3)
               if (tmp_path / f"report-{r}.json").exists()}
    assert sorted(reports) == [0, 1, 2], done.stderr[-3000:]
    return reports


TOPOLOGIES = {"kind mistyped": {"kind": "rign"}, "field mistyped": {"knd": "ring"}, "name mistyped": "rign",
              "not fitting": "ring", "rows not fitting": {"kind": "torus", "rows": 3}}


def test_a_topology_refused_under_mpi_is_the_local_message_on_every_rank(tmp_path):
    """Rank 0 re-raised the tree's topology error with words of its own ("(this 3-rank MPI job has 2
    worker ranks: rank 0 coordinates)" inside the allowed values) and without the suggestion; now
    rank 0 raises the local backend's message, and the worker ranks leave with that same line."""
    local = {case: _local(topology) for case, topology in TOPOLOGIES.items()}
    assert "(did you mean 'ring'?)" in local["kind mistyped"] and "(did you mean 'kind'?)" in local["field mistyped"]
    assert local["name mistyped"].endswith("(did you mean 'ring'?)")
    reports = _job(tmp_path, list(TOPOLOGIES))
    for case in TOPOLOGIES:
        assert reports[0][case] == {"message": local[case]}, case
        for r in (1, 2):
            if case == "name mistyped":  # refused by every rank's own entry checks (mpi.agree), as locally
                assert reports[r][case] == {"message": local[case]}, case
                continue
            assert reports[r][case] == {"stopped": f"dlbkit: rank {r} stopping: rank 0 rejected the run: "
                                                   f"{local[case]}"}, case


def test_a_mistyped_name_on_one_rank_keeps_its_suggestion_on_rank_0(tmp_path):
    """Rank 0 rebuilt another rank's ConfigError from its field, value and allowed values, and dropped
    its ``(did you mean …?)``."""
    reports = _job(tmp_path, ["name mistyped on rank 1"])
    case = "name mistyped on rank 1"
    mine = _local("rign")
    assert reports[1][case] == {"message": mine}
    allowed = mine.split(" must be ", 1)[1].split("; got ")[0]
    assert reports[0][case] == {"message": f"topology must be {allowed} (rank 1's argument: every rank must pass "
                                           "the same); got 'rign' (did you mean 'ring'?)"}
    assert reports[2][case] == {"stopped": f"dlbkit: rank 2 stopping: rank 1 rejected the run: {mine}"}


def test_a_rejected_rank_s_exit_survives_pickling_and_copying():
    """No MPI: ``Rejected`` is built from another rank's verdict, not from its one line, so the default
    exception pickling (``cls(*args)``) raised a TypeError; a process pool handing it back, or
    ``copy.copy``, failed."""
    import copy
    import pickle

    from dlbkit.runtime.backends.mpi import Rejected, _verdict

    r = Rejected(2, 0, _verdict(ConfigError("emulate", [1.0], "one speed per worker rank")))
    for again in (pickle.loads(pickle.dumps(r)), copy.copy(r)):
        assert type(again) is Rejected and (again.rank, again.by) == (2, 0)
        assert again.code == r.code == ("dlbkit: rank 2 stopping: rank 0 rejected the run: emulate must be one "
                                        "speed per worker rank; got [1.0]")
        assert str(again.error) == str(r.error) == "emulate must be one speed per worker rank; got [1.0]"
