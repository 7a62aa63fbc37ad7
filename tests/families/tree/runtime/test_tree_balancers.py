"""Neighbourhood, central and hybrid migration balancers driving ``dlbkit.tree`` on real workers (001 §2):
GDEM, diffusion (RID, SID), Loadserver, work stealing, greedy and refine, over a worker topology,
on the local backend and under ``mpiexec``."""

import contextlib
import functools
import importlib.util
import io
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import networkx as nx
import pytest

from dlbkit import ConfigError, DlbkitError, Taxonomy, TreeView, run_tree
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.model.topology import build, edge_colouring, neighbour_lists
from dlbkit.families.tree.runtime.program import resolve_topology
from dlbkit.families.tree.runtime.loads import InFlightLoads
from dlbkit.families.tree.runtime.messages import Order, Pushed, Request

from support import REPO

EXAMPLES = REPO / "examples"
_spec = importlib.util.spec_from_file_location("knapsack_bb", EXAMPLES / "knapsack_bb.py")
kb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kb)

#: the rules of 001 §2 and their modern rivals; each exchanges work its own way
BALANCERS = ["gdem", "rid", "sid", "ldsv", "steal", "greedy", "refine"]


def knapsack_problem(n=32):
    """The example's instance, sorted by value per weight: (expand, root, optimum by DP)."""
    weights, values, capacity = kb.instance(n)
    order = sorted(range(n), key=lambda k: values[k] / weights[k], reverse=True)
    weights, values = [weights[k] for k in order], [values[k] for k in order]
    f = functools.partial(kb.expand, weights=weights, values=values, capacity=capacity)
    return f, (0, capacity, 0, 0), kb.dp(weights, values, capacity)


def slow_tree(task):
    """A complete binary tree of depth 9 (1023 tasks), 0.3 ms each; the value names the task."""
    node, depth = task
    time.sleep(3e-4)
    return ([(2 * node + 1, depth + 1), (2 * node + 2, depth + 1)] if depth < 9 else []), frozenset([node])


SLOW_TASKS = 2 ** 10 - 1


def serial_count(expand, root):
    stack, n = [root], 0
    while stack:
        children = expand(stack.pop())[0]
        n += 1
        stack.extend(children)
    return n


# --- the knapsack example, every balancer, ring and torus ----------------------------------------------
@pytest.mark.parametrize("topology", ["ring", "torus"])
@pytest.mark.parametrize("balancer", BALANCERS)
def test_the_knapsack_example_prints_the_optimum_with_every_balancer(balancer, topology):
    """examples/knapsack_bb.py on 4 workers prints exactly its .out file: the DP optimum, found by
    branch and bound whichever rule moves the work."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = kb.main(["--workers", "4", "--balancer", balancer, "--topology", topology])
    assert code == 0
    assert out.getvalue() == (EXAMPLES / "knapsack_bb.out").read_text(encoding="utf-8")


@pytest.mark.parametrize("balancer", BALANCERS)
def test_knapsack_bound_equals_dynamic_programming_and_rows_tile_the_tasks(balancer):
    f, root, optimum = knapsack_problem(24)
    r = run_tree(f, root, bound=(0, 0), better=kb.better, balancer=balancer, workers=4, topology="torus", seed=3)
    assert r.bound[0] == optimum
    t = r.trace
    assert sum(t.count) == r.tasks == sum(t.meta["expanded"]) > 0
    assert t.balancer == balancer and t.meta["mechanism"] == "tree"


# --- exactly once, and work reaches workers several hops from the root ----------------------------------
@pytest.mark.parametrize("balancer", BALANCERS)
def test_every_task_is_expanded_exactly_once_and_work_spreads_along_a_chain(balancer):
    """On a chain 0-1-2-3 with the root on worker 0, neighbourhood rules must pass work on hop by
    hop to reach worker 3; the union of the values is the whole tree and as many tasks ran."""
    r = run_tree(slow_tree, (0, 0), combine=frozenset.union, initial=frozenset(), balancer=balancer, workers=4,
                 topology="chain", seed=5)
    assert r.value == frozenset(range(SLOW_TASKS)) and r.tasks == SLOW_TASKS == serial_count(slow_tree, (0, 0))
    expanded = r.trace.meta["expanded"]
    computing = expanded[:3] if balancer == "ldsv" else expanded  # the Loadserver's LIS (last) computes nothing
    assert all(n > 0 for n in computing), expanded
    assert r.trace.meta["tasks_moved"] > 0
    if balancer == "ldsv":
        assert expanded[3] == 0


@pytest.mark.parametrize("balancer, params", [("gdem", {"interval": 16}), ("ldsv", {"interval": 0}),
                                              ("greedy", {"interval": 0}), ("refine", {"interval": 4}),
                                              ("rid", {"low_water": 0}), ("sid", {"threshold": 2.0})])
def test_parameters_reach_the_engine_and_the_count_stays_exact(balancer, params):
    r = run_tree(slow_tree, (0, 0), combine=frozenset.union, initial=frozenset(), balancer=balancer, params=params,
                 workers=4, topology="ring", seed=2)
    assert r.value == frozenset(range(SLOW_TASKS)) and r.tasks == SLOW_TASKS
    assert r.trace.meta["balancer_params"] == {**r.balancer.get_params(), **params}


# --- the topology reaches every view ------------------------------------------------------------------
class _Checked(MigrationBalancer):
    source = "test"
    taxonomy = Taxonomy("test", "test", "test", "test", "test")
    expected: list = []
    colours: list = []

    def __init__(self):
        pass

    def check(self, view):
        if view.neighbours != self.expected:
            raise AssertionError(f"neighbours {view.neighbours} != {self.expected}")


class CheckedSteal(_Checked):
    """Steals from a neighbour, after checking that the worker's view has the topology."""

    name = "test-checked-steal"
    receiver_initiated = True
    reads_loads = False

    def on_idle(self, view, node):
        self.check(view)
        nb = view.neighbours[node]
        return nb[int(self.rng_.integers(len(nb)))]


