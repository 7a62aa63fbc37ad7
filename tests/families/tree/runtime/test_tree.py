"""dlbkit.tree on real worker processes: counts, branch and bound, exactly-once, failures, MPI."""

import operator
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, DlbkitError, TaskError, Taxonomy, TreeResult, run_tree, tree
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.families.tree.balancers import WorkStealing

from support.profiles import examples

MIGRATION = ["steal", "random"]


# --- workloads ---------------------------------------------------------------------------------------
def queens(board, n):
    row = len(board)
    if row == n:
        return [], 1
    return [board + (c,) for c in range(n)
            if all(c != q and abs(c - q) != row - r for r, q in enumerate(board))], None


def queens6(board):
    return queens(board, 6)


def queens7(board):
    return queens(board, 7)


def queens8(board):
    return queens(board, 8)


def serial(expand, root):
    """(values in expansion order, tasks expanded) of a depth-first serial run."""
    stack, values, tasks = [root], [], 0
    while stack:
        children, value = expand(stack.pop())[:2]
        tasks += 1
        if value is not None:
            values.append(value)
        stack.extend(children)
    return values, tasks


def random_tree(task):
    """A tree drawn from a seed: fan-out 0..4 per node, depth at most 7; the value names the node."""
    node, depth, seed = task
    fan = 0 if depth >= 7 else random.Random(seed * 1_000_003 + node).randrange(5)
    return [(5 * node + k + 1, depth + 1, seed) for k in range(fan)], frozenset([node])


ITEMS = [(23, 92), (31, 57), (29, 49), (44, 68), (53, 60), (38, 43), (63, 67), (85, 84), (89, 87), (82, 72),
         (12, 30), (17, 41), (40, 45), (51, 70), (26, 36), (33, 39), (47, 52), (58, 61), (70, 77), (15, 18)]
CAPACITY = 300


def knapsack_dp(items, capacity):
    best = [0] * (capacity + 1)
    for w, v in items:
        for c in range(capacity, w - 1, -1):
            best[c] = max(best[c], best[c - w] + v)
    return best[capacity]


def knapsack(task, bound):
    """Branch and bound, maximising: prune when the fractional estimate cannot beat the bound."""
    i, room, value = task
    items = SORTED
    estimate, r = value, room
    for w, v in items[i:]:
        if w <= r:
            estimate, r = estimate + v, r - w
        else:
            estimate += v * r / w
            break
    new = value if value > bound else None
    if i == len(items) or estimate <= max(bound, value):
        return [], 1, new
    children = [(i + 1, room, value)]
    if items[i][0] <= room:
        children.append((i + 1, room - items[i][0], value + items[i][1]))
    return children, 1, new


SORTED = sorted(ITEMS, key=lambda wv: wv[1] / wv[0], reverse=True)


def cost_knapsack(task, bound):
    """The same search as a minimisation: the bound is minus the value."""
    children, one, new = knapsack(task, -bound)
    return children, one, (None if new is None else -new)


def failing(task):
    node, depth = task
    with open(os.environ["DLBKIT_TEST_PIDS"], "a") as f:
        f.write(f"{os.getpid()}\n")
    if node == 13:
        raise ZeroDivisionError("node 13 is cursed")
    return ([(3 * node + k + 1, depth + 1) for k in range(3)] if depth < 4 else []), 1


# --- results -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("balancer", MIGRATION)
@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("expand, solutions", [(queens6, 4), (queens7, 40), (queens8, 92)], ids=["6", "7", "8"])
def test_nqueens_counts_are_exact_with_every_balancer_and_worker_count(expand, solutions, balancer, workers):
    r = run_tree(expand, (), balancer=balancer, workers=workers, seed=workers)
    assert isinstance(r, TreeResult) and r.value == solutions and r.bound is None
    assert r.tasks == serial(expand, ())[1]
    assert sum(r.trace.count) == r.tasks == sum(r.trace.meta["expanded"])


def test_tree_returns_the_combined_value_and_default_is_work_stealing():
    assert tree(queens6, (), workers=2) == 4
    r = run_tree(queens6, (), workers=2)
    assert r.balancer.name == "steal" and r.results is r.value


