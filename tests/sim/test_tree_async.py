"""The asynchronous task-tree engine: M2's worked example, message and compute costs, hooks and
triggers, determinism, conservation, and the specialised loop against the general one."""

from collections import Counter
from numbers import Real

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, Network, Node, Platform, Step, Taxonomy
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Transfer
from dlbkit.families.divisible.balancers import SelfScheduling
from dlbkit.families.tree.balancers import RandomPlacement, WorkStealing
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
from dlbkit.families.divisible.model.workload import m1_costs
from dlbkit.params import Interval
from dlbkit.families.tree.sim.engine import simulate_tree_async
from dlbkit.face.bench import M2_TICKS_PER_SECOND, MersenneIntegers, m2_platform
from dlbkit.families.tree.sim.engine import WAITING_SAMPLES

from support.profiles import examples

TRACE_FIELDS = ("node", "first", "count", "t_ask", "t_start", "t_end", "round_of", "events", "messages",
                "bytes", "end_time", "total_work", "max_item", "speeds")


def same_trace(a, b, *, ignore=("fast_path",)):
    for f in TRACE_FIELDS:
        assert getattr(a, f) == getattr(b, f), f
    ma = {k: v for k, v in a.meta.items() if k not in ignore}
    mb = {k: v for k, v in b.meta.items() if k not in ignore}
    assert ma == mb


def platform(speeds, latency=0.001, bandwidth=1e9, topology="complete", **node_kw):
    return Platform([Node(f"n{i}", speed=float(s), **node_kw) for i, s in enumerate(speeds)],
                    Network(latency=latency, bandwidth=bandwidth, topology=topology))


class _Toy(MigrationBalancer):
    source = "test"
    taxonomy = Taxonomy("test", "test", "test", "test", "test")

    def __init__(self):
        pass


