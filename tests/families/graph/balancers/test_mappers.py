"""Mapping balancers: the published examples worked exactly, and valid plans on any graph."""

import warnings

import numpy as np

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, TaskGraph, make, schedule
from dlbkit.balancers.registry import REGISTRY
from dlbkit.families.graph.balancers import decide
from dlbkit.families.graph.balancers.base import MappingBalancer, Plan
from dlbkit.families.graph.balancers.max_k1_sum import max_k1_sum, symmetric_comm
from dlbkit.families.graph.model.costs import costs_for
from dlbkit.families.graph.model.generate import (
    atmospheric,
    in_tree,
    layered,
    sinclair_equal5,
    sinclair_kmeans9,
    topcuoglu10,
)
from dlbkit.families.graph.model.view import GraphView
from dlbkit.families.graph.sim.static import evaluate, simulate_graph

from support.profiles import examples

MAPPERS = sorted(n for n, c in REGISTRY.items() if c.kind == "mapping")  # pd (graph-online): sim/test_graph_dynamic


def test_the_mapping_kind_has_its_balancers():
    assert MAPPERS == ["annealing", "cpop", "elastic-force", "heft", "hlf", "linear-clustering", "max-k1-sum", "metis",
                       "milp", "peft",
                       "random-map",
                       "round-robin", "tabu"]


def test_heft_on_topcuoglu_2002_fig2_gives_the_papers_schedule():
    """Topcuoglu, Hariri & Wu 2002, Fig. 4(a): makespan 80; P3 runs n1 0–9, n3 9–28, n5 28–38, n7 38–49;
    P2 runs n4 18–26, n6 26–42, n9 56–68, n10 73–80; P1 runs n2 27–40, n8 57–62."""
    s = schedule(topcuoglu10(), 3, "heft")
    assert s.makespan == 80
    assert s.assignment == {1: 2, 2: 0, 3: 2, 4: 1, 5: 2, 6: 1, 7: 2, 8: 0, 9: 1, 10: 1}
    assert s.start == {1: 0, 2: 27, 3: 9, 4: 18, 5: 28, 6: 26, 7: 38, 8: 57, 9: 56, 10: 73}
    assert s.trace.meta["plan_info"]["estimate"] == 80


def test_cpop_on_topcuoglu_2002_fig2_gives_86_with_the_critical_path_on_one_processor():
    s = schedule(topcuoglu10(), 3, "cpop")
    info = s.trace.meta["plan_info"]
    assert s.makespan == 86 and info["critical_path"] == [1, 2, 9, 10] and info["cp_processor"] == 1
    assert {s.assignment[t] for t in (1, 2, 9, 10)} == {1}


def test_heft_without_insertion_is_never_better_here():
    assert schedule(topcuoglu10(), 3, "heft", params={"insertion": False}).makespan >= 80


def test_max_k1_sum_reproduces_the_worked_example_of_3_5_2():
    """002 §3.5.2 / note App. B: clusters {a,d,i}, {b,f,g}, {c,e,h}; S_a = 41/3, S_i = 35/3, S_f = 25/3."""
    g = sinclair_kmeans9()
    clusters, rounds = max_k1_sum(symmetric_comm(g, 9), list(g.loads), 3, 3)
    assert [sorted(g.ids[t] for t in c) for c in clusters] == [["a", "d", "i"], ["b", "f", "g"], ["c", "e", "h"]]
    s = {g.ids[j]: v for j, (v, _) in rounds[0].items()}
    assert s["a"] == pytest.approx(41 / 3, abs=1e-12) and s["i"] == pytest.approx(35 / 3, abs=1e-12)
    assert rounds[1][5][0] == pytest.approx(25 / 3, abs=1e-12)
    tr = simulate_graph(3, g, make("max-k1-sum"))
    assert tr.meta["assignment"] == [0, 1, 2, 0, 2, 1, 1, 2, 0]


def test_max_k1_sum_equal_variant_reproduces_3_4_1_with_a_null_task():
    tr = simulate_graph(3, sinclair_equal5(), make("max-k1-sum", {"variant": "equal"}))
    assert tr.meta["assignment"] == [0, 2, 1, 0, 1]
    assert tr.meta["plan_info"]["clusters"] == [["a", "d"], ["c", "e"], ["b", None]]


