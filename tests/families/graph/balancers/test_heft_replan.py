"""The replanning HEFT online mapper (heft-replan) on the graph family's dynamic engine."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError
from dlbkit.balancers.registry import make
from dlbkit.families.graph.balancers.replanning_heft import ReplanningHEFT
from dlbkit.families.graph.model.generate import atmospheric, fft, gaussian_elimination, layered, topcuoglu10
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic
from dlbkit.families.graph.sim.static import simulate_graph
from dlbkit.model.availability import Step
from dlbkit.model.platform import Network, Node, Platform

from support.profiles import examples


def _hetero():
    return Platform([Node("a", speed=1.0), Node("b", speed=2.0), Node("c", speed=0.5)])


@pytest.mark.parametrize("g", [topcuoglu10(), atmospheric(), fft(8), layered(60, width=6, seed=3, ccr=1.0)],
                         ids=lambda g: g.name)
def test_constant_availability_places_every_task_where_static_heft_does(g):
    """No speed changes → no replan: the one plan is static HEFT's, task for task."""
    for nodes in (3, _hetero()):
        if g.costs is not None and not isinstance(nodes, int):
            continue
        b = make("heft-replan")
        tr = simulate_graph_dynamic(nodes, g, b, seed=1)
        assert tr.meta["assignment"] == simulate_graph(nodes, g, make("heft"), seed=1).meta["assignment"]
        assert b.replans_ == []


@pytest.mark.parametrize("g", [topcuoglu10(), atmospheric(), fft(8), layered(60, width=6, seed=3, ccr=1.0)],
                         ids=lambda g: g.name)
def test_constant_availability_makespan_equals_static_heft(g):
    """local_order "plan": each node runs its tasks in the order of HEFT's planned starts, waiting for
    the next one as a replayed static plan does, so with no replan every task starts and ends as in
    static HEFT, to the last bit (80 on Topcuoglu's Fig. 2, 39 for the atmospheric graph on 3 nodes)."""
    for nodes in (3, _hetero()):
        if g.costs is not None and not isinstance(nodes, int):
            continue
        static = simulate_graph(nodes, g, make("heft"), seed=1)
        tr = simulate_graph_dynamic(nodes, g, make("heft-replan"), seed=1)
        assert tr.makespan == static.makespan
        start = [None] * g.n_tasks
        for i, t0 in zip(static.first, static.t_start):
            start[i] = t0
        if not _waited_at_a_sender(g, tr):  # else a task off the critical path may start later (next test)
            assert tr.meta["start"] == start
    assert simulate_graph_dynamic(3, topcuoglu10(), make("heft-replan"), seed=1).makespan == 80.0
    assert simulate_graph_dynamic(3, atmospheric(), make("heft-replan"), seed=1).makespan == 39.0


def test_where_it_still_differs_data_waited_at_the_sender_for_the_placement():
    """The one difference left under constant availability (docs/graphs.md): a task is placed one
    level ahead, once every predecessor has received data, so output that a remote predecessor
    finished before that waits at its sender. On this graph on 4 nodes the first task that starts
    later than in static HEFT is such a task (175.34 → 176.10, +0.43%)."""
    g = layered(60, width=6, seed=3, ccr=1.0)
    static = simulate_graph(4, g, make("heft"), seed=1)
    tr = simulate_graph_dynamic(4, g, make("heft-replan"), seed=1)
    assert tr.makespan == pytest.approx(176.0955363365677, rel=1e-12) and static.makespan == pytest.approx(
        175.34226755018142, rel=1e-12)
    start = [None] * g.n_tasks
    for i, t0 in zip(static.first, static.t_start):
        start[i] = t0
    first = min((i for i in range(g.n_tasks) if tr.meta["start"][i] != start[i]), key=lambda i: start[i])
    assert first in _waited_at_a_sender(g, tr)


def _waited_at_a_sender(g, tr) -> set:
    """The tasks placed after a remote predecessor had finished (its data waited at the sender)."""
    a, fin, placed = tr.meta["assignment"], tr.meta["finish"], tr.meta["placed_at"]
    return {i for i in range(g.n_tasks) if any(fin[j] < placed[i] and a[j] != a[i] and d > 0 for j, d in g.preds[i])}