class Leveller(_Toy):
    """Periodic toy: the most loaded node gives half the difference to the least loaded one when
    they differ by more than one task. Checks the exact view it is given at every call."""

    name = "leveller"
    periodic = True
    _parameter_constraints = {"interval": [Interval(Real, 0, None)]}

    def __init__(self, *, interval: float = 1):
        self.interval = interval

    def start(self, view, rng=None):
        super().start(view, rng)
        self.calls_ = 0
        self.log_ = []  # (time, transfers) of the calls that moved something

    def balance(self, view):
        self.calls_ += 1
        q = view.queue
        assert view.node == -1 and all(x >= 0 for x in q) and all(w >= 0 for w in view.work)
        hi = max(range(view.n_nodes), key=q.__getitem__)
        lo = min(range(view.n_nodes), key=q.__getitem__)
        d = q[hi] - q[lo]
        out = [Transfer(hi, lo, d // 2)] if d > 1 else []
        if out:
            self.log_.append((view.time, out))
        return out


class Prefetch(WorkStealing):
    """Work stealing that asks while it still holds up to two waiting tasks (low water 2)."""

    name = "prefetch"
    low_water = 2


class Watcher(_Toy):
    """Receiver-initiated, reads loads: asks the most loaded neighbour holding two or more tasks,
    else nobody."""

    name = "watcher"
    receiver_initiated = True

    def on_idle(self, view, node):
        best = max(view.neighbours[node], key=view.queue.__getitem__, default=None)
        return best if best is not None and view.queue[best] >= 2 else None


class Nothing(_Toy):
    name = "nothing"
    reads_loads = False


class Liar(_Toy):
    name = "liar"
    receiver_initiated = True
    reads_loads = False

    def on_idle(self, view, node):
        return node  # itself: not allowed


def expanded_once(workload):
    """Wrap *workload* so that every expansion (a call to children) is counted per task."""
    class Recording:
        order = workload.order
        seen: Counter = Counter()

        def roots(self):
            return workload.roots()

        def children(self, task):
            self.seen[task] += 1
            return workload.children(task)

        def cost(self, task):
            return workload.cost(task)

        def estimate(self, task):
            return workload.estimate(task)
    return Recording()


def all_tasks(tree) -> Counter:
    out, stack = Counter(), list(tree.roots())
    while stack:
        t = stack.pop()
        out[t] += 1
        stack.extend(tree.children(t))
    return out


def m2(p, n, *, ticks=M2_TICKS_PER_SECOND, fast=None, seed=1):
    """M2 (docs/reference-models.md): thieves ask again as soon as an empty reply arrives, so no back-off."""
    return simulate_tree_async(m2_platform(p), FlatTasks(m1_costs(n).tolist()), WorkStealing(),
                               rng=MersenneIntegers(seed), ticks_per_second=ticks, control_bytes=0,
                               task_bytes=0, fast_path=fast, backoff="off")


# --- M2's worked example (docs/reference-models.md) ------------------------------------------------
@pytest.mark.parametrize("fast", [True, False], ids=["fast", "general"])
@pytest.mark.parametrize("ticks", [M2_TICKS_PER_SECOND, None], ids=["ticks", "float"])
def test_m2_worked_example_stretch_by_stretch(ticks, fast):
    """Worker 1 steals task 0 at 0.001 and runs it 0.002 -> 0.502, then polls every 2L; worker 0 runs
    task 2 then task 1 until 7.7. 3 completions + 3,600 requests + 3,599 replies = 7,202 events."""
    tr = m2(2, 3, ticks=ticks, fast=fast)
    assert tr.meta["fast_path"] is fast
    assert tr.node == [1, 0] and tr.first == [0, 0] and tr.count == [1, 2]
    assert tr.t_start == pytest.approx([0.002, 0.0], abs=1e-12)
    assert tr.t_end == pytest.approx([0.502, 7.7], rel=1e-12)
    assert tr.end_time == pytest.approx(7.7, rel=1e-12) and tr.meta["makespan"] == tr.end_time
    assert tr.events == 7202 and tr.messages == 7200 and tr.bytes == 0.0
    assert (tr.meta["steal_requests"], tr.meta["steals"], tr.meta["tasks_moved"]) == (3600, 1, 1)
    assert tr.meta["expanded"] == [2, 1] and tr.meta["tasks"] == 3
    assert tr.total_work == pytest.approx(1.0 + 2.9 + 4.8) and tr.max_item == pytest.approx(4.8)
    if ticks:
        assert tr.end_time == 7.7  # exact: 64,680,000 ticks


@pytest.mark.parametrize("p, n", [(2, 3), (3, 50), (5, 200), (8, 500), (16, 2000)])
@pytest.mark.parametrize("ticks", [M2_TICKS_PER_SECOND, None], ids=["ticks", "float"])
def test_m2_fast_loop_equals_general_loop(p, n, ticks):
    fast, general = m2(p, n, ticks=ticks, fast=True), m2(p, n, ticks=ticks, fast=False)
    assert fast.meta["fast_path"] and not general.meta["fast_path"]
    same_trace(fast, general)


def test_float_seconds_and_ticks_agree_at_small_sizes():
    """Same decisions (the tolerance treats equal rational times as equal); times agree to round-off."""
    a, b = m2(16, 2000, ticks=None), m2(16, 2000)
    assert (a.events, a.meta["steals"], a.node, a.count) == (b.events, b.meta["steals"], b.node, b.count)
    assert a.t_end == pytest.approx(b.t_end, rel=1e-12, abs=1e-12)


# --- cost model ----------------------------------------------------------------------------------------
def test_messages_take_latency_plus_bytes_over_bandwidth():
    """Request 32 B, reply 32 + 16 B per task at 1000 B/s over 10 ms: 0.042 s there, 0.058 s back."""
    p = platform([1, 1], latency=0.01, bandwidth=1000.0)
    tr = simulate_tree_async(p, FlatTasks([1.0] * 4), WorkStealing(), seed=0)
    assert not tr.meta["fast_path"]  # replies carrying tasks are longer: not one message time
    row = tr.node.index(1)
    assert tr.t_start[row] == pytest.approx(0.042 + 0.058)  # node 0 held 3 waiting tasks: gives 1
    assert tr.t_end[row] == pytest.approx(1.1)
    assert tr.bytes == pytest.approx(32 * tr.messages + 16 * tr.meta["tasks_moved"])


def test_messages_cross_hops_of_the_topology():
    """Chain 0-1-2: node 2's request to node 1 takes one hop, and the balancer only sees neighbours."""
    p = platform([1, 1, 1], latency=0.5, topology="chain")
    tr = simulate_tree_async(p, FlatTasks([10.0] * 7), WorkStealing(), seed=3, control_bytes=0, task_bytes=0,
                             start_node=[1] * 7)
    assert sum(tr.meta["expanded"]) == 7
    first = {w: tr.t_start[tr.node.index(w)] for w in (0, 2)}
    assert first[0] == pytest.approx(1.0) and first[2] == pytest.approx(1.0)  # one hop there and back


@pytest.mark.parametrize("ticks", [None, 1000])
def test_compute_integrates_availability(ticks):
    """Speed 2, availability 1 until t = 1 then 0.5: 6 work units take 1 s (2 units) + 4 s (4 units)."""
    p = Platform([Node("a", speed=2.0, availability=Step(at=1.0, level=0.5))], Network())
    tr = simulate_tree_async(p, FlatTasks([6.0]), Nothing(), ticks_per_second=ticks)
    assert tr.t_end == pytest.approx([5.0]) and tr.end_time == pytest.approx(5.0)


def test_breadth_first_runs_the_oldest_and_depth_first_the_newest():
    tree = TaskTree(depth=3, fanout=2, grain=1.0)
    order = {}
    for o in ("df", "bf"):
        seen = []
        rec = expanded_once(TaskTree(depth=3, fanout=2, grain=1.0, order=o))
        rec.children = lambda t, seen=seen: (seen.append(t), tree.children(t))[1]
        simulate_tree_async(platform([1]), rec, Nothing())
        order[o] = [t >> 8 for t in seen]  # task ids
    assert order["df"] == [0, 2, 6, 5, 1, 4, 3]
    assert order["bf"] == [0, 1, 2, 3, 4, 5, 6]


# --- triggers and hooks ----------------------------------------------------------------------------------
def test_periodic_balance_runs_when_a_node_has_completed_interval_tasks():
    """001 §2.9: i tasks per node between invocations. One node working alone calls it every i of its
    completions (not after the last). Two equal nodes, i = 2, completions of both at t = 1..6 (node 0
    first at each instant): node 0 reaches 2 at t = 2 (call); node 1, which completed one task at
    t = 2 after the call, reaches 2 at t = 3 (call); node 0 then at t = 5 (call); t = 6 ends."""
    tree = TaskTree(depth=8, fanout=2, grain=1.0)  # 255 tasks
    for interval, p in [(1, 1), (2, 1), (3, 1), (0.5, 1)]:
        b = Leveller(interval=interval)
        tr = simulate_tree_async(platform([1] * p), tree, b, seed=2)
        assert tr.meta["tasks"] == 255
        assert b.calls_ == 254 // max(1, int(interval))
    b = Leveller(interval=2)
    tr = simulate_tree_async(platform([1, 1]), FlatTasks([1.0] * 12), b, seed=2, start_node=[0] * 6 + [1] * 6,
                             control_bytes=0, task_bytes=0)
    assert b.calls_ == 3 and tr.meta["transfers"] == 0
    tr = simulate_tree_async(platform([1] * 4), tree, Leveller(interval=1), seed=2)
    assert tr.meta["transfers"] > 0 and tr.meta["tasks_moved"] >= tr.meta["transfers"]


def test_periodic_orders_travel_one_hop_then_the_tasks_travel():
    """Leveller at every load change, 2 nodes, 4 tasks of 10 s on node 0. At t = 0 nothing is
    called; node 0's first completion at 10 s (its next task started) leaves queues [2, 0]: an order reaches node 0 at 10.1 s
    and its oldest task reaches node 1 at 10.2 s."""
    b = Leveller(interval=0)
    tr = simulate_tree_async(platform([1, 1], latency=0.1), FlatTasks([10.0] * 4), b, control_bytes=0,
                             task_bytes=0)
    assert tr.t_start[tr.node.index(1)] == pytest.approx(10.2)
    assert tr.meta["transfers"] == 1 and tr.meta["tasks_moved"] == 1
    assert tr.end_time == pytest.approx(30.0)


def test_the_centre_counts_its_orders_while_they_travel():
    """40 tasks of 1 s on node 0 of two, 3 s per message. The first completion (t = 1) orders 19
    tasks; the completions while they travel see them at node 1 ([18, 19], [17, 19], ...), so node 0
    is never told to send them again (without this every completion would order 19 more)."""
    b = Leveller(interval=0)
    tr = simulate_tree_async(platform([1, 1], latency=3.0), FlatTasks([1.0] * 40), b, control_bytes=0,
                             task_bytes=0)
    (t0, first), *later = b.log_
    assert t0 == pytest.approx(1.0) and first == [Transfer(0, 1, 19)]
    assert all(tr_[0].src == 1 for t, tr_ in later if t < 7.0)  # node 0 ran below node 1's count
    assert tr.t_start[tr.node.index(1)] == pytest.approx(7.0)
    assert tr.meta["tasks"] == 40 and tr.meta["tasks_moved"] < 30


def test_balanced_initial_state_moves_nothing():
    """Equal nodes, each starting with the same tasks: the leveller never orders, steal never moves."""
    p = platform([2] * 4)
    work = FlatTasks([1.0] * 20)
    places = [i % 4 for i in range(20)]
    for b in (Leveller(interval=0), Leveller(interval=1), WorkStealing()):
        tr = simulate_tree_async(p, work, b, seed=1, start_node=places)
        assert tr.meta["transfers"] == 0 and tr.meta["tasks_moved"] == 0 and tr.meta["steals"] == 0
        assert tr.meta["expanded"] == [5] * 4 and tr.end_time == pytest.approx(2.5)


def test_low_water_asks_while_still_busy():
    """With low water 2, thieves hold work before they run dry: steals happen while nodes compute."""
    tree = TaskTree(kind="random", depth=12, fanout=2, grain=1.0, seed=4)
    plain = simulate_tree_async(platform([1, 2, 3, 4]), tree, WorkStealing(), seed=5, control_bytes=0,
                                task_bytes=0)
    pre = simulate_tree_async(platform([1, 2, 3, 4]), tree, Prefetch(), seed=5, control_bytes=0, task_bytes=0)
    assert pre.meta["tasks"] == plain.meta["tasks"] == tree.count()[0]
    assert pre.meta["steal_requests"] > plain.meta["steal_requests"]
    # a busy stretch per steal at most; prefetching keeps nodes busy across steals: fewer stretches
    assert len(pre.node) < len(plain.node)


def test_a_node_that_asked_nobody_asks_again_when_a_neighbours_load_changes():
    """At t = 0 every queue is empty, so the watcher's idle nodes ask nobody; once node 0's
    expansions fill its queue, they ask it (the view of a rule that reads loads is exact)."""
    tree = TaskTree(depth=10, fanout=2, grain=1.0)
    tr = simulate_tree_async(platform([1] * 4), tree, Watcher(), seed=1)
    assert tr.meta["tasks"] == tree.count()[0]
    assert tr.meta["steals"] >= 3 and all(e > 0 for e in tr.meta["expanded"])
    assert tr.end_time < 0.5 * tree.count()[0]  # far from running alone


def test_sender_initiated_children_travel_to_their_nodes():
    tree = TaskTree(depth=10, fanout=2, grain=1.0)
    tr = simulate_tree_async(platform([1] * 4), tree, RandomPlacement(), seed=8)
    n = tree.count()[0]
    assert tr.meta["tasks"] == n and all(e > 0 for e in tr.meta["expanded"])
    # about 3/4 of the children land elsewhere; each crossing is counted once
    assert 0.6 * (n - 1) < tr.meta["tasks_moved"] < 0.9 * (n - 1)


def test_waiting_series_is_compact_and_ends_empty():
    tr = m2(16, 10_000)
    w = tr.meta["waiting"]
    assert WAITING_SAMPLES // 2 <= len(w) <= 2 * WAITING_SAMPLES + 2
    assert w[0] == (0.0, 10_000) and w[-1] == (tr.end_time, 0)
    times = [t for t, _ in w]
    assert times == sorted(times)
    assert simulate_tree_async(m2_platform(4), FlatTasks([1.0] * 9), WorkStealing(), seed=0,
                               record=False).meta["waiting"] == []


# --- errors -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make, field", [
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), SelfScheduling()), "balancer"),
    (lambda: simulate_tree_async(platform([1, 1], cores=2), FlatTasks([1.0]), WorkStealing()), "cores"),
    (lambda: simulate_tree_async(platform([1, 1], latency=0.0), FlatTasks([1.0]), WorkStealing(),
                                 control_bytes=0), "network.latency"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), Leveller(), fast_path=True), "fast_path"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), WorkStealing(), start_node=2),
     "start_node"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0, 2.0]), WorkStealing(), start_node=[0]),
     "start_node"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), WorkStealing(), ticks_per_second=0),
     "ticks_per_second"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), WorkStealing(), task_bytes=-1),
     "task_bytes"),
    (lambda: simulate_tree_async(platform([1, 1]), [1, 2], WorkStealing()), "workload"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), Liar(), control_bytes=0, task_bytes=0),
     "victim"),
    (lambda: simulate_tree_async(platform([1, 1]), FlatTasks([1.0]), Liar(), fast_path=False), "victim"),
])
def test_bad_input_names_the_field(make, field):
    with pytest.raises(ConfigError, match=field):
        make()