def test_every_worker_rows_tile_its_expansions_and_metrics_bound_the_makespan():
    r = run_tree(queens8, (), workers=3, balancer="random", seed=4)
    t = r.trace
    for w in range(3):
        rows = sorted((f, c) for ww, f, c in zip(t.node, t.first, t.count) if ww == w)
        pos = 0
        for f, c in rows:
            assert f == pos and c >= 1
            pos += c
        assert pos == t.meta["expanded"][w]
    assert all(a <= s <= e for a, s, e in zip(t.t_ask, t.t_start, t.t_end))
    assert r.metrics["makespan"] >= r.metrics["lower_bound"] * (1 - 1e-9) > 0
    assert t.messages > 0 and t.source == "local" and t.meta["mechanism"] == "tree"
    assert t.meta["tasks_moved"] > 0  # random placement sends about 2/3 of the children away


@pytest.mark.parametrize("balancer", MIGRATION)
def test_knapsack_branch_and_bound_finds_the_dynamic_programming_optimum(balancer):
    optimum = knapsack_dp(ITEMS, CAPACITY)
    tasks, best = tree(knapsack, (0, CAPACITY, 0), bound=0, balancer=balancer, workers=3, seed=2)
    assert best == optimum == 513
    assert 0 < tasks < 2 ** 21  # pruned: far fewer than the full binary tree


def fan_with_bound(task, bound):
    """The root finds bound 100 and spawns 300 leaves; each leaf reports the bound it was given."""
    if task == "root":
        return list(range(300)), None, 100
    return [], bound


@pytest.mark.parametrize("balancer", MIGRATION)
def test_an_improved_bound_travels_with_the_tasks_created_after_it(balancer):
    """Wherever a leaf runs (stolen or placed elsewhere), it sees at least the bound found before it."""
    r = run_tree(fan_with_bound, "root", bound=0, combine=min, initial=10 ** 9, balancer=balancer, workers=3,
                 seed=1)
    assert r.value == 100 and r.bound == 100 and r.tasks == 301


def test_minimising_with_a_custom_better_finds_the_same_optimum():
    tasks, best = tree(cost_knapsack, (0, CAPACITY, 0), bound=0, better=operator.lt, workers=2)
    assert best == -knapsack_dp(ITEMS, CAPACITY)


def test_combine_and_initial_fold_every_value_once():
    r = run_tree(queens7, (), workers=3, combine=max, initial=-1)
    assert r.value == 1  # max over the solutions' 1s and the initial -1
    r = run_tree(queens6, (), workers=2, initial=100)
    assert r.value == 104  # initial is folded exactly once, not once per worker


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), workers=st.integers(1, 3), balancer=st.sampled_from(MIGRATION))
def test_every_task_of_a_random_tree_is_expanded_exactly_once(seed, workers, balancer):
    """The value names its node: the union of all values is the serial tree, and as many tasks ran."""
    root = (0, 0, seed)
    values, n_tasks = serial(random_tree, root)
    r = run_tree(random_tree, root, combine=operator.or_, initial=frozenset(), balancer=balancer,
                 workers=workers, seed=seed)
    assert r.value == frozenset().union(*values)
    assert len(r.value) == n_tasks == r.tasks


# --- the base class's hooks, driven by the real engine ------------------------------------------------
class _Test(MigrationBalancer):
    source = "test"
    taxonomy = Taxonomy("test", "test", "test", "test", "test")

    def __init__(self):
        pass