class _Keyed(ReplanningHEFT):
    """heft-replan with its answers replaced (plan-mode contract checks)."""

    name = "heft-replan"

    def __init__(self, answer=None):
        super().__init__()
        self.answer = answer

    def place(self, view):
        out = super().place(view)
        return self.answer(out) if self.answer else out


@pytest.mark.parametrize("answer, text", [
    (lambda out: [(i, p) for i, p, _ in out], "(task index, node index, key) triples"),
    (lambda out: [(i, p, "soon") for i, p, _ in out], "a finite number or a non-empty tuple of them"),
    (lambda out: [(i, p, (float("nan"),)) for i, p, _ in out], "key of task"),
    (lambda out: [(i, p, ()) for i, p, _ in out], "key of task"),
])
def test_a_plan_mode_answer_needs_a_key_per_task(answer, text):
    with pytest.raises(ConfigError, match=re.escape(text)):
        simulate_graph_dynamic(3, topcuoglu10(), _Keyed(answer), seed=0)


def test_a_number_key_is_a_one_tuple_and_a_priority_mappers_triple_is_refused():
    from dlbkit.families.graph.balancers import decide
    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.model.view import GraphOnlineView

    v = GraphOnlineView(3, costs_for(topcuoglu10(), 3), candidates=[0], gst={0})
    b = _Keyed(lambda out: [(0, 1, 2.5)])
    b.start(v)
    assert decide.online_place(b, v) == [(0, 1, (2.5,))]
    pd = make("pd")
    pd.start(v)
    pd.place = lambda view: [(0, 1, 2.5)]
    with pytest.raises(ConfigError, match=re.escape("(task index, node index) pairs")):
        decide.online_place(pd, v)


def test_plan_order_and_preemption_are_refused_together():
    b = _Keyed()
    b.preemptive = True
    with pytest.raises(ConfigError, match="preemptive with local_order 'plan'"):
        simulate_graph_dynamic(3, topcuoglu10(), b, seed=0)


def test_the_nodes_follow_the_plan_where_the_priority_rule_would_not():
    """Gaussian elimination (m = 8, 35 tasks) on two unit nodes: HEFT plans 98; the same placements run
    by the priority rule take 102 (a node runs a ready task of higher priority ahead of the plan's next
    one, which then waits); following the plan's order gives static HEFT's 98 and its start times."""
    g = gaussian_elimination(8)
    static = simulate_graph(2, g, make("heft"), seed=1)
    assert static.makespan == 98.0
    assert simulate_graph_dynamic(2, g, make("heft-replan", {"local_order": "priority"}), seed=1).makespan == 102.0
    tr = simulate_graph_dynamic(2, g, make("heft-replan"), seed=1)
    start = [None] * g.n_tasks
    for i, t0 in zip(static.first, static.t_start):
        start[i] = t0
    assert tr.makespan == 98.0 and tr.meta["start"] == start and not _waited_at_a_sender(g, tr)


def test_under_the_thesis_model_a_stall_is_broken_and_the_run_finishes():
    """Thesis model (002 §5.3 rule 3: a computed task waits at a message whose receiver is not placed):
    a node waiting for its next planned task can wait for a transmission that waits for a placement
    that waits for a task queued behind it. On this graph (3 unit nodes, constant availability; found
    by a search over 1 500 random layered graphs, the only one of them that stalls once rule 3 is read
    per message) that happens once; the engine then lets each idle node run its ready task of least
    key, and the run finishes with every task once after its inputs."""
    g = layered(54, width=6, density=0.2, seed=103, ccr=3.0)
    tr = simulate_graph_dynamic(3, g, make("heft-replan"), seed=103, cost_model="thesis")
    assert tr.meta["stalls"] == 1 and set(tr.first) == set(range(g.n_tasks))
    s, f = tr.meta["start"], tr.meta["finish"]
    assert all(s[j] >= s[i] for i in range(g.n_tasks) for j, _ in g.succs[i])  # a receiver starts after its sender
    assert all(x is not None for x in f)
    assert "stalls" not in simulate_graph_dynamic(3, g, make("pd"), seed=261, cost_model="thesis").meta


def _two_levels():
    """r(1) → a1..a4 (2 each) → b_k after a_k (2 each); no data."""
    ids = ["r"] + [f"a{k}" for k in range(1, 5)] + [f"b{k}" for k in range(1, 5)]
    edges = [("r", f"a{k}", 0) for k in range(1, 5)] + [(f"a{k}", f"b{k}", 0) for k in range(1, 5)]
    return TaskGraph(ids, loads=[1] + [2] * 8, edges=edges)


