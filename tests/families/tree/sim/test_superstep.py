"""The synchronous T3D superstep simulator (001 §4): cost model, hand-worked runs, invariants."""

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError
from dlbkit.families.tree.balancers.base import MigrationBalancer
from dlbkit.balancers.base import Taxonomy, Transfer
from dlbkit.families.tree.balancers import GDEM, Loadserver, PhaseAdaptive
from dlbkit.families.tree.model.workload import FlatTasks, TaskTree
from dlbkit.families.tree.sim.superstep import simulate_superstep, topology_graph
from dlbkit.families.tree.sim.t3d import T3D
from dlbkit.families.tree.model.metrics import ita_best, ita_speed, ita_time, speed_from_time_ita, time_from_speed_ita

from support.profiles import examples

T = T3D()


# --- the T3D cost model (001 §3.4–3.7) -------------------------------------------------------------------
def test_point_to_point_small_and_large_models_cut_at_32_integers():
    assert (T.send(1), T.recv(1), T.recvmin(1), T.pingpong(1)) == (73.0, 75.0, 53.0, 208.0)
    assert (T.send(32), T.recv(32), T.recvmin(32)) == (166.0, 230.0, 146.0)
    assert T.send(33) == pytest.approx(100 + 0.09 * 33) and T.recv(33) == pytest.approx(200 + 0.5 * 33)
    assert T.recvmin(33) == pytest.approx(100 + 0.4 * 33)
    assert T.send(np.array([3, 33])).tolist() == pytest.approx([79.0, 102.97])
    assert T.receive(10.0, 0.0, 1) == 75.0 and T.receive(100.0, 0.0, 1) == 153.0


def test_allreduce_is_the_recalibrated_model_with_the_natural_log():
    assert T.allreduce(128) == pytest.approx(54.8 + 0.42 * 128 + 93.3 * math.log(128))
    assert round(30 * T.allreduce(128) * 1e-6, 4) == 0.0168  # 001 Table 5.4
    assert round(463 * T.allreduce(4) * 1e-6, 4) == 0.0860  # Table 5.10
    assert T.allreduce(1) == 0.0
    assert T3D(allreduce_model="howell").allreduce(4) == pytest.approx(300 + 80 + 0.9 * math.log(4))


def test_network_speed_scales_only_the_data_terms():
    fast = T3D(speed=2.0)
    assert fast.send(10) == 70 + 3 * 10 / 2 and fast.pingpong(1) == 204.0
    assert fast.allreduce(128) == pytest.approx(54.8 + 0.42 * 128 + 93.3 * math.log(128) / 2)
    assert [round(24 * T3D(speed=s).allreduce(128) * 1e-6, 4) for s in (0.25, 0.5, 1, 2)] == \
        [0.0461, 0.0243, 0.0135, 0.0080]  # Table 5.19


def test_lis_contention_models():
    rt, sv = 208.0, 0.775
    assert T3D(contention="optimistic").lis_wait(3, 5, True) == rt + sv
    assert T3D(contention="pessimistic").lis_wait(3, 5, False) == rt + 5 * sv
    assert T.lis_wait(3, 5, True) == rt + 3 * sv and T.lis_wait(3, 5, False) == rt + sv


def test_node_cost():
    assert T.node(100, 2) == pytest.approx(7.433 + 17.24 + 2 * 17.792)


@pytest.mark.parametrize("kw, field", [({"speed": 0}, "speed"), ({"contention": "heavy"}, "contention"),
                                       ({"allreduce_model": "x"}, "allreduce_model")])
def test_bad_cost_settings(kw, field):
    with pytest.raises(ConfigError, match=field):
        T3D(**kw)