def test_max_k1_sum_capacity_pads_with_null_tasks_and_refuses_too_small():
    tr = simulate_graph(3, sinclair_kmeans9(), make("max-k1-sum", {"capacity": 4}))
    assert tr.meta["plan_info"]["null_tasks"] == 3
    with pytest.raises(ConfigError, match=r"parameter 'capacity' of max-k1-sum must be at least n/m"):
        simulate_graph(3, sinclair_kmeans9(), make("max-k1-sum", {"capacity": 2}))


def test_elastic_force_swaps_the_chatty_pairs_together():
    """Blocks {a,b} | {c,d}; a–c and b–d talk 5, a–b 1: the pre-pass swaps c with b, leaving a cut of 1."""
    g = TaskGraph(list("abcd"), loads=[1] * 4, edges=[("a", "c", 5), ("b", "d", 5), ("a", "b", 1)])
    tr = simulate_graph(2, g, make("elastic-force"))
    assert tr.meta["assignment"] == [0, 1, 0, 1] and tr.meta["plan_info"]["cut"] == 1


def test_elastic_force_lowers_the_cut_of_the_sinclair_example():
    g = sinclair_kmeans9()
    info = simulate_graph(3, g, make("elastic-force")).meta["plan_info"]
    blocks = sum(d for s, t, d in g.edges if g.index[s] // 3 != g.index[t] // 3)
    assert info["cut"] < blocks and info["swaps"] >= 1


def test_round_robin_on_the_in_tree_gives_the_worst_case_makespan():
    """002 §10.5 (R5): m = 3, k = 4, l = c = 1 → C^PD = 32 under the thesis model."""
    assert simulate_graph(3, in_tree(3, 4), make("round-robin"), cost_model="thesis").makespan == 32


def test_random_map_is_seeded():
    a = simulate_graph(4, atmospheric(), make("random-map"), seed=5).meta["assignment"]
    assert a == simulate_graph(4, atmospheric(), make("random-map"), seed=5).meta["assignment"]
    assert a != simulate_graph(4, atmospheric(), make("random-map"), seed=6).meta["assignment"]


def test_decide_plan_refuses_a_bad_answer():
    class Bad(MappingBalancer):
        name = ""

        def __init__(self, *, plan=None):
            self.plan = plan

        def map(self, view):
            return self.plan

    view = GraphView(3, costs_for(topcuoglu10(), 3))
    for plan, text in ((Plan((0,) * 9), "one processor per task"), (Plan((3,) * 10), r"a processor in \[0, 2\]"),
                       (Plan((0,) * 10, tuple(range(9, -1, -1))), "a topological order"),
                       ([0] * 10, "a Plan")):
        with pytest.raises(ConfigError, match=text):
            decide.plan(Bad(plan=plan), view)
    rec = []
    decide.plan(make("round-robin"), view, rec)
    assert rec[0].hook == "map" and rec[0].answer.assignment[:4] == (0, 1, 2, 0)


@st.composite
def cases(draw):
    n = draw(st.integers(1, 14))
    m = draw(st.integers(1, 4))
    table = draw(st.booleans())
    seed = draw(st.integers(0, 10 ** 6))
    rng = np.random.default_rng(seed)
    edges = [(i, j, float(rng.integers(0, 10))) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3]
    if table:
        return TaskGraph(list(range(n)), costs=rng.integers(1, 20, size=(n, m)).tolist(), edges=edges), m
    return TaskGraph(list(range(n)), loads=rng.integers(0, 10, size=n).tolist(), edges=edges), m


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.sampled_from(["standard", "thesis"]))
def test_every_mapper_gives_a_valid_plan_the_evaluator_times(case, model):
    g, m = case
    for name in MAPPERS:
        if name == "milp":  # its own tests below (a solve per example is too slow for a property)
            continue
        b = make(name, {"moves": 30, "patience": 2} if name == "annealing" else
                 {"perturbations": 60} if name == "tabu" else None)
        tr = simulate_graph(m, g, b, cost_model=model)
        a = tr.meta["assignment"]
        assert len(a) == g.n_tasks and all(0 <= x < m for x in a)
        c = costs_for(g, m, model)
        for i in range(g.n_tasks):  # the trace is the evaluator's schedule: precedence holds
            for j, _ in g.succs[i]:
                assert tr.t_start[j] >= tr.t_start[i] - 1e-9
        if model == "standard" and name in ("heft", "cpop", "hlf", "peft"):
            # the evaluator runs the plan's order as early as possible: never later than the mapper's estimate
            assert tr.makespan <= tr.meta["plan_info"]["estimate"] + 1e-9
        assert max(evaluate(c, a, tr.meta["order"])[2]) == tr.makespan


