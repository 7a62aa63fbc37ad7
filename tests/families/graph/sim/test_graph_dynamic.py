"""The graph family's dynamic engine (dlbkit.families.graph.sim.dynamic) and the online mapper pd (002 §5)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError
from dlbkit.balancers.registry import REGISTRY
from dlbkit.families.graph.balancers.pd import choose, scores
from dlbkit.balancers.registry import make
from dlbkit.model.availability import Step
from dlbkit.families.graph.model.workload import TaskGraph
from dlbkit.families.graph.model.generate import atmospheric, layered, topcuoglu10
from dlbkit.model.platform import Node, Platform
from dlbkit.families.graph.sim.static import simulate_graph
from dlbkit.families.graph.sim.dynamic import simulate_graph_dynamic

from support.profiles import examples

SLOW = {"milp"}  # its own tests cover it; its plan needs HiGHS time
#: shorter searches where a mapper's plan quality is not what a test checks (annealing's default
#: 100 stages took 14 s per cost model here for plans the engines only replay)
QUICK = {"annealing": {"max_stages": 5}}
MAPPERS = sorted(n for n, c in REGISTRY.items() if c.kind == "mapping" and n not in SLOW)


def _hetero(avail=None):
    nodes = [Node("a", speed=1.0), Node("b", speed=2.0, availability=avail) if avail else Node("b", speed=2.0),
             Node("c", speed=0.5)]
    return Platform(nodes)


GRAPHS = [topcuoglu10(), atmospheric(), layered(40, width=6, seed=3)]


@pytest.mark.parametrize("name", MAPPERS)
@pytest.mark.parametrize("cost_model", ["standard", "thesis"])
def test_static_plans_take_the_evaluators_times_on_the_dynamic_engine(name, cost_model):
    """The evaluator agrees with the engine on static plans (constant availability)."""
    for g in GRAPHS:
        for nodes in (3, _hetero()):
            if g.costs is not None and not isinstance(nodes, int):
                continue
            a = simulate_graph(nodes, g, make(name, QUICK.get(name)), cost_model=cost_model, seed=1)
            b = simulate_graph_dynamic(nodes, g, make(name, QUICK.get(name)), cost_model=cost_model, seed=1)
            assert b.meta["assignment"] == a.meta["assignment"]
            assert b.makespan == a.makespan, (g.name, nodes)
            assert sorted(zip(b.first, b.t_start, b.t_end)) == sorted(zip(a.first, a.t_start, a.t_end))


@pytest.mark.parametrize("name", ["heft", "cpop", "peft"])
def test_a_plan_with_an_order_is_replayed_as_the_evaluator_replays_it_under_changing_availability(name):
    p = _hetero(Step(at=5.0, level=0.25))
    for g in GRAPHS[1:]:
        a = simulate_graph(p, g, make(name), seed=0)
        b = simulate_graph_dynamic(p, g, make(name), seed=0)
        assert b.makespan == pytest.approx(a.makespan, rel=1e-12)


def test_pd_on_a_fork_by_hand():
    """a(2) → b(3), a → c(1), data 1, 2 identical nodes, P = average of active + placeable loads.
    a → node 0 (h = −1 on both; tie → lowest node); then b, c placeable, P = 2, L = [2, 0]:
    h(b) = [−1, 0], h(c) = [−1, 0]; b (higher precedence) → node 1; then h(c) = [−1, −3] → node 0.
    a runs [0, 2]; c [2, 3] on node 0; b gets its data at 2 + 1 and runs [3, 6]."""
    g = TaskGraph(["a", "b", "c"], loads=[2, 3, 1], edges=[("a", "b", 1), ("a", "c", 1)])
    tr = simulate_graph_dynamic(2, g, make("pd"))
    assert tr.meta["assignment"] == [0, 1, 0]
    assert tr.meta["start"] == [0.0, 3.0, 2.0]
    assert tr.meta["finish"] == [2.0, 6.0, 3.0]
    assert tr.makespan == 6.0


FIG7 = {  # 002 Fig. 7 (note §8.3): task: (holds, comp, prec, C_l row, C_c row)
    "k": (1, 4, 79, [4, 4, 4, -4, 4], [-5, -10, -5, -8, -9]),
    "e": (0, 6, 76, [-1, 6, -2, -6, 6], [-4, -4, -4, -8, -4]),
    "h": (0, 4, 76, [4, 4, 4, -4, 4], [-4, -4, -2, -12, -8]),
    "i": (2, 3, 72, [3, 3, 3, -3, 3], [-1, -3, -3, -4, -6]),
    "J": (1, 15, 70, [-10, -5, -11, -15, -4], [-3, -5, -6, -3, -2]),
    "n": (1, 8, 69, [-3, 8, -4, -8, 8], [-8, -8, -10, -6, -8]),
    "o": (3, 5, 64, [5, 5, -1, -5, 5], [-4, -4, -2, -4, -4]),
    "q": (0, 6, 61, [-1, 6, -2, -6, 6], [-3, -3, -3, -3, -3]),
}


def test_fig7_gst_scores_and_choice():
    """R3: every C_l and C_p of 002's Fig. 7 GST (P = 14, L = 9, 4, 10, 14, 3), and e → node 5 (h = 17)."""
    L = [9, 4, 10, 14, 3]
    tasks = list(FIG7)
    comp = [FIG7[t][1] for t in tasks]
    prec = [FIG7[t][2] for t in tasks]
    cl, cp, h = scores(comp, np.array([[c] * 5 for c in comp]), L, 14, prec, 61, [FIG7[t][4] for t in tasks])
    assert cl.tolist() == [FIG7[t][3] for t in tasks]
    assert cp.tolist() == [p - 61 for p in prec]
    zero = [k for k, t in enumerate(tasks) if FIG7[t][0] == 0]
    r, j = choose(h[zero], [prec[k] for k in zero], L)
    assert (tasks[zero[r]], j + 1, h[zero[r], j]) == ("e", 5, 17)