# --- properties over small random trees ------------------------------------------------------------
BALANCERS = {"steal": WorkStealing, "random": RandomPlacement, "leveller": lambda: Leveller(interval=1),
             "leveller0": lambda: Leveller(interval=0), "prefetch": Prefetch, "none": Nothing, "watcher": Watcher}

cases = st.fixed_dictionaries({
    "kind": st.sampled_from(["balanced", "random", "imbalance"]),
    "depth": st.integers(1, 7), "fanout": st.integers(1, 3), "tree_seed": st.integers(0, 50),
    "imbalance": st.sampled_from([0.0, 0.5, 0.9]), "order": st.sampled_from(["df", "bf"]),
    "speeds": st.lists(st.integers(1, 4), min_size=1, max_size=5),
    "latency": st.sampled_from([0.001, 0.05, 0.5]), "balancer": st.sampled_from(sorted(BALANCERS)),
    "seed": st.integers(0, 2**31), "ticks": st.sampled_from([None, 1000]),
    "bytes": st.sampled_from([(0, 0), (32, 16)]), "spread": st.booleans(),
})


def run_case(c, **kw):
    tree = TaskTree(kind=c["kind"], depth=c["depth"], fanout=c["fanout"], seed=c["tree_seed"],
                    imbalance=c["imbalance"], order=c["order"], grain=1.0, slope=0.1)
    rec = expanded_once(tree)
    rec.seen = Counter()
    p = platform(c["speeds"], latency=c["latency"], bandwidth=1000.0)
    start = [len(c["speeds"]) - 1] if c["spread"] else 0
    tr = simulate_tree_async(p, rec, BALANCERS[c["balancer"]](), seed=c["seed"], ticks_per_second=c["ticks"],
                             control_bytes=c["bytes"][0], task_bytes=c["bytes"][1], start_node=start, **kw)
    return tr, rec.seen, all_tasks(tree)