def test_a_step_drop_is_replanned_around_by_hand():
    """Two nodes of speed 1, no latency; n1 keeps 25% of its CPU from t = 0.5.

    HEFT plans r n0 [0,1]; a1 n0 [1,3], a2 n1 [1,3], a3 n0 [3,5], a4 n1 [3,5]; b1 n0 [5,7], b2 n1
    [5,7], b3 n0 [7,9], b4 n1 [7,9] (ties → n0): 9 planned. Replayed, n1's four tasks take 8 s
    each from t = 1: a2 [1,9], a4 [9,17], b2 [17,25], b4 [25,33] → 33.
    Replanning: the a's are placed at t = 0 (placeable as soon as r is placed), before the drop; the
    b's become placeable at t = 1 (r's data reaches the a's), when n1 reads 0.25 → replan with n1's
    tasks at 8 s: n1 is busy to 17 (a2, a4), so b1..b4 all go to n0: b1 [5,7] after a3, b3 [7,9],
    b2 [9,11] once a2 ends at 9, b4 [17,19] once a4 ends → 19."""
    p = Platform([Node("n0"), Node("n1", availability=Step(at=0.5, level=0.25))], Network(latency=0.0))
    g = _two_levels()
    static = simulate_graph_dynamic(p, g, make("heft"), seed=0)
    assert static.makespan == 33.0
    assert simulate_graph(p, g, make("heft"), seed=0).makespan == 33.0  # the evaluator's replay agrees
    b = make("heft-replan")
    tr = simulate_graph_dynamic(p, g, b, seed=0)
    assert tr.makespan == 19.0
    assert tr.meta["assignment"] == [0, 0, 1, 0, 1, 0, 0, 0, 0]
    assert tr.meta["finish"] == [1.0, 3.0, 9.0, 5.0, 17.0, 7.0, 11.0, 9.0, 19.0]
    assert b.replans_ == [(1.0, 1)]
    # a threshold above the drop (|0.25 − 1| = 0.75) never replans: static HEFT's 33 again
    assert simulate_graph_dynamic(p, g, make("heft-replan", {"threshold": 0.8}), seed=0).makespan == 33.0


def test_every_k_finished_tasks_replans_by_count():
    g = layered(40, width=5, seed=2, ccr=0.5)
    b = make("heft-replan", {"every": 5})
    tr = simulate_graph_dynamic(3, g, b, seed=0)
    assert b.replans_ and all(k - k0 >= 5 for (_, k0), (_, k) in zip([(0, 0)] + b.replans_, b.replans_))
    assert len(tr.first) == g.n_tasks


@pytest.mark.parametrize("bad", [{"threshold": -0.1}, {"every": -1}, {"every": 1.5}, {"insertion": "yes"},
                                 {"local_order": "fifo"}])
def test_bad_parameters_name_the_field(bad):
    with pytest.raises(ConfigError, match=next(iter(bad))):
        make("heft-replan", bad)


def test_the_static_engine_refuses_it():
    with pytest.raises(ConfigError, match="dynamic"):
        simulate_graph(3, topcuoglu10(), make("heft-replan"))


@settings(max_examples=examples(25), deadline=None)
@given(n=st.integers(2, 40), width=st.integers(1, 6), seed=st.integers(0, 10_000), ccr=st.sampled_from([0.0, 0.5, 2.0]),
       at=st.floats(0.0, 20.0), level=st.floats(0.01, 1.0), every=st.integers(0, 4), threshold=st.sampled_from([0.0, 0.2]))
def test_every_task_runs_once_after_its_inputs(n, width, seed, ccr, at, level, every, threshold):
    g = layered(n, width=min(width, n), seed=seed, ccr=ccr)
    p = Platform([Node("a", speed=1.0), Node("b", speed=2.0, availability=Step(at=at, level=level)),
                  Node("c", speed=0.5)])
    tr = simulate_graph_dynamic(p, g, make("heft-replan", {"every": every, "threshold": threshold}), seed=seed)
    assert sorted(tr.first) == list(range(g.n_tasks))  # one stretch per task: done once, never preempted
    s, f, a = tr.meta["start"], tr.meta["finish"], tr.meta["assignment"]
    for i in range(g.n_tasks):
        for j, _ in g.succs[i]:
            assert s[j] >= f[i]
    by_node = {}
    for node, t0, t1 in zip(tr.node, tr.t_start, tr.t_end):
        by_node.setdefault(node, []).append((t0, t1))
    for iv in by_node.values():
        iv.sort()
        assert all(x[1] <= y[0] for x, y in zip(iv, iv[1:]))  # one task at a time per processor
    assert all(0 <= x < 3 for x in a)