def _check_schedule(tr, g, m, thesis):
    """Precedence respected (thesis model: a receiver may start when its message starts, so only after
    its sender started), one stretch at a time per node, every task run and finished once."""
    fin, start = tr.meta["finish"], tr.meta["start"]
    assert all(f is not None for f in fin)
    for i in range(g.n_tasks):
        for j, _ in g.succs[i]:
            assert start[j] >= (start[i] if thesis else fin[i]) - 1e-9
    for p in range(m):
        rows = sorted((s, e) for n, s, e in zip(tr.node, tr.t_start, tr.t_end) if n == p)
        assert all(rows[k][1] <= rows[k + 1][0] + 1e-9 for k in range(len(rows) - 1))
    assert set(tr.first) == set(range(g.n_tasks))


@settings(max_examples=examples(25), deadline=None)
@given(n=st.integers(5, 40), m=st.integers(1, 5), seed=st.integers(0, 10 ** 6),
       cost=st.sampled_from(["standard", "thesis"]), pre=st.booleans(), rule=st.sampled_from(["avg_active", "max_load"]),
       t2=st.floats(0, 50))
def test_pd_schedules_are_valid_and_deterministic(n, m, seed, cost, pre, rule, t2):
    g1 = layered(n, width=4, seed=seed)
    g2 = layered(max(2, n // 2), width=3, seed=seed + 1)
    b = {"preemptive": pre, "p_rule": rule}
    p = Platform([Node(f"n{k}", speed=1 + k % 2, availability=Step(at=7.0, level=0.5) if k == 0 else 1.0)
                  for k in range(m)])
    w = [(g1, 0.0), (g2, t2)]
    tr = simulate_graph_dynamic(p, w, make("pd", b), cost_model=cost, seed=seed)
    from dlbkit.families.graph.sim.dynamic import programs_of
    g, prog, arr = programs_of(w)
    _check_schedule(tr, g, m, cost == "thesis")
    assert all(tr.meta["start"][i] >= arr[prog[i]] for i in range(g.n_tasks))
    again = simulate_graph_dynamic(p, w, make("pd", b), cost_model=cost, seed=seed)
    assert (again.node, again.t_start, again.t_end) == (tr.node, tr.t_start, tr.t_end)


def test_pd_preempts_on_some_graphs_and_stays_valid():
    """A preemptive local scheduler preempts somewhere in a batch of runs, and the schedules stay valid."""
    total = 0
    for s in range(20):
        g = layered(30, width=5, seed=s, ccr=0.2)
        tr = simulate_graph_dynamic(3, [(g, 0.0), (layered(20, width=5, seed=s + 100), 3.0)], make("pd"), seed=s)
        total += tr.meta["preemptions"]
        assert all(e > s for s, e in zip(tr.t_start, tr.t_end))  # every load > 0: no empty stretch
    assert total > 0


def test_a_task_displaced_at_the_instant_it_started_neither_started_nor_was_preempted():
    """One machine of two cores at speed 0.5, no edges. At t = 0 pd places one task at a time: 0 on core
    0 (it starts), 2 on core 1, then 3 (precedence 10 > 6) on core 0, which displaces 0 before it did
    anything. Until 2026-11-24 that left an empty stretch (0, 0) of task 0, counted a preemption and gave
    task 0 the start 0. Times by hand: core 0 runs 3 for 5 / 0.5 = 10, then 0 for 6; core 1 runs 2
    (6), 4 (4), 1 (2), 5 (2), the equal precedences of 1 and 5 in table order."""
    p = Platform([Node("a", speed=0.5, cores=2)])
    g = TaskGraph(list(range(6)), loads=[3.0, 1.0, 3.0, 5.0, 2.0, 1.0])
    tr = simulate_graph_dynamic(p, g, make("pd"), seed=0)
    assert sorted(zip(tr.first, tr.node, tr.t_start, tr.t_end)) == [
        (0, 0, 10.0, 16.0), (1, 1, 10.0, 12.0), (2, 1, 0.0, 6.0), (3, 0, 0.0, 10.0), (4, 1, 6.0, 10.0),
        (5, 1, 12.0, 14.0)]
    assert tr.meta["start"] == [10.0, 10.0, 0.0, 0.0, 6.0, 12.0] and tr.meta["preemptions"] == 0


@pytest.mark.parametrize("workload, field", [
    ("graph", "workload"), ([], "workload"), ([(topcuoglu10(), -1.0)], "arrival"), ([(1, 2)], "workload[0]"),
])
def test_bad_input_is_one_config_error(workload, field):
    with pytest.raises(ConfigError) as e:
        simulate_graph_dynamic(2, workload, make("pd"))
    assert field in str(e.value) and "\n" not in str(e.value)


def test_static_mapper_with_staggered_programs_and_pd_on_the_static_engine_are_errors():
    with pytest.raises(ConfigError, match="online mapper"):
        simulate_graph_dynamic(2, [(topcuoglu10(), 0), (topcuoglu10(), 1)], make("heft"))
    with pytest.raises(ConfigError, match="dynamic"):
        simulate_graph(3, topcuoglu10(), make("pd"))
    with pytest.raises(ConfigError, match="cost_model"):
        simulate_graph_dynamic(2, topcuoglu10(), make("pd"), cost_model="x")


@pytest.mark.parametrize("w_comm, node", [(1.0, 0), (0.0, 1)])
def test_pd_weights_change_the_choice_by_hand(w_comm, node):
    """a (2) → b (2) with data 5, a placed and active on node 0 (L = 2, 0), b placeable; P = (2 + 2)/2
    = 2 (avg_active with the placeable load). Node 0: 2 + 2 > P, C_l = 2 − 4 = −2, C_c = 0; node 1:
    C_l = l = 2, C_c = −5. Unweighted h = −2 against −3: node 0 (the data stays); with w_comm = 0,
    −2 against 2: node 1 (the load term alone)."""
    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.model.view import GraphOnlineView

    g = TaskGraph(["a", "b"], loads=[2, 2], edges=[("a", "b", 5)])
    v = GraphOnlineView(2, costs_for(g, 2), priority=[3.0, 2.0], candidates=[1], gst={1}, placed=[0, -1],
                        load_level=[2.0, 0.0], active={0}, measured_speed=[1.0, 1.0])
    b = make("pd", {"w_comm": w_comm})
    b.start(v)
    assert b.place(v) == [(1, node)]
    cl, cp, h = scores([2.0], np.array([[2.0, 2.0]]), [2.0, 0.0], 2.0, [2.0], 3.0, np.array([[0.0, -5.0]]),
                       (1.0, w_comm, 1.0))
    assert cl.tolist() == [[-2.0, 2.0]] and h.tolist() == [[-2.0 - 1.0, 2.0 - 5.0 * w_comm - 1.0]]