class PeriodicHalving(_Test):
    """Periodic and central: at every update, the most loaded node sends half its queue to each
    node the coordinator knows to be empty (a Loadserver-like rule)."""

    name = "test-periodic"
    periodic = True
    interval = 0

    def balance(self, view):
        src = max(range(view.n_nodes), key=lambda i: view.queue[i])
        return [Transfer(src, i, view.queue[src] // 2) for i in range(view.n_nodes)
                if i != src and view.queue[i] == 0 and view.queue[src] > 1]


class AskAll(_Test):
    """Receiver-initiated ahead of time (low water 2), one request per other node (RID-like)."""

    name = "test-ask-all"
    receiver_initiated = True
    low_water = 2

    def on_idle(self, view, node):
        return [Transfer(v, node, 1) for v in view.neighbours[node]]


class AskSelf(_Test):
    name = "test-ask-self"
    receiver_initiated = True

    def on_idle(self, view, node):
        return node


@pytest.mark.parametrize("balancer", [PeriodicHalving(), AskAll(), WorkStealing(fraction=1.0, max_tasks=1)],
                         ids=["periodic", "several requests", "steal one"])
def test_the_engine_honours_every_hook_of_the_base_class(balancer):
    r = run_tree(queens8, (), balancer=balancer, workers=3)
    assert r.value == 92 and r.tasks == serial(queens8, ())[1]


def test_a_balancer_choosing_an_impossible_victim_is_an_error_not_a_hang():
    with pytest.raises(DlbkitError, match=r"worker \d: the victim test-ask-self.on_idle chose for node \d must be another node"):
        run_tree(queens6, (), balancer=AskSelf(), workers=2)


# --- failures and bad input ----------------------------------------------------------------------------
def test_exception_in_expand_raises_task_error_and_leaves_no_process(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("DLBKIT_TEST_PIDS", str(pids))
    with pytest.raises(TaskError) as err:
        run_tree(failing, (0, 0), workers=3)
    e = err.value
    assert e.index == "(13, 3)"  # repr of the failing task
    assert str(e).startswith("task (13, 3) failed: ZeroDivisionError") and e.what == "task"  # the kind named
    assert "ZeroDivisionError: node 13 is cursed" in str(e) and "in failing" in e.remote_traceback
    assert isinstance(e.__cause__, ZeroDivisionError)
    seen = {int(p) for p in pids.read_text().split()}
    assert seen and os.getpid() not in seen
    for pid in seen:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def counts_but_not_from_text(a, b):
    if isinstance(a, str):
        raise TypeError(f"cannot add a count to {a!r}")
    return a + b


def test_combine_failing_in_the_coordinator_names_combine_and_the_workers_value():
    """The coordinator folds the workers' values with *combine*, starting from *initial*: its failure
    there was "item combining worker 0's result failed", naming neither the kind nor the function."""
    with pytest.raises(TaskError, match=r"^combine \(counts_but_not_from_text\) of worker 0's value failed: "
                       r"TypeError: cannot add a count to 'start'") as err:
        run_tree(queens6, (), workers=2, combine=counts_but_not_from_text, initial="start")
    assert (err.value.what, err.value.index) == ("combine", 0) and isinstance(err.value.__cause__, TypeError)


def test_expand_returning_the_wrong_shape_is_a_task_error_naming_the_shape():
    with pytest.raises(TaskError, match=r"expand must return \(children, value\)"):
        tree(lambda t: [1, 2, 3], 0, workers=1)


@pytest.mark.parametrize("kw, field", [
    ({"balancer": "gss"}, "balancer"),
    ({"balancer": "bogus"}, "balancer"),
    ({"params": {"fraction": 2.0}}, "fraction"),
    ({"backend": "tcp"}, "backend"),
    ({"workers": 0}, "workers"),
    ({"better": operator.lt}, "better"),
    ({"combine": 3}, "combine"),
    ({"seed": -1}, "seed"),
    ({"emulate": [1.0, 0.0]}, "emulate"),
], ids=lambda x: str(x) if isinstance(x, str) else None)
def test_bad_arguments_are_config_errors_naming_the_field(kw, field):
    with pytest.raises(ConfigError, match=field):
        run_tree(queens6, (), **kw)


def test_expand_must_be_callable():
    with pytest.raises(ConfigError, match="expand"):
        tree(None, ())


def test_emulated_speeds_are_recorded_and_the_result_unchanged():
    r = run_tree(queens7, (), emulate=[1.0, 0.5], seed=1)
    assert r.value == 40 and r.trace.n_nodes == 2 and r.trace.speeds == [1.0, 0.5]


# --- MPI -----------------------------------------------------------------------------------------------
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent))