def test_heft_maps_a_1000_task_graph_on_16_heterogeneous_nodes():
    g = layered(1000, width=20, density=0.1, nodes=16, seed=2)
    s = schedule(g, 16, "heft")
    assert s.makespan >= s.metrics["lower_bound"] > 0


def test_a_zero_length_task_keeps_the_timeline_sorted():
    """Regression (found by the property above): a 0-length task inserted where another starts."""
    from dlbkit.families.graph.balancers._common import Timeline
    t = Timeline()
    for s, e in ((0, 9), (9, 12), (12, 18), (12, 12)):
        t.add(s, e)
    assert t.ends == sorted(t.ends) and t.earliest(12, 5) == 18
    g = TaskGraph(list(range(7)), loads=[3, 9, 6, 0, 9, 5, 6],
                  edges=[(0, 3, 8), (0, 4, 7), (0, 6, 9), (1, 4, 4), (1, 5, 8), (2, 6, 9), (3, 5, 8)])
    assert schedule(g, 1, "heft").makespan == 38 == sum(g.loads)


def _brute_force_optimum(g, m):
    """The best non-preemptive schedule: every assignment × every topological order, each timed ASAP."""
    import itertools

    from dlbkit.families.graph.model.costs import costs_for
    from dlbkit.families.graph.sim.static import Evaluator
    ev = Evaluator(costs_for(g, m))
    orders = [p for p in itertools.permutations(range(g.n_tasks))
              if all(p.index(i) < p.index(j) for i in range(g.n_tasks) for j, _ in g.succs[i])]
    return min(ev.makespan(a, o) for a in itertools.product(range(m), repeat=g.n_tasks) for o in orders)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_exact_milp_finds_the_optimum_of_small_graphs(seed):
    rng = np.random.default_rng(seed)
    n = 5
    edges = [(i, j, float(rng.integers(1, 6))) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.4]
    g = TaskGraph(list(range(n)), costs=rng.integers(1, 9, size=(n, 2)).tolist(), edges=edges)
    s = schedule(g, 2, "milp", params={"time_limit": 20.0})
    info = s.trace.meta["plan_info"]
    assert info["optimal"] and s.makespan == pytest.approx(_brute_force_optimum(g, 2))
    assert s.makespan <= info["estimate"] + 1e-6


def test_the_exact_milp_beats_heft_on_topcuoglu_2002():
    s = schedule(topcuoglu10(), 3, "milp", params={"time_limit": 30.0})
    assert s.trace.meta["plan_info"]["optimal"] and s.makespan == 73 < 80


def test_a_node_limited_milp_stops_where_told_and_gives_the_same_plan_on_every_run():
    """On this 10-task graph HiGHS needs about 200 branch-and-bound nodes to prove the exact model's
    optimum; stopped after one, it returns the root's incumbent, worse, and says which limit stopped
    it. A node limit is not a clock: the plan is the same whatever the time limit around it."""
    g = layered(10, width=3, density=0.4, seed=3)
    full = schedule(g, 3, "milp", params={"time_limit": 60.0})
    assert full.trace.meta["plan_info"]["optimal"] and full.trace.meta["plan_info"]["stopped_by"] is None
    runs = [schedule(g, 3, "milp", params={"node_limit": 1, "time_limit": t}) for t in (30.0, 60.0)]
    info = runs[0].trace.meta["plan_info"]
    assert info["stopped_by"] == "node_limit" and info["nodes"] == 1 and not info["optimal"]
    assert info["nodes"] < full.trace.meta["plan_info"]["nodes"]
    assert runs[0].makespan > full.makespan + 1e-6
    assert runs[0].trace.meta["assignment"] == runs[1].trace.meta["assignment"]
    assert runs[0].makespan == runs[1].makespan


