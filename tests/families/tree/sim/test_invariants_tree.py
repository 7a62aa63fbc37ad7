"""Invariants of the task-tree family over every registered migration balancer and information model.

sim/test_tree_async.py's properties run toy rules (and steal/random); sim/test_superstep.py covers the
superstep engine; runtime/test_tree.py the real runs without an information model. Here: every
registry balancer, on the asynchronous engine, under every information model and topology, runs each
task of the tree exactly once (nothing lost, nothing done twice) and the same seed gives the same
trace; a real run with an information model folds every task's value once, as a sequential fold does.
"""

import random
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dlbkit import make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.model import Network, Node, Platform, Step
from dlbkit.families.tree.model.workload import TaskTree
from dlbkit.families.tree.face.run import run_tree
from dlbkit.families.tree.sim.engine import simulate_tree_async

from support.profiles import examples

MIGRATION = sorted(n for n, c in REGISTRY.items() if c.kind == "migration")
INFO = [None, "periodic", "neighbour", "gossip", "scatter-old", "scatter-4.1", "scatter-4.2", "scatter-4.3",
        "monitored"]


class Counting:
    """A tree workload that counts every expansion (a call to children) per task."""

    def __init__(self, tree):
        self.tree, self.order, self.seen = tree, tree.order, Counter()

    def roots(self):
        return self.tree.roots()

    def children(self, task):
        self.seen[task] += 1
        return self.tree.children(task)

    def cost(self, task):
        return self.tree.cost(task)

    def estimate(self, task):
        return self.tree.estimate(task)


def every_task(tree) -> Counter:
    out, stack = Counter(), list(tree.roots())
    while stack:
        t = stack.pop()
        out[t] += 1
        stack.extend(tree.children(t))
    return out


cases = st.fixed_dictionaries({
    "balancer": st.sampled_from(MIGRATION), "info": st.sampled_from(INFO),
    "kind": st.sampled_from(["balanced", "random", "imbalance"]), "depth": st.integers(1, 6),
    "fanout": st.integers(1, 3), "tree_seed": st.integers(0, 50),
    "speeds": st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=2, max_size=5),
    "topology": st.sampled_from(["complete", "ring", "chain"]), "latency": st.sampled_from([0.001, 0.05]),
    "slow": st.booleans(), "seed": st.integers(0, 2**31), "spread": st.booleans(),
    "ticks": st.sampled_from([None, 1000]), "backoff": st.sampled_from(["auto", "off"]),
})


def run(c):
    tree = TaskTree(kind=c["kind"], depth=c["depth"], fanout=c["fanout"], seed=c["tree_seed"], grain=1.0,
                    slope=0.1)
    rec = Counting(tree)
    n = len(c["speeds"])
    topo = "chain" if c["topology"] == "ring" and n < 3 else c["topology"]
    # node 0 loses most of its CPU a few seconds in: loads change under the balancer
    p = Platform([Node(f"n{i}", speed=s, availability=Step(at=3.0, level=0.2) if c["slow"] and i == 0 else 1.0)
                  for i, s in enumerate(c["speeds"])], Network(latency=c["latency"], bandwidth=1e6, topology=topo))
    info = None if c["info"] is None else {"model": c["info"], "period": 0.5}
    start = n - 2 if c["spread"] else 0  # never the last node: ldsv's load server holds no root
    tr = simulate_tree_async(p, rec, make(c["balancer"]), seed=c["seed"], info=info, start_node=start,
                             ticks_per_second=c.get("ticks"), backoff=c.get("backoff", "auto"))
    return tr, rec.seen, every_task(tree)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_every_task_runs_exactly_once_under_every_balancer_and_information_model(c):
    tr, seen, tree = run(c)
    assert seen == tree  # each task of the tree expanded once, nothing else
    n = sum(tree.values())
    assert tr.meta["tasks"] == n == sum(tr.meta["expanded"]) == sum(tr.count)
    assert tr.meta["waiting"][-1][1] == 0  # nothing left waiting anywhere
    for w in range(len(c["speeds"])):  # a node runs one stretch at a time
        rows = sorted((s, e) for x, s, e in zip(tr.node, tr.t_start, tr.t_end) if x == w)
        assert all(s <= e for s, e in rows)
        assert all(rows[k][1] <= rows[k + 1][0] + 1e-9 for k in range(len(rows) - 1))


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_same_seed_same_trace_under_every_balancer_and_information_model(c):
    (a, _, _), (b, _, _) = run(c), run(c)
    for f in ("node", "first", "count", "t_ask", "t_start", "t_end", "messages", "bytes", "end_time"):
        assert getattr(a, f) == getattr(b, f), f
    assert a.transfers == b.transfers and a.meta.get("info_messages") == b.meta.get("info_messages")


def test_different_seeds_move_work_differently_under_a_random_rule_and_gossip():
    """Work stealing's victims and gossip's peers are drawn: over a few seeds the traces differ."""
    c = {"balancer": "steal", "info": "gossip", "kind": "random", "depth": 6, "fanout": 3, "tree_seed": 2,
         "speeds": [1.0, 1.0, 2.0, 0.5], "topology": "complete", "latency": 0.001, "slow": False, "spread": False}
    ends = {tuple(run({**c, "seed": s})[0].node) for s in range(4)}
    assert len(ends) > 1


# --- the real runtime, with an information model ---------------------------------------------------------------
def drawn_tree(task):
    """A tree drawn from a seed, fan-out 0..3, depth at most 5; the value is a distinct power of two."""
    node, depth, seed = task
    fan = 0 if depth >= 5 else random.Random(seed * 1_000_003 + node).randrange(4)
    return [(4 * node + k + 1, depth + 1, seed) for k in range(fan)], 1 << node


def sequential(expand, root):
    total, tasks, stack = 0, 0, [root]
    while stack:
        children, value = expand(stack.pop())
        total, tasks = total + value, tasks + 1
        stack.extend(children)
    return total, tasks


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), workers=st.integers(2, 3),
       balancer=st.sampled_from(["steal", "gdem", "rid", "greedy"]),
       info=st.sampled_from(["periodic", "neighbour", "gossip"]))
def test_a_real_run_with_an_information_model_folds_every_value_once(seed, workers, balancer, info):
    """Values are distinct powers of two summed: any task lost or run twice changes the sum."""
    root = (0, 0, seed)
    total, n = sequential(drawn_tree, root)
    r = run_tree(drawn_tree, root, balancer=balancer, workers=workers, seed=seed,
                 info={"model": info, "period": 0.01})
    assert r.value == total and r.tasks == n


def concat(a, b):
    """Set union written as a fold of sorted tuples: associative and commutative, any order gives one value."""
    return tuple(sorted(set(a) | set(b)))


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6), workers=st.integers(1, 3), balancer=st.sampled_from(MIGRATION),
       topology=st.sampled_from(["complete", "chain"]))
def test_dlbkit_tree_combines_to_the_sequential_fold(seed, workers, balancer, topology):
    """dlbkit.tree with a combine and an initial value equals the sequential fold of every task's value."""
    import dlbkit
    if balancer == "ldsv" and workers < 2:
        workers = 2  # the load server takes a worker of its own
    root = (0, 0, seed)

    def expand(task):
        children, _ = drawn_tree(task)
        return children, (task[0],)
    want, stack = (-1,), [root]  # the initial value, folded exactly once
    while stack:
        t = stack.pop()
        children, v = expand(t)
        want = concat(want, v)
        stack.extend(children)
    got = dlbkit.tree(expand, root, combine=concat, initial=(-1,), balancer=balancer, workers=workers,
                      seed=seed, topology=topology)
    assert got == want