class CheckedPeriodic(_Checked):
    """Central: checks the coordinator's neighbours and colours, then sends half of the most loaded
    node's queue to an idle neighbour of it."""

    name = "test-checked-periodic"
    periodic = True
    interval = 0

    def balance(self, view):
        self.check(view)
        if view.colours != self.colours:
            raise AssertionError(f"colours {view.colours} != {self.colours}")
        h = max(range(view.n_nodes), key=lambda i: view.queue[i])
        return [Transfer(h, j, view.queue[h] // 2) for j in view.neighbours[h] if view.queue[j] == 0][:1]


def _checked(cls, graph):
    b = cls()
    cls.expected = neighbour_lists(graph)
    cls.colours = edge_colouring(graph) if "dims" in graph.graph else []
    return b


@pytest.mark.parametrize("topology, n", [("ring", 4), ("torus", 4), ("hypercube", 4), ("chain", 3), ("mesh", 6),
                                         ("star", 3), ("complete", 3), ({"kind": "torus", "rows": 2}, 6)],
                         ids=lambda x: str(x) if not isinstance(x, int) else None)
@pytest.mark.parametrize("cls", [CheckedSteal, CheckedPeriodic])
def test_the_topology_fills_the_views_of_workers_and_coordinator(cls, topology, n):
    graph = build(topology, n) if isinstance(topology, str) else build(topology["kind"], n, rows=topology["rows"])
    r = run_tree(slow_tree, (0, 7), combine=frozenset.union, initial=frozenset(), balancer=_checked(cls, graph),
                 workers=n, topology=topology)
    assert r.tasks == 2 ** 3 - 1


def test_a_networkx_graph_is_a_topology():
    g = nx.Graph([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)])  # a ring with a chord: coloured by the rule itself
    r = run_tree(slow_tree, (0, 6), combine=frozenset.union, initial=frozenset(), balancer=_checked(CheckedPeriodic, g),
                 workers=4, topology=g)
    assert r.tasks == 2 ** 4 - 1
    assert resolve_topology(g, 4) == ([[1, 2, 3], [0, 2], [0, 1, 3], [0, 2]], [])
    assert resolve_topology(None, 3) == ([[1, 2], [0, 2], [0, 1]], [])
    assert resolve_topology("ring", 4)[1] == [[(0, 1), (2, 3)], [(1, 2), (3, 0)]]  # by dimension, 001 §3.1


@pytest.mark.parametrize("topology, workers, match", [
    ("bogus", 4, "topology"),
    ("edges", 4, "topology"),
    (3, 4, "topology"),
    ("ring", 2, "topology.*fits 2 worker"),
    ("torus", 5, "topology.*fits 5 worker"),
    ("hypercube", 6, "topology.*fits 6 worker"),
    ({"kind": "torus", "rows": 3}, 4, "topology.rows"),
    ({"kind": "mesh", "cols": 2}, 4, "topology"),
    (nx.path_graph(3), 4, "topology.*nodes 0..3"),
    (nx.Graph([(0, 1), (2, 3)]), 4, "topology.*connected"),
    (nx.relabel_nodes(nx.path_graph(4), {0: "a"}), 4, "topology"),
], ids=lambda x: x if isinstance(x, str) else None)
def test_a_topology_that_does_not_fit_is_a_config_error(topology, workers, match):
    with pytest.raises(ConfigError, match=match):
        run_tree(slow_tree, (0, 9), workers=workers, topology=topology)


def test_ldsv_needs_two_workers_and_says_so():
    with pytest.raises((ConfigError, DlbkitError), match="ldsv|nodes"):
        run_tree(slow_tree, (0, 9), workers=1, balancer="ldsv")


# --- the coordinator's load books ---------------------------------------------------------------------
def test_the_coordinator_counts_tasks_in_flight_until_a_report_covers_them():
    view = TreeView(3)
    books = InFlightLoads(view)
    assert view.queue == [1, 0, 0]  # the root waits on worker 0
    books.report(0, 10, seen=0)
    books.order(0, 1, 4)  # a periodic transfer: 4 of worker 0's tasks to worker 1
    books.queued(0, Order(1, 4))
    assert view.queue == [6, 4, 0]  # the balancer sees its own decision at once
    books.posted(0)  # the order leaves in MAIL number 1
    books.report(0, 12, seen=0)  # a report sent before worker 0 read it: still 4 to go
    assert view.queue == [8, 4, 0]
    books.report(0, 8, seen=1)  # read and done: the report counts what left
    books.order_done(0)  # its GIVE arrived; the coordinator now holds the tasks for worker 1
    books.queued(1, Pushed(0, ["t"] * 4))
    assert view.queue == [8, 4, 0]
    books.posted(1)
    books.report(1, 0, seen=0)  # worker 1 reports before reading its POST
    assert view.queue == [8, 4, 0]
    books.report(1, 3, seen=1)  # read, and one of the four already expanded
    assert view.queue == [8, 3, 0]
    books.queued(2, Request(0, 0))  # a steal request moves nothing by itself
    assert view.queue == [8, 3, 0]


# --- MPI ----------------------------------------------------------------------------------------------
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent))