@pytest.mark.parametrize("bad", [0, 2**31, 1.5, True])
def test_a_node_limit_outside_highs_range_is_refused_naming_it(bad):
    with pytest.raises(ConfigError, match=r"node_limit.*\[1, 2147483647\]"):
        make("milp", {"node_limit": bad})


def test_a_stopped_milp_is_never_worse_than_heft_and_says_which_plan_it_returns():
    """Stopped after one branch-and-bound node on a 40-task graph, HiGHS's incumbent (217.2) is far
    worse than HEFT's list schedule (151.5): milp returns HEFT's plan, warns, and measures its gap from
    HEFT's makespan to HiGHS's dual bound (it returned 217.2 without a word, issue 36). A node limit
    is not a clock, so this is the same on every machine."""
    g = layered(40, seed=1)
    heft = schedule(g, 3, "heft")
    with pytest.warns(dlbkit.DlbkitWarning, match=r"milp: HiGHS stopped at its node_limit \(1\) with its best "
                      r"plan's makespan 217\.216; HEFT's list schedule \(151\.513\) is better and is returned"):
        s = schedule(g, 3, "milp", params={"node_limit": 1})
    info = s.trace.meta["plan_info"]
    assert s.makespan == heft.makespan and s.trace.meta["assignment"] == heft.trace.meta["assignment"]
    assert info["incumbent"] == "heft" and info["heft_makespan"] == heft.makespan and not info["optimal"]
    assert info["milp_makespan"] == pytest.approx(217.216, abs=5e-4) and info["milp_makespan"] > heft.makespan
    assert info["gap"] == pytest.approx((heft.makespan - info["dual_bound"]) / heft.makespan, rel=1e-12)


def test_a_stopped_milp_that_beats_heft_keeps_its_own_plan_without_a_warning():
    """On Topcuoglu's graph one node already gives 76 (HEFT: 80): the MILP's plan, compared and kept."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", dlbkit.DlbkitWarning)
        s = schedule(topcuoglu10(), 3, "milp", params={"node_limit": 1})
    info = s.trace.meta["plan_info"]
    assert s.makespan == info["milp_makespan"] == 76 < info["heft_makespan"] == 80
    assert info["incumbent"] == "milp" and info["stopped_by"] == "node_limit"


def test_a_proven_milp_is_not_compared_with_heft():
    info = schedule(topcuoglu10(), 3, "milp", params={"time_limit": 30.0}).trace.meta["plan_info"]
    assert info["optimal"] and "incumbent" not in info and "heft_makespan" not in info


def test_the_relaxed_milp_returns_at_most_m_clusters_and_reports_its_gap():
    s = schedule(in_tree(2, 3), 2, "milp", params={"model": "relaxed", "time_limit": 5.0}, cost_model="thesis")
    info = s.trace.meta["plan_info"]
    assert info["clusters"] <= 2 and info["bcoeff"] == 4.0 and "gap" in info


def test_annealing_is_seeded_and_finds_the_two_node_optimum_of_a_small_graph():
    g = in_tree(2, 3, l=[1, 2, 3], c=[1, 2])
    b = make("annealing", {"moves": 200})
    a = simulate_graph(2, g, b, cost_model="thesis", seed=1)
    assert a.meta["assignment"] == simulate_graph(2, g, b, cost_model="thesis", seed=1).meta["assignment"]
    from itertools import product

    from dlbkit.families.graph.model.evaluate import Evaluator
    ev = Evaluator(costs_for(g, 2, "thesis"))
    best = min(ev.makespan(list(x)) for x in product(range(2), repeat=g.n_tasks))
    assert a.makespan == best == a.meta["plan_info"]["estimate"]


def test_peft_optimistic_cost_table_by_hand_on_topcuoglu_2002():
    """Exit task 10: OCT 0. Task 7 (→ 10, c = 17): min over p_w of w(10, p_w) + 17·[p_w ≠ p_k] =
    (21, 7, 16) for p_k = 1, 2, 3 (staying beats moving); task 8 (c = 11) likewise (18, 7, 16)."""
    from dlbkit.families.graph.balancers.peft import optimistic_cost_table
    oct_ = optimistic_cost_table(costs_for(topcuoglu10(), 3))
    assert oct_[9] == [0, 0, 0] and oct_[6] == [21, 7, 16] and oct_[7] == [18, 7, 16]
    assert schedule(topcuoglu10(), 3, "peft").makespan <= 86


def test_tabu_finds_the_sa_row_of_the_atmospheric_graph():
    """002 Table 4's SA row under the thesis model: 59, 50, 38, 37, 37, 37, 37 (seed 0, defaults)."""
    got = [simulate_graph(m, atmospheric(), make("tabu"), cost_model="thesis", seed=0).makespan for m in range(2, 9)]
    assert got == [59, 50, 38, 37, 37, 37, 37]


