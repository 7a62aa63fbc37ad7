"""Careless inputs to :func:`dlbkit.tree`/``run_tree`` and :class:`dlbkit.Cluster` on the MPI backend
(:mod:`runtime/test_mpi_entries_fuzz` does map, graph, Loop and spmd, with the same rule):
real ``mpiexec -n 3`` jobs, each under a timeout, call them with careless arguments, the same on every
rank (an unknown balancer, parameter or information model, a worker count that is not the job's, an
emulation of the wrong length, a topology that does not fit, ``better`` without a bound, a seed < 0,
slots 0, ``info="exact"`` for a cluster) or different per rank (its own root, balancer, seed,
emulation, topology, information model, bound; a bad value on one rank only).

A refused call is refused on every rank (rank 0 raises a ConfigError naming the field, the others
their own or exit with one line "rank k rejected the run: <field> ..."); an accepted tree gives every
rank rank 0's result, grown from rank 0's root; an accepted cluster runs rank 0's jobs, its node
ranks leaving it with status 0 at shutdown (then the next case: clusters run one after another in
one job). Never a hang.

The default run is one job going through every case in turn (a few seconds); each case alone in its
job is in the full tier.
"""

import pytest

from support.mpi import case_job, every_rank_agrees

# full tier: the MPI matrix: careless arguments on ranks
pytestmark = pytest.mark.full

pytest.importorskip("mpi4py", reason="the MPI backend needs mpi4py (pip install 'dlbkit[mpi]')")

TIMEOUT = 120  # seconds for one mpiexec job: every case in one job takes a few seconds

JOB = """
import json, sys, operator
from mpi4py import MPI
import dlbkit
from dlbkit.errors import ConfigError

rank = MPI.COMM_WORLD.Get_rank()
r = rank

def expand(n):
    return ([n + 1, n + 1] if n < 3 else []), 1

def knap(n, bound):
    return ([n + 1, n + 1] if n < 3 else []), 1, n

def square(x):
    return x * x

CASES = {
    "tree valid": ("tree", {}),
    "tree unknown balancer": ("tree", dict(balancer="nope")),
    "tree unknown parameter": ("tree", dict(params={"zz": 1})),
    "tree workers not the job's": ("tree", dict(workers=5)),
    "tree emulation too long": ("tree", dict(emulate=[1.0, 0.5, 0.25])),
    "tree bad topology": ("tree", dict(topology="nope")),
    "tree topology not fitting": ("tree", dict(topology={"kind": "torus", "rows": 3})),
    "tree bad info": ("tree", dict(info="nope")),
    "tree bad record_decisions": ("tree", dict(record_decisions="yes")),
    "tree better without bound": ("tree", dict(better=operator.lt)),
    "tree expand not callable": ("tree", dict(expand=5)),
    "tree seed -1": ("tree", dict(seed=-1)),
    "tree root per rank": ("tree", dict(root=r)),
    "tree balancer per rank": ("tree", dict(balancer="steal" if r == 0 else "gdem")),
    "tree seed per rank": ("tree", dict(seed=r)),
    "tree emulation per rank": ("tree", dict(emulate=[1.0, 0.5] if r == 0 else [1.0])),
    "tree topology per rank": ("tree", dict(topology="ring" if r == 0 else "nope")),
    "tree info per rank": ("tree", dict(info="periodic" if r == 0 else "neighbour")),
    "tree bound per rank": ("tree", dict(expand=knap, bound=r)),
    "tree unknown balancer on rank 2": ("tree", dict(balancer="nope" if r == 2 else "steal")),
    "tree unknown balancer on rank 0": ("tree", dict(balancer="nope" if r == 0 else "steal")),
    "tree expand not callable on rank 1": ("tree", dict(expand=5 if r == 1 else expand)),
    "tree workers on rank 0 only": ("tree", dict(workers=2 if r == 0 else 5)),
    "tree bad info on rank 1": ("tree", dict(info="nope" if r == 1 else None)),
    "tree bad info on rank 0": ("tree", dict(info="nope" if r == 0 else None)),
    "tree bad record_decisions on rank 2": ("tree", dict(record_decisions="yes" if r == 2 else False)),
    "tree bad topology on rank 0": ("tree", dict(topology="nope" if r == 0 else "ring")),
    "cluster unknown balancer": ("cluster", dict(balancer="nope")),
    "cluster exact info": ("cluster", dict(info="exact")),
    "cluster slots 0": ("cluster", dict(slots=0)),
    "cluster emulation too long": ("cluster", dict(emulate=[1.0, 0.5, 0.25])),
    "cluster workers 0": ("cluster", dict(workers=0)),
    "cluster workers not the job's": ("cluster", dict(workers=5)),
    "cluster unknown balancer on rank 2": ("cluster", dict(balancer="nope" if r == 2 else "nezha")),
    "cluster seed -1 on rank 1": ("cluster", dict(seed=-1 if r == 1 else 0)),
    "cluster bad info on rank 0": ("cluster", dict(info="nope" if r == 0 else "gossip")),
    "cluster emulation per rank": ("cluster", dict(emulate=[1.0, 0.5] if r == 0 else [1.0])),
    "cluster valid": ("cluster", {}),
    "cluster valid again": ("cluster", dict(seed=r)),
}

def one(kind, args):
    if kind == "tree":
        ex = args.pop("expand", expand)
        root = args.pop("root", 0)
        res = dlbkit.run_tree(ex, root, backend="mpi", progress=False, **args)
        return [res.value, res.bound]
    with dlbkit.Cluster(backend="mpi", **args) as c:
        return [f.result(timeout=60) for f in [c.submit(square, i) for i in range(8)]]

names = sys.argv[1:] or list(CASES)
out = {}
for name in names:
    kind, args = CASES[name]
    try:
        out[name] = {"value": one(kind, dict(args))}
    except ConfigError as e:
        out[name] = {"refused": e.field, "message": str(e)}
    except SystemExit as e:  # "rank k stopping: ...", or 0: a node rank served the cluster to its end
        out[name] = {"served": True} if e.code == 0 else {"stopped": str(e.code)}
    with open(f"report-{rank}.json", "w") as f:
        json.dump(out, f, default=str)
"""