# --- a run worked by hand ---------------------------------------------------------------------------------
def test_two_processors_three_nodes_by_hand():
    """Root on P0 expands (2 children); GDEM λ = 1/2 moves one child to P1; each runs one leaf."""
    g = 100.0
    c0 = T.t_c + g * T.t_fl + 2 * T.t_e  # the root
    leaf = T.t_c + g * T.t_fl
    # iteration 1: info exchange a = 0, b = 1 (001 §3.9 item 6), then a 3-integer task message
    tb = max(0 + 53, c0 + 75)
    ta = max(c0 + 73 + 53, tb + 75)
    tb += 73
    st_ = ta + 0.9
    t0 = st_ + 79
    t1 = max(tb + 59, st_ + 85) + 4.015
    lb1 = ((t0 - c0) + t1) / 2
    idle1 = (max(t0, t1) - t0 + max(t0, t1) - t1) / 2
    # iteration 2: one leaf each, the exchange finds nothing to move
    tb = max(leaf + 53, leaf + 75)
    ta = max(leaf + 73 + 53, tb + 75)
    tb += 73
    lb2 = (ta - leaf + tb - leaf) / 2
    idle2 = (ta - tb) / 2
    r = simulate_superstep(TaskTree("balanced", depth=2, grain=g, order="bf"), GDEM(), p=2)
    assert (r.iterations, r.nodes, r.messages, r.tasks_moved, r.transfers) == (2, 3, 5, 1, 1)
    assert r.compute == pytest.approx((c0 + 2 * leaf) / 2 * 1e-6, rel=1e-12)
    assert r.lb == pytest.approx((lb1 + lb2) * 1e-6, rel=1e-12)
    assert r.idle == pytest.approx((idle1 + idle2) * 1e-6, rel=1e-12)
    assert r.synch == pytest.approx(2 * T.allreduce(2) * 1e-6, rel=1e-12)
    assert r.total == pytest.approx(r.compute + r.lb + r.idle + r.synch, rel=1e-15)
    assert r.n_series.tolist() == [2, 0] and r.queue_series.tolist() == [[1, 1], [0, 0]]


def test_no_balancing_runs_everything_on_processor_zero_in_one_iteration():
    tree = TaskTree("balanced", depth=10, grain=100)
    work = (1023 * T.node(100) + 511 * 2 * T.t_e) * 1e-6
    r = simulate_superstep(tree, "none", p=4)
    assert (r.iterations, r.nodes, r.lb, r.messages) == (1, 1023, 0.0, 0)
    assert r.compute == pytest.approx(work / 4, rel=1e-12)
    assert r.idle == pytest.approx(work * 3 / 4, rel=1e-12)
    assert r.executed.tolist() == [1023, 0, 0, 0]


def test_table_4_7_gdem_iterations_exact_for_p_8_to_512():
    tree = TaskTree("balanced", depth=16, grain=100, order="bf")
    got = [simulate_superstep(tree, GDEM(interval=1), p=p).iterations for p in (8, 16, 32, 64, 128, 256, 512)]
    assert got == [8194, 4099, 2053, 1031, 522, 269, 148]


def test_table_4_8_ldsv_iterations_exact_for_p_16_to_512():
    tree = TaskTree("balanced", depth=16, grain=100, order="bf")
    got = [simulate_superstep(tree, Loadserver(interval=1), p=p).iterations for p in (16, 32, 64, 128, 256, 512)]
    assert got == [4372, 2119, 1046, 523, 264, 137]


def test_loadserver_costs_only_workers_and_its_barrier_spans_them():
    r = simulate_superstep(TaskTree("balanced", depth=16, grain=100), Loadserver(interval=128), p=32)
    assert r.workers == 31 and r.executed[31] == 0
    assert (r.iterations, round(r.compute, 4), round(r.synch, 4)) == (21, 0.0898, 0.0082)  # 001 Table 5.27


def test_balanced_tree_gdem_rows_of_table_5_26():
    tree = TaskTree("balanced", depth=16, grain=100)
    na = simulate_superstep(tree, GDEM(interval=32), p=128)
    t1 = simulate_superstep(tree, PhaseAdaptive(intervals=(1, 32, math.inf), t2=False), p=128)
    assert (na.iterations, t1.iterations) == (32, 31)
    assert na.total == pytest.approx(0.0974, rel=0.02) and t1.total == pytest.approx(0.0782, rel=0.02)
    assert ita_speed(t1.speed, na.speed) == pytest.approx(24.48, abs=1.0)