MPI_SCRIPT = textwrap.dedent("""
    import functools, sys
    sys.path.insert(0, sys.argv[2])
    from mpi4py import MPI
    import knapsack_bb as kb
    from dlbkit import ConfigError
    from dlbkit import run_tree

    def queens(board, n=7):
        row = len(board)
        if row == n:
            return [], 1
        return [board + (c,) for c in range(n)
                if all(c != q and abs(c - q) != row - r for r, q in enumerate(board))], None

    n = 28
    weights, values, capacity = kb.instance(n)
    order = sorted(range(n), key=lambda k: values[k] / weights[k], reverse=True)
    weights, values = [weights[k] for k in order], [values[k] for k in order]
    f = functools.partial(kb.expand, weights=weights, values=values, capacity=capacity)
    rank = MPI.COMM_WORLD.Get_rank()
    out = open(f"{sys.argv[1]}/rank{rank}.txt", "w", buffering=1)
    for b in BALANCERS:
        r = run_tree(f, (0, capacity, 0, 0), bound=(0, 0), better=kb.better, balancer=b, backend="mpi",
                     topology="ring", seed=1)
        ok = r.bound[0] == kb.dp(weights, values, capacity) and sum(r.trace.count) == r.tasks
        print(f"rank {rank} knapsack {b} {ok} {r.trace.source} {len(r.trace.meta['expanded'])}", file=out)
        r = run_tree(queens, (), balancer=b, backend="mpi", topology="torus", seed=2)
        print(f"rank {rank} queens {b} {r.value} {r.tasks}", file=out)
    try:
        run_tree(queens, (), backend="mpi", topology={"kind": "torus", "rows": 3})  # 4 workers: no 3-row torus
    except ConfigError as e:
        print(f"rank {rank} ConfigError {e.field}", file=out)
""")


@pytest.mark.full  # the MPI matrix: every migration balancer on ranks (the tree's MPI smoke is in test_tree.py)
@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not installed next to this Python")
def test_every_balancer_runs_under_mpi_on_a_worker_topology(tmp_path):
    """mpiexec -n 5: rank 0 coordinates, 4 worker ranks on a ring (knapsack) and a 2x2 torus
    (queens 7); every rank gets the same answers; a bad topology ends the job with a ConfigError."""
    script = tmp_path / "tree_balancers_mpi.py"
    script.write_text(MPI_SCRIPT.replace("BALANCERS", repr(BALANCERS)))
    p = subprocess.run([MPIEXEC, "-n", "5", sys.executable, str(script), str(tmp_path), str(EXAMPLES)],
                       capture_output=True, text=True, timeout=300)
    lines = sorted(ln for k in range(5) for ln in (tmp_path / f"rank{k}.txt").read_text().splitlines())
    tasks = serial_count(lambda b: _queens7(b), ())
    for b in BALANCERS:
        assert [ln for ln in lines if f" knapsack {b} " in ln] == [f"rank {k} knapsack {b} True mpi 4" for k in range(5)], \
            p.stderr[-3000:]
        assert [ln for ln in lines if f" queens {b} " in ln] == [f"rank {k} queens {b} 40 {tasks}" for k in range(5)]
    assert [ln for ln in lines if "ConfigError" in ln] == ["rank 0 ConfigError topology.rows"]
    assert p.returncode != 0  # the worker ranks left with SystemExit after the rejected run