def _fork():
    import time

    def f(*a):
        time.sleep(0.005)
        return sum(a) + 1
    return {"r": (f,), "a": (f, "r"), "b": (f, "r"), "c": (f, "r"), "d": (f, "a", "b"), "e": (f, "c"),
            "z": (f, "d", "e")}


def test_pd_meets_the_same_tables_and_decides_the_same_in_sim_and_for_real():
    """One GST rule (model.graph_gst) in the dynamic engine and in dlbkit.graph: on one worker (so
    the order of events is fixed) every decision is asked from the same table (candidates in the
    same order, holds, the table, placements, load levels, active tasks) and pd answers the same."""
    import dlbkit
    from dlbkit.families.graph.runtime.tasks import parse_tasks

    tasks = _fork()
    g = parse_tasks(tasks).graph
    sim = simulate_graph_dynamic(1, g, make("pd"), record_decisions=True)
    run = dlbkit.run_graph(tasks, balancer="pd", workers=1, record_decisions=True)

    def key(d):
        v = d.view
        return (d.answer, list(v.candidates), list(v.holds), sorted(v.gst), list(v.placed), list(v.load_level),
                sorted(v.active), list(v.measured_speed))
    assert [key(d) for d in run.trace.decisions] == [key(d) for d in sim.decisions]
    assert [d.view.candidates for d in sim.decisions] == [[0], [1, 2, 3], [2, 3], [3], [4], [5], [6]]
    assert run.results["z"] == 9


def test_pd_scales_task_times_by_the_measured_speed():
    """One root of load 2 on two nodes of speed 1, nothing else: P = 2/2 = 1, both nodes overfill
    (C_l = 1 − 2 = −1 each): a tie, node 0. Node 0 measured at a quarter of its speed: its time is 8,
    C_l = 1 − 8 = −7 against −1: node 1."""
    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.model.view import GraphOnlineView

    g = TaskGraph(["x"], loads=[2])
    for measured, want in (([1.0, 1.0], 0), ([0.25, 1.0], 1)):
        v = GraphOnlineView(2, costs_for(g, 2), priority=[0.0], candidates=[0], gst={0}, measured_speed=measured)
        b = make("pd")
        b.start(v)
        assert b.place(v) == [(0, want)]


def test_real_runs_take_the_replanning_heft_too():
    import dlbkit

    r = dlbkit.run_graph(_fork(), balancer="heft-replan", workers=2)
    assert r.results == {"r": 1, "a": 2, "b": 2, "c": 2, "d": 5, "e": 3, "z": 9}
    assert sorted(r.trace.first) == list(range(7))


@pytest.mark.parametrize("balancer", ["pd", "heft-replan"])
def test_a_dead_workers_placed_tasks_are_placed_again_with_the_table_rebuilt(tmp_path, balancer):
    """A chain t0 → … → t7 and a side task per link; the worker computing t3 is killed. Tasks are
    placed one level ahead, so t4 is already placed when t3 dies; both are placed again (the table
    rebuilt: t3 a candidate, t4 held by t3) and every result is kept once."""
    import os
    import signal

    import dlbkit

    marker = tmp_path / "killed"

    def work(i, *xs):
        if i == 3 and not marker.exists():
            marker.write_text("x")
            os.kill(os.getpid(), signal.SIGKILL)
        return i + sum(xs)

    tasks = {f"t{i}": (work, i, *([f"t{i - 1}"] if i else [])) for i in range(8)}
    tasks.update({f"s{i}": (work, 10 + i, f"t{i}") for i in range(8)})
    r = dlbkit.run_graph(tasks, workers=3, balancer=balancer)
    want, acc = {}, 0
    for i in range(8):
        acc = i + acc
        want[f"t{i}"] = acc
        want[f"s{i}"] = 10 + i + acc
    assert r.results == want
    assert sorted(r.trace.first) == list(range(16))
    faults = r.trace.meta["faults"]
    assert 3 in [i for _, i, _ in faults] and r.trace.meta["replans"] == 1  # t3 is task 3