def test_phase_three_runs_every_local_task_in_one_final_iteration():
    tree = TaskTree("balanced", depth=16, grain=100)
    r = simulate_superstep(tree, PhaseAdaptive(intervals=(32, 32, math.inf), t1=False), p=128)
    assert r.iterations == 24 and r.nodes == 65535  # t2 fires early under DF (001 Table 5.28, −38.95%)
    assert r.phase_series[-1] == 3 and r.interval_series[-1] == math.inf and r.n_series[-1] == 0
    assert r.phase_series.count(3) == 1


# --- invariants ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Recording(TaskTree):
    """A task tree that records every task the engine expands."""

    seen: list = field(default_factory=list, compare=False, hash=False, repr=False)

    def children(self, task):
        self.seen.append(task)
        return super().children(task)


def every_task(tree):
    out, stack = [], list(tree.roots())
    while stack:
        t = stack.pop()
        out.append(t)
        stack.extend(TaskTree.children(tree, t))
    return out


BALANCERS = {"none": lambda: "none", "gdem": lambda: GDEM(interval=3), "ldsv": lambda: Loadserver(interval=2),
             "adaptive": lambda: PhaseAdaptive(balancers=("ldsv", "gdem", "none"), intervals=(1, 4, math.inf)),
             "adaptive-work": lambda: PhaseAdaptive(intervals=(1, 2, math.inf), detector="work")}


@settings(max_examples=examples(60), deadline=None)
@given(kind=st.sampled_from(["balanced", "random", "imbalance"]), depth=st.integers(1, 9), seed=st.integers(0, 50),
       order=st.sampled_from(["df", "bf"]), p=st.integers(2, 12), name=st.sampled_from(sorted(BALANCERS)),
       topology=st.sampled_from(["torus", "mesh", "ring", "chain", "complete"]))
def test_every_task_runs_exactly_once_whatever_the_balancer(kind, depth, seed, order, p, name, topology):
    if topology == "ring" and p < 3:
        topology = "chain"
    tree = Recording(kind, depth=depth, seed=seed, imbalance=0.3, slope=0.05, order=order)
    r = simulate_superstep(tree, BALANCERS[name](), p=p, topology=topology, seed=seed)
    assert Counter(tree.seen) == Counter(every_task(tree))
    assert r.nodes == len(tree.seen) == int(r.executed.sum())
    assert r.n_series[-1] == 0 and r.iterations == len(r.n_series)
    assert r.total == pytest.approx(r.compute + r.lb + r.idle + r.synch)


def test_same_seed_same_result_and_the_seed_reaches_the_balancer():
    tree = TaskTree("random", depth=12, seed=3, slope=0.03)
    a, b = (simulate_superstep(tree, Loadserver(interval=4), p=16, seed=9) for _ in range(2))
    assert (a.total, a.iterations, a.queue_series.tolist()) == (b.total, b.iterations, b.queue_series.tolist())
    others = {simulate_superstep(tree, Loadserver(interval=4), p=16, seed=s).total for s in range(10, 16)}
    assert len(others | {a.total}) > 1


class Probe(MigrationBalancer):
    """A test rule: periodic, moves one task from the fullest to the emptiest, records view.work."""

    name = "probe"
    source = "test"
    taxonomy = Taxonomy("periodic", "central", "global", "one", "oldest")
    periodic = True
    reads_work = True
    observes = True  # it overrides observe(): engines call it only when declared

    def __init__(self, *, interval: float = 2):
        self.interval = interval

    def start(self, view, rng=None):
        super().start(view, rng)
        self.work_ = []

    def observe(self, view):
        self.work_.append(sum(view.work))

    def balance(self, view):
        q = view.queue
        hi, lo = int(np.argmax(q)), int(np.argmin(q))
        return [Transfer(hi, lo, 1)] if q[hi] - q[lo] > 1 else []


def test_a_plain_balance_rule_runs_and_the_engine_fills_the_work_estimate():
    """On a balanced tree the estimate is exact: Σ work at a barrier is the nodes not yet run."""
    tree = TaskTree("balanced", depth=10, grain=10)
    b = Probe(interval=2)
    r = simulate_superstep(tree, b, p=4)
    assert r.nodes == 1023 and r.tasks_moved == r.transfers == r.messages > 0
    assert b.work_[0] == 1023 - 2 and b.work_[-1] == 0  # iteration 1: P0 alone runs 2 nodes
    steps = -np.diff([1023.0, *b.work_])
    assert steps.min() >= 1 and steps.max() <= 4 * 2  # at most p · interval nodes per iteration
    assert len(b.work_) == r.iterations