def _two_chains(k=4, data=5.0):
    """Two disconnected chains a0 → … → a(k−1) and b0 → … → b(k−1), unit loads, *data* on every edge."""
    ids = [f"a{i}" for i in range(k)] + [f"b{i}" for i in range(k)]
    edges = [(f"{c}{i}", f"{c}{i + 1}", data) for c in "ab" for i in range(k - 1)]
    return TaskGraph(ids, loads=[1] * (2 * k), edges=edges)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_metis_puts_each_of_two_disconnected_chains_on_one_node(seed):
    """By hand: a balanced cut of two equal chains into 2 parts costs nothing only when each chain is one
    part, so no edge crosses; each node then runs its chain back to back: makespan = 4, no message."""
    g = _two_chains()
    tr = simulate_graph(2, g, make("metis"), seed=seed)
    a = tr.meta["assignment"]
    assert len(set(a[:4])) == 1 and len(set(a[4:])) == 1 and a[0] != a[4]
    assert tr.meta["plan_info"]["cut_data"] == 0 and tr.messages == 0 and tr.makespan == 4


def test_metis_is_seeded():
    g = layered(120, width=8, density=0.2, ccr=1.0, seed=3)
    runs = [simulate_graph(4, g, make("metis"), seed=s).meta for s in (7, 7, 8)]
    assert runs[0]["assignment"] == runs[1]["assignment"]
    assert runs[0]["plan_info"]["metis_seed"] == runs[1]["plan_info"]["metis_seed"] != runs[2]["plan_info"]["metis_seed"]


def test_metis_gives_a_faster_node_a_proportionally_larger_part():
    """Speeds 1 and 3: target shares 1/4 and 3/4 of 40 independent unit tasks (METIS's tolerance is a few %)."""
    from dlbkit import Network, Node, Platform
    p = Platform([Node("slow", speed=1.0), Node("fast", speed=3.0)], Network(latency=0.0, bandwidth=1.0))
    g = TaskGraph(list(range(40)), loads=[1] * 40)
    tr = simulate_graph(p, g, make("metis"))
    assert tr.meta["plan_info"]["targets"] == pytest.approx([0.25, 0.75])
    assert 9 <= tr.meta["assignment"].count(0) <= 11


def test_metis_capacity_of_a_cost_table_is_the_processors_throughput():
    from dlbkit.families.graph.balancers.metis import capacities
    c = costs_for(TaskGraph(["x", "y"], costs=[[2, 1], [4, 2]]), 2)
    assert capacities(c, [1.5, 3.0]) == pytest.approx([1 / 3, 2 / 3])