def _queens7(board, n=7):
    row = len(board)
    if row == n:
        return [], 1
    return [board + (c,) for c in range(n)
            if all(c != q and abs(c - q) != row - r for r, q in enumerate(board))], None


def test_phase_adaptive_real_runs_take_periodic_phases_and_refuse_worker_side_ones():
    import dlbkit

    def expand(n):
        return ([n + 1, n + 1] if n < 6 else []), 1

    params = {"balancers": ["ldsv", "gdem", "none"], "intervals": [1, 4, float("inf")]}
    r = dlbkit.run_tree(expand, 0, balancer="phase-adaptive", params=params, workers=3, topology="ring")
    assert r.value == 127 and r.tasks == 127
    with pytest.raises(dlbkit.ConfigError, match=r"'balancers'\[1\] of phase-adaptive"):
        dlbkit.tree(expand, 0, balancer="phase-adaptive", params={"balancers": ["ldsv", "rid", "none"]}, workers=2)
    # a name that is not a migration balancer: the names that are, listed (phase-adaptive itself not)
    with pytest.raises(dlbkit.ConfigError, match=r"'balancers' of phase-adaptive must be a sequence of three "
                       r"migration balancers \(gdem, greedy, ldsv, random, refine, rid, sid, steal, instances"):
        dlbkit.tree(expand, 0, balancer="phase-adaptive", params={"balancers": ["ldsv", "nosuch", "none"]}, workers=2)


def test_real_runs_refuse_what_they_cannot_honour():
    import dlbkit

    def expand(n):
        return ([n + 1, n + 1] if n < 3 else []), 1

    with pytest.raises(dlbkit.ConfigError, match="detector"):  # no work estimates in a real run
        dlbkit.tree(expand, 0, balancer="phase-adaptive", params={"balancers": ["gdem", "gdem", "none"],
                                                                  "detector": "work"}, workers=2)
    with pytest.raises(dlbkit.ConfigError, match="'server' of ldsv"):  # the root would run on the LIS
        dlbkit.tree(expand, 0, balancer="ldsv", params={"server": 0}, workers=3)
    assert dlbkit.tree(expand, 0, balancer="ldsv", params={"server": 1}, workers=3) == 15


MPI_RANDOM_TREES = textwrap.dedent("""
    import random, sys
    from mpi4py import MPI
    from dlbkit import run_tree
    from dlbkit.balancers.registry import REGISTRY

    def drawn(task):  # a tree drawn from a seed; the value is a distinct power of two
        node, depth, seed = task
        fan = 0 if depth >= 5 else random.Random(seed * 1_000_003 + node).randrange(4)
        return [(4 * node + k + 1, depth + 1, seed) for k in range(fan)], 1 << node

    def sequential(root):
        total, tasks, stack = 0, 0, [root]
        while stack:
            children, value = drawn(stack.pop())
            total, tasks, stack = total + value, tasks + 1, stack + list(children)
        return total, tasks

    rng = random.Random(20261124)  # the same draws on every rank
    out = open(f"{sys.argv[1]}/rank{MPI.COMM_WORLD.Get_rank()}.txt", "w", buffering=1)
    for b in sorted(n for n, c in REGISTRY.items() if c.kind == "migration"):
        for info in (None, {"model": "gossip", "period": 0.01}, {"model": "neighbour", "period": 0.01}):
            root = (0, 0, rng.randrange(10**6))
            r = run_tree(drawn, root, balancer=b, backend="mpi", seed=rng.randrange(1000), info=info)
            print(b, info is not None and info["model"], (r.value, r.tasks) == sequential(root), file=out)
""")


@pytest.mark.full  # the MPI matrix: every balancer and information model on ranks
@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not installed next to this Python")
def test_every_balancer_and_information_model_under_mpi_folds_every_value_once(tmp_path):
    """One mpiexec job (3 worker ranks): every migration balancer, without and with an information model, on
    a random tree whose values are distinct powers of two: every rank gets the sequential sum and task count."""
    from dlbkit.balancers.registry import REGISTRY
    script = tmp_path / "random_trees_mpi.py"
    script.write_text(MPI_RANDOM_TREES)
    p = subprocess.run([MPIEXEC, "-n", "4", sys.executable, str(script), str(tmp_path)], capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    names = sorted(n for n, c in REGISTRY.items() if c.kind == "migration")
    want = [f"{b} {i} True" for b in names for i in ("False", "gossip", "neighbour")]
    for k in range(4):
        assert (tmp_path / f"rank{k}.txt").read_text().splitlines() == want