def test_flat_tasks_with_their_own_costs():
    r = simulate_superstep(FlatTasks([1000.0, 10.0, 10.0, 10.0]), GDEM(interval=1), p=2)
    assert r.nodes == 4 and r.tasks_moved >= 1
    assert r.compute == pytest.approx((4 * T.t_c + 1030 * T.t_fl) / 2 * 1e-6, rel=1e-12)


@pytest.mark.parametrize("kw, field", [({"p": 0}, "p"), ({"p": 4, "topology": "donut"}, "topology"),
                                       ({"p": 6, "topology": "hypercube"}, "topology"),
                                       ({"p": 4, "balancer": 3}, "balancer")])
def test_bad_input_names_the_field(kw, field):
    kw.setdefault("balancer", "gdem")
    with pytest.raises(ConfigError, match=field):
        simulate_superstep(TaskTree(depth=3), **kw)


def test_topologies_follow_dims_create():
    assert topology_graph("torus", 128).graph["dims"] == (16, 8)
    assert topology_graph("torus", 2).number_of_edges() == 1
    assert topology_graph("hypercube", 8).graph["dims"] == (2, 2, 2)


# --- ITA (001 §5.2.1) ----------------------------------------------------------------------------------------
def test_ita_forms():
    assert ita_time(0.0974, 0.0782) == pytest.approx(19.712, abs=1e-3)
    assert ita_speed(837819.9228, 673040.4376) == pytest.approx(24.48, abs=0.01)  # Table 5.26
    assert speed_from_time_ita(ita_time(2.0, 1.6)) == pytest.approx(ita_speed(1 / 1.6, 1 / 2.0))
    assert time_from_speed_ita(speed_from_time_ita(19.7)) == pytest.approx(19.7)
    assert ita_best(1.0, [1.25, 2.0]) == pytest.approx(20.0)
    with pytest.raises(ConfigError, match="t_na"):
        ita_time(0, 1.0)


# --- receiver- and sender-initiated rules in supersteps ---------------------------------------------
def test_a_synchronous_steal_round_by_hand():
    """p = 2, four flat tasks on processor 0, i = 1. Iteration 1: 0 runs one (3 wait); 1 is empty,
    asks 0, gets ⌊3/2⌋ = 1. Iteration 2: both run one; 1 asks again, 0 holds 1 and keeps it (an empty
    reply). Iteration 3: 0 runs the last; both are empty and ask each other: two requests, two empty
    replies (the LB phase runs before the barrier finds nothing left). Three iterations, one move."""
    from dlbkit.families.tree.model.workload import FlatTasks
    r = simulate_superstep(FlatTasks([1.0] * 4), "steal", p=2, interval=1, seed=0)
    assert (r.iterations, r.tasks_moved, r.transfers) == (3, 1, 1)
    assert list(r.executed) == [3, 1]
    assert r.messages == 8  # four requests, one task message, three empty replies


@pytest.mark.parametrize("name", ["steal", "rid", "sid", "random"])
def test_every_migration_rule_runs_in_supersteps_and_expands_each_node_once(name):
    tree = TaskTree(kind="imbalance", imbalance=0.2, depth=11, seed=4)
    nodes = tree.count()[0]
    r = simulate_superstep(tree, name, p=16, interval=4, seed=1)
    assert r.nodes == nodes == int(r.executed.sum())
    assert r.tasks_moved > 0 and r.transfers > 0
    alone = simulate_superstep(tree, None, p=16, interval=4)
    assert r.iterations < alone.iterations  # work spread: fewer supersteps than processor 0 alone


@pytest.mark.parametrize("name", ["sid", "random", "gdem", "steal"])
def test_the_queue_series_is_what_the_barriers_counted(name):
    """Each row of queue_series sums to that iteration's n(t), also for rules whose hooks write into
    the view during the next iteration (sender-initiated placement)."""
    r = simulate_superstep(TaskTree(kind="imbalance", imbalance=0.2, depth=10, seed=2), name, p=8, interval=4)
    assert (r.queue_series.sum(axis=1) == r.n_series).all()