@settings(max_examples=examples(150), deadline=None)
@given(cases)
def test_every_task_is_expanded_exactly_once_and_tasks_are_conserved(c):
    tr, seen, tree = run_case(c)
    assert seen == tree  # each tree node once, nothing else
    n = sum(tree.values())
    assert tr.meta["tasks"] == n == sum(tr.meta["expanded"]) == sum(tr.count)
    assert tr.meta["waiting"][-1][1] == 0
    assert tr.meta["steals"] <= tr.meta["steal_requests"] and tr.meta["steals"] <= tr.meta["tasks_moved"]
    eps = 1e-9  # float times within the simultaneity tolerance are one instant
    # the run ends at the completion processed last in its instant: in floats it may be a round-off
    # earlier than another completion of that instant
    assert tr.events >= n and max(tr.t_end) - eps <= tr.end_time <= max(tr.t_end)
    if c["ticks"]:
        assert tr.end_time == max(tr.t_end)
    for w in range(len(c["speeds"])):  # a node's busy stretches are ordered and do not overlap
        rows = [(a, s, e) for x, a, s, e in zip(tr.node, tr.t_ask, tr.t_start, tr.t_end) if x == w]
        assert all(a <= s + eps and s <= e for a, s, e in rows)
        assert all(rows[k][2] <= rows[k + 1][1] + eps for k in range(len(rows) - 1))
    # no bound can be beaten: the work over the total speed (up to a rounded half tick per task)
    assert tr.end_time >= n / sum(c["speeds"]) - (n / c["ticks"] if c["ticks"] else 1e-9)