SQUARES = [x * x for x in range(8)]
#: case -> the field every rank refuses, rank 0's value every rank returns, or rank 0's cluster value
EXPECTED = {
    "tree valid": ("value", [15, None]),
    "tree unknown balancer": ("refused", "balancer"),
    "tree unknown parameter": ("refused", "params.zz"),
    "tree workers not the job's": ("refused", "workers"),
    "tree emulation too long": ("refused", "emulate"),
    "tree bad topology": ("refused", "topology"),
    "tree topology not fitting": ("refused", "topology.rows"),
    "tree bad info": ("refused", "info.model"),
    "tree bad record_decisions": ("refused", "record_decisions"),
    "tree better without bound": ("refused", "better"),
    "tree expand not callable": ("refused", "expand"),
    "tree seed -1": ("refused", "seed"),
    "tree root per rank": ("value", [15, None]),  # rank 0's root 0: 1 + 2 + 4 + 8 nodes
    "tree balancer per rank": ("value", [15, None]),
    "tree seed per rank": ("value", [15, None]),
    "tree emulation per rank": ("value", [15, None]),
    "tree topology per rank": ("refused", "topology"),  # "nope" on ranks 1 and 2
    "tree info per rank": ("value", [15, None]),
    "tree bound per rank": ("value", [15, 3]),
    "tree unknown balancer on rank 2": ("refused", "balancer"),
    "tree unknown balancer on rank 0": ("refused", "balancer"),
    "tree expand not callable on rank 1": ("refused", "expand"),
    "tree workers on rank 0 only": ("refused", "workers"),
    "tree bad info on rank 1": ("refused", "info.model"),
    "tree bad info on rank 0": ("refused", "info.model"),
    "tree bad record_decisions on rank 2": ("refused", "record_decisions"),
    "tree bad topology on rank 0": ("refused", "topology"),
    "cluster unknown balancer": ("refused", "balancer"),
    "cluster exact info": ("refused", "info"),
    "cluster slots 0": ("refused", "slots"),
    "cluster emulation too long": ("refused", "emulate"),
    "cluster workers 0": ("refused", "workers"),
    "cluster workers not the job's": ("refused", "workers"),
    "cluster unknown balancer on rank 2": ("refused", "balancer"),
    "cluster seed -1 on rank 1": ("refused", "seed"),
    "cluster bad info on rank 0": ("refused", "info.model"),
    "cluster emulation per rank": ("served", SQUARES),
    "cluster valid": ("served", SQUARES),
    "cluster valid again": ("served", SQUARES),
}


def _job(tmp_path, cases: list[str]):
    return case_job(tmp_path, JOB, cases, TIMEOUT)


def _every_rank_agrees(done, reports, case: str):
    every_rank_agrees(done, reports, case, *EXPECTED[case])


def test_careless_tree_and_cluster_arguments_on_mpi_end_with_one_verdict_on_every_rank(tmp_path):
    """Every case in turn in one job: it ends, and every case is refused on every rank, or returns rank
    0's result on every rank (a tree), or runs rank 0's jobs (a cluster)."""
    done, reports = _job(tmp_path, [])
    assert done.returncode == 0, done.stderr[-2000:]
    for case in EXPECTED:
        _every_rank_agrees(done, reports, case)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]


@pytest.mark.full
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_careless_tree_or_cluster_case_alone_in_its_job(tmp_path, case):
    """Each case as the job's only call: a rank that exits with its one line ends the job (mpiexec
    exits non-zero then), the others too; never a hang."""
    done, reports = _job(tmp_path, [case])
    _every_rank_agrees(done, reports, case)
    if EXPECTED[case][0] != "refused":
        assert done.returncode == 0, done.stderr[-2000:]


# --- regressions (one job: the cases that hung or ran another rank's argument) -------------------------
REGRESSIONS = ["tree bad info on rank 1", "tree bad record_decisions on rank 2", "cluster unknown balancer on rank 2",
               "cluster seed -1 on rank 1", "cluster workers not the job's", "tree root per rank", "cluster valid"]


def test_a_bad_tree_or_cluster_argument_on_one_rank_ends_the_call_on_every_rank(tmp_path):
    """run_tree resolved *info* and checked *record_decisions* after the ranks agreed on the verdict
    (run_map, run_graph and run_spmd checked *record_decisions* there too): a bad one on one rank was
    raised there alone and the others waited for it. dlbkit.Cluster did not agree at all: one rank's
    bad balancer or seed, or a worker count that is not the job's (refused by rank 0 alone once the
    run began, its node ranks already serving), hung the job. And worker 0 grew the tree from its own
    *root* (a script passing it per rank: rank 1's 1 gave 7, not rank 0's 15): rank 0's root, bound,
    balancer, seed and topology now go to the worker ranks with its emulation."""
    done, reports = _job(tmp_path, REGRESSIONS)
    for case in REGRESSIONS:
        _every_rank_agrees(done, reports, case)