@pytest.mark.parametrize("kw, field", [({"interval": "a"}, "interval"), ({"interval": -1}, "interval"),
                                       ({"interval": float("nan")}, "interval")])
def test_bad_superstep_arguments_name_the_field(kw, field):
    with pytest.raises(ConfigError, match=field):
        simulate_superstep(TaskTree(depth=4), "gdem", p=4, **kw)
    with pytest.raises(ConfigError, match="workload"):
        simulate_superstep("a tree", "gdem", p=4)


def test_ita_rejects_what_is_not_a_positive_time():
    from dlbkit.families.tree.model.metrics import ita_best, ita_time
    assert ita_time(np.float64(2.0), 1) == 50.0 and ita_best(1.0, [2.0, 4.0]) == 50.0
    for bad in ("a", 0, -1.0, float("inf"), None):
        with pytest.raises(ConfigError, match="t_na"):
            ita_time(bad, 1.0)
    with pytest.raises(ConfigError, match="single"):
        ita_best(1.0, ["x"])


# --- the run as a Trace (the one format of every engine) --------------------------------------------------
def test_trace_of_a_run_without_balancing_is_one_interval_worked_by_hand():
    costs = [1.0, 5.0, 2.0, 8.0]
    r = simulate_superstep(FlatTasks(costs), None, p=2)
    tr = r.trace
    compute = (4 * T.t_c + sum(costs) * T.t_fl) * 1e-6  # every task on processor 0, in one iteration
    assert (tr.family, tr.n_nodes, tr.balancer, tr.node, tr.first, tr.count) == ("tree", 2, "none", [0], [0], [4])
    assert (tr.t_start, tr.round_of) == ([0.0], [0])
    assert tr.t_end == [pytest.approx(compute, rel=1e-12)]
    assert tr.end_time == r.total == pytest.approx(compute + T.allreduce(2, 1) * 1e-6, rel=1e-12)
    assert tr.total_work == pytest.approx(compute, rel=1e-12) and tr.transfers == []
    assert tr.series["waiting"].tolist() == [[0, 0]] and tr.meta["waiting"] == [(r.total, 0)]


@settings(max_examples=examples(25), deadline=None, derandomize=True)
@given(balancer=st.sampled_from(["gdem", "ldsv", "steal", "rid", "sid", None]), p=st.integers(2, 9),
       seed=st.integers(0, 50), grain=st.sampled_from([1.0, 10.0, 100.0]))
def test_trace_holds_every_node_once_and_the_breakdown(balancer, p, seed, grain):
    r = simulate_superstep(TaskTree(kind="random", depth=9, grain=grain, seed=seed), balancer, p=p, seed=seed)
    tr = r.trace
    iv = tr.intervals()
    # every executed tree node is in exactly one interval, on the processor that executed it
    assert iv["count"].sum() == r.nodes
    assert np.bincount(iv["node"], weights=iv["count"], minlength=p).astype(int).tolist() == r.executed.tolist()
    for j in range(p):  # a processor's intervals number its nodes 0, 1, 2, … without gap
        mine = iv["node"] == j
        assert (iv["first"][mine] == np.concatenate(([0], np.cumsum(iv["count"][mine])[:-1]))).all()
    # the intervals' compute, averaged over the workers, is 001's Compute column; the run ends at Total
    assert (iv["t_end"] - iv["t_start"]).sum() / r.workers == pytest.approx(r.compute, rel=1e-9, abs=1e-15)
    assert tr.end_time == r.total and tr.makespan <= r.total * (1 + 1e-12)
    assert (np.diff(iv["round"]) >= 0).all() and iv["round"].max() < r.iterations
    # moves carried out: no more than the balancer decided, stamped at their iteration's barrier
    moves = tr.transfer_table()
    assert tr.moved <= r.tasks_moved and (moves["src"] != moves["dst"]).all()
    assert (np.diff(moves["time"]) >= 0).all()
    assert tr.series["waiting"].sum(axis=1).tolist() == r.n_series.tolist()