@settings(max_examples=examples(60), deadline=None)
@given(cases)
def test_same_seed_same_trace(c):
    (a, _, _), (b, _, _) = run_case(c), run_case(c)
    same_trace(a, b, ignore=())


@settings(max_examples=examples(100), deadline=None)
@given(cases.filter(lambda c: c["balancer"] in ("steal", "prefetch", "none") and c["bytes"] == (0, 0)))
def test_fast_loop_gives_the_general_loops_trace(c):
    fast, _, _ = run_case(c, fast_path=True)
    general, _, _ = run_case(c, fast_path=False)
    assert fast.meta["fast_path"] and not general.meta["fast_path"]
    same_trace(fast, general)


def test_a_different_seed_draws_other_victims():
    a, b = m2(16, 2000, seed=1), m2(16, 2000, seed=2)
    assert a.node != b.node
    c = simulate_tree_async(m2_platform(16), FlatTasks(m1_costs(2000).tolist()), WorkStealing(), seed=7,
                            control_bytes=0, task_bytes=0)
    d = simulate_tree_async(m2_platform(16), FlatTasks(m1_costs(2000).tolist()), WorkStealing(), seed=7,
                            control_bytes=0, task_bytes=0)
    same_trace(c, d, ignore=())


def test_the_loadserver_node_never_holds_the_root():
    from dlbkit import ConfigError
    from dlbkit.balancers.registry import make
    p = platform([1, 1, 1, 1])
    with pytest.raises(ConfigError, match="start_node"):
        simulate_tree_async(p, TaskTree(depth=6), make("ldsv", {"server": 0}), seed=1)
    tr = simulate_tree_async(p, TaskTree(depth=6), make("ldsv"), seed=1)  # server: the last node
    assert tr.meta["expanded"][3] == 0 and sum(tr.meta["expanded"]) == 63