MPI_SCRIPT = textwrap.dedent("""
    import sys
    from mpi4py import MPI
    from dlbkit import run_tree
    from dlbkit import TaskError

    def queens(board, n=7):
        row = len(board)
        if row == n:
            return [], 1
        return [board + (c,) for c in range(n)
                if all(c != q and abs(c - q) != row - r for r, q in enumerate(board))], None

    def bad(board):
        if len(board) == 3:
            raise ValueError("too deep")
        return queens(board)

    rank = MPI.COMM_WORLD.Get_rank()
    out = open(f"{sys.argv[1]}/rank{rank}.txt", "w", buffering=1)  # ranks' stdout would interleave
    for balancer in ("steal", "random"):
        r = run_tree(queens, (), balancer=balancer, backend="mpi", seed=3)
        print(f"rank {rank} {balancer} {r.value} {r.tasks} {r.trace.source} {len(r.trace.meta['expanded'])}",
              file=out)
    try:
        run_tree(bad, (), backend="mpi")
    except TaskError as e:
        print(f"rank {rank} TaskError {e.index}", file=out)
""")


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not installed next to this Python")
def test_mpi_backend_counts_on_every_rank_and_fails_cleanly(tmp_path):
    script = tmp_path / "tree_mpi.py"
    script.write_text(MPI_SCRIPT)
    p = subprocess.run([MPIEXEC, "-n", "3", sys.executable, str(script), str(tmp_path)], capture_output=True,
                       text=True, timeout=120)
    lines = sorted(ln for k in range(3) for ln in (tmp_path / f"rank{k}.txt").read_text().splitlines())
    tasks = serial(queens7, ())[1]
    for balancer in ("steal", "random"):
        assert [ln for ln in lines if f" {balancer} " in ln] == [
            f"rank {k} {balancer} 40 {tasks} mpi 2" for k in range(3)]
    errors = [ln for ln in lines if "TaskError" in ln]
    assert len(errors) == 1 and errors[0].startswith("rank 0 TaskError (")
    assert p.returncode != 0  # the worker ranks left with SystemExit: the job reports failure
    for k in (1, 2):  # each worker rank says what failed, a task, in one line
        assert re.search(rf"dlbkit: rank {k} stopping: task \(.*\) failed on rank [12] \(traceback on rank 0\)",
                         p.stderr), p.stderr


# --- a long sequential phase: failed steals back off without overflow -----------
def test_steal_backoff_is_capped_without_overflow():
    from dlbkit.families.tree.runtime.coordinator import STEAL_BACKOFF_S, steal_backoff

    lo, hi = STEAL_BACKOFF_S
    assert steal_backoff(1) == lo and steal_backoff(2) == 2 * lo
    delays = [steal_backoff(f) for f in range(1, 2000)]
    assert delays == sorted(delays) and delays[-1] == hi
    for f in (1025, 10**6, 10**100):  # 2.0 ** 1024 overflowed
        assert steal_backoff(f) == hi
    assert steal_backoff(10**6, 1e-4, 1e-4) == 1e-4


CHAIN = 20_000


def chain(n):
    """A chain: every task has one child, so one worker works and the other only fails to steal."""
    return ([n + 1] if n + 1 < CHAIN else []), 1


def slow_chain(n):
    time.sleep(5e-5)
    return chain(n)


@pytest.mark.full  # scale: a 20 000-task chain
def test_a_20000_task_chain_completes_on_2_workers(monkeypatch):
    """Past the 1 025th consecutive empty steal answer, where ``2.0 ** (failures - 1)`` overflowed: a
    faster check and back-off make the idle worker fail about 500 times a second, so a chain of
    tasks of ~0.1 ms gets there within seconds."""
    from dlbkit.families.tree.runtime import coordinator as tree_coordinator
    from dlbkit.families.tree.runtime import worker as tree_worker

    monkeypatch.setattr(tree_worker, "CHECK_S", 2e-4)  # inherited by the forked workers
    monkeypatch.setattr(tree_coordinator, "STEAL_BACKOFF_S", (1e-5, 1e-4))
    r = run_tree(slow_chain, 0, workers=2)
    assert (r.value, r.tasks) == (CHAIN, CHAIN)
    assert r.trace.meta["steals"] == 0 and r.trace.meta["steal_requests"] > 1100


def test_a_chain_completes_with_the_default_backoff():
    r = run_tree(chain, 0, workers=2)
    assert (r.value, r.tasks) == (CHAIN, CHAIN)