def test_linear_clustering_by_hand():
    """a(1) → b(2) data 1, a → c(5), b → d(1), c → d, 2 identical nodes (mean transfer = data).
    Longest paths from each task: d 1; b 2 + 1 = 3; c 5 + 1 = 6; a 1 + max(1 + 3, 0 + 6) = 7: the
    first cluster is a, c, d; b is left alone. Modulo: a, c, d on 0, b on 1; by load (LPT) the same."""
    from dlbkit.families.graph.balancers.linear_clustering import linear_clusters
    g = TaskGraph(["a", "b", "c", "d"], loads=[1, 2, 5, 1],
                  edges=[("a", "b", 1), ("a", "c", 0), ("b", "d", 0), ("c", "d", 0)])
    c = costs_for(g, 2)
    assert linear_clusters(c) == [[0, 2, 3], [1]]
    for alloc in ("modulo", "load"):
        plan = make("linear-clustering", {"allocation": alloc}).map(GraphView(2, c))
        assert plan.assignment == (0, 1, 0, 0) and plan.info == {"clusters": 2}
    # 3 nodes, modulo: cluster k on k mod 3; the atmospheric graph's first chain is its critical path
    a = atmospheric()
    cl = linear_clusters(costs_for(a, 3, "thesis"))
    assert [a.ids[i] for i in cl[0]] == [1, 2, 10, 14, 18] and sorted(i for x in cl for i in x) == list(range(18))


def test_hlf_by_hand_its_level_ignores_communication():
    """r (1) → a (1), r → b (3), a → c (1) with data 10; two unit nodes. Static levels without
    communication: r 4, b 3, a 2, c 1, so b goes before a (HEFT's rank_u, which counts the 10, puts
    a first: 12 against 3). r n0 [0, 1]; b: starts at 1 on either, n0 [1, 4]; a: n1 at 1 (n0 at 4)
    [1, 2]; c: n1 at 2 (n0: 2 + 10 = 12) [2, 3]. Order r, b, a, c; makespan 4."""
    g = TaskGraph(["r", "a", "b", "c"], loads=[1, 1, 3, 1], edges=[("r", "a", 0), ("r", "b", 0), ("a", "c", 10)])
    s = schedule(g, 2, "hlf")
    assert s.trace.meta["assignment"] == [0, 1, 0, 1] and s.trace.meta["order"] == [0, 2, 1, 3]
    assert s.start == {"r": 0.0, "a": 1.0, "b": 1.0, "c": 2.0} and s.makespan == 4.0
    assert schedule(g, 2, "heft").trace.meta["order"][1] == 1  # HEFT: a before b


def test_metis_silencing_keeps_what_c_code_printed_before_it(tmp_path):
    """C's stdout buffer was flushed only after descriptor 1 pointed to the null device: what other
    C code had printed and not yet written was lost with METIS's notes. A process of its own, with
    standard output a file and C's stdout buffered (PYTHONUNBUFFERED, set in some environments, makes
    it unbuffered, and nothing would wait in the buffer)."""
    import os
    import subprocess
    import sys

    code = ("import ctypes\n"
            "from dlbkit.families.graph.balancers.metis import _c_stdout_silenced\n"
            "libc = ctypes.CDLL(None)\n"
            "libc.printf(b'before\\n')\n"
            "with _c_stdout_silenced():\n"
            "    libc.printf(b'metis note\\n')\n"
            "libc.printf(b'after\\n')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    out = tmp_path / "out.txt"
    with out.open("wb") as f:
        subprocess.run([sys.executable, "-c", code], stdout=f, env=env, check=True, timeout=60)
    assert out.read_bytes() == b"before\nafter\n"


def test_metis_silencing_from_two_threads_leaves_stdout_where_it_was():
    """Two threads at once each saved descriptor 1, the second saving the null device, and restored
    in the other order: standard output stayed on the null device."""
    import os
    import threading

    from dlbkit.families.graph.balancers.metis import _c_stdout_silenced

    before = os.fstat(1)
    a_inside, b_inside, a_done = threading.Event(), threading.Event(), threading.Event()

    def a():  # enters first and leaves while b is still inside, unless a lock keeps b out until then
        with _c_stdout_silenced():
            a_inside.set()
            b_inside.wait(0.5)
        a_done.set()

    def b():
        a_inside.wait(5)
        with _c_stdout_silenced():
            b_inside.set()
            a_done.wait(5)

    saved = os.dup(1)
    try:
        threads = [threading.Thread(target=a), threading.Thread(target=b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        after = os.fstat(1)
    finally:
        os.dup2(saved, 1)  # the rest of the session writes where it did, whatever happened here
        os.close(saved)
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino)
