"""The pipelined-SPMD workload (Osman 2003, 000) through ``dlbkit.simulate``: the Platform → HNOW
mapping field by field, exact loop times without noise, and the same run as the engine on the HNOW."""

import math

import numpy as np
import pytest

from dlbkit import ConfigError, Constant, Network, Node, Platform, Pulse, Spmd, simulate
from dlbkit.balancers.registry import make
from dlbkit.families.spmd.model.hnow import DISK_ACCESS, DISK_LATENCY
from dlbkit.families.spmd.model.workload import hnow_from_platform
from dlbkit.families.spmd.model.metrics import steps_to_steady
from dlbkit.families.spmd.sim.engine import simulate_spmd


def line3(**net) -> Platform:
    """Three nodes in a chain: speeds 1, 2, 4 DP/s; 40 B/s links with 0.5 s latency."""
    return Platform([Node("a", speed=1.0), Node("b", speed=2.0), Node("c", speed=4.0)],
                    Network(latency=0.5, bandwidth=40.0, topology=net.get("topology", "chain")))


def test_no_noise_no_balancer_makespan_is_loops_times_the_slowest_loop():
    """Loop time = W/speed + Σ neighbours (latency + boundary / (bandwidth / bytes_per_point)):
    node a: 100/1 + (0.5 + 10/(40/2)) = 101 s, b: 50 + 2 × 1 = 52 s, c: 25 + 1 = 26 s; constant loop
    times, so the pipelined makespan is loops × 101 s (000 §8.1)."""
    w = Spmd(points=100, loops=7, boundary=10, noise=0.0, bytes_per_point=2.0)
    r = simulate(line3(), w, "none", seed=5)
    assert r.trace.series["loop_time"][0].tolist() == [101.0, 52.0, 26.0]
    assert (r.trace.series["loop_time"] == r.trace.series["loop_time"][0]).all()
    assert r.makespan == pytest.approx(7 * 101.0, rel=1e-12)
    busy = 7 * (101.0 + 52.0 + 26.0)
    assert r.metrics["idle_share"] == pytest.approx(1 - busy / (3 * 707.0), rel=1e-12)
    assert r.metrics["imbalance"] == pytest.approx(101.0 / (179.0 / 3), rel=1e-12)  # window 10 > 7 loops: all
    assert (r.metrics["dp_moved"], r.metrics["steps_to_balance"]) == (0.0, 0.0)
    # steady needs 3 quiet windows (30 loops) after the last transfer: 7 loops cannot show it, 40 can
    assert math.isnan(r.metrics["loops_to_steady"])
    assert simulate(line3(), Spmd(points=100, loops=40, boundary=10, noise=0.0), "none").metrics["loops_to_steady"] == 0.0
    for m in ("lower_bound", "efficiency", "chunks", "messages", "bytes", "tasks_moved"):
        assert math.isnan(r.metrics[m]), m
    assert r.balancer is None and r.trace.balancer == "none"
    table = r.table()
    # one interval per loop and node: the loop is its round, the DP held its count, and it ends when
    # the pipeline says (node 0 sets the pace: 101 s a loop)
    assert table["round"][:4] == [0, 0, 0, 1] and table["count"][:3] == [100, 100, 100]
    assert table["node"][:4] == [0, 1, 2, 0] and table["t_end"][0] == 101.0 and table["t_end"][3] == 202.0


def test_platform_maps_to_hnow_field_by_field():
    pulse = Pulse(start=3.0, duration=4.0, level=0.25)
    p = Platform([Node("a", speed=3.0, memory=800.0, availability=pulse), Node("b", speed=5.0),
                  Node("c", speed=7.0, memory=80.0)], Network(latency=0.25, bandwidth=64.0, topology="ring"))
    w = Spmd(points=(10, 20, 30), loops=3, boundary=4.0, boundary_k=0.5, noise=0.05, bytes_per_point=8.0)
    h = hnow_from_platform(p, w)
    assert (h.layout, h.boundary, h.boundary_k, h.noise, h.n) == ("ring", 4.0, 0.5, 0.05, 3)
    assert [x.speed for x in h.workstations] == [3.0, 5.0, 7.0]  # one DP = one work unit
    assert [x.memory for x in h.workstations] == [100.0, 60.0, 10.0]  # bytes / 8; unlimited = whole domain
    assert [x.bandwidth for x in h.workstations] == [8.0] * 3  # 64 B/s / 8 B per DP
    assert [x.latency for x in h.workstations] == [0.25] * 3
    assert [x.points for x in h.workstations] == [10, 20, 30]
    assert [(x.swap_rate, x.swap_latency) for x in h.workstations] == [(DISK_ACCESS, DISK_LATENCY)] * 3
    assert h.workstations[0].availability is pulse and h.workstations[1].availability == Constant()
    # a chain is a line; on a complete network the workload's layout decides (ring by default)
    assert hnow_from_platform(line3(), Spmd(points=5)).layout == "line"
    assert hnow_from_platform(line3(topology="complete"), Spmd(points=5)).layout == "ring"
    assert hnow_from_platform(line3(topology="complete"), Spmd(points=5, layout="line")).layout == "line"
    assert Spmd(points=7).split(3) == (7, 7, 7)


def ring10(level=0.2) -> Platform:
    nodes = [Node(f"ws{i}", speed=1e5, availability=Pulse(start=20, duration=60, level=level) if i == 0
                  else Constant()) for i in range(10)]
    return Platform(nodes, Network(latency=1e-3, bandwidth=1e7, topology="ring"))


@pytest.mark.parametrize("name", ["dlah", "homogeneous-diffusion", "processor-only", "optimal-chain"])
def test_balanced_runs_conserve_points_and_equal_the_engine_on_the_hnow(name):
    w = Spmd(points=98_000, boundary=2_000, loops=120)
    r = simulate(ring10(), w, name, seed=11, window=5)
    tr = r.trace
    assert (tr.series["points"].sum(axis=1) == 10 * 98_000).all()
    direct = simulate_spmd(hnow_from_platform(ring10(), w), make(name), loops=120, window=5, seed=11)
    assert tr.transfers == direct.transfers and len(tr.transfers) > 0
    np.testing.assert_array_equal(tr.series["loop_time"], direct.series["loop_time"])
    assert r.metrics["dp_moved"] == float(direct.moved) > 0
    assert r.metrics["steps_to_balance"] == float(steps_to_steady(direct).sum())
    assert r.metrics["makespan"] == direct.makespan


def test_dlah_beats_no_balancing_when_a_node_loses_its_cpu():
    w = Spmd(points=98_000, boundary=2_000, loops=120)
    none, dlah = (simulate(ring10(), w, b, seed=3, window=5) for b in ("none", "dlah"))
    assert dlah.makespan < 0.8 * none.makespan
    assert dlah.trace.series["points"][-1, 0] < 98_000 < none.trace.series["points"][-1, 0] + 1  # WS 0 shed data points


@pytest.mark.parametrize("make_call, field", [
    (lambda: Spmd(points=0), "workload.points"),
    (lambda: Spmd(points=[5, 0, 5]), "workload.points[1]"),
    (lambda: Spmd(loops=0), "workload.loops"),
    (lambda: Spmd(layout="star"), "workload.layout"),
    (lambda: Spmd(noise=1.0), "workload.noise"),
    (lambda: Spmd(bytes_per_point=0), "workload.bytes_per_point"),
    (lambda: simulate(line3(), Spmd(points=5, loops=2), "gss"), "balancer"),
    (lambda: simulate(line3(), Spmd(points=5, loops=2), "steal"), "balancer"),
    (lambda: simulate(line3(), Spmd(points=5, loops=2), "dlah", mechanism="rounds"), "engine.mechanism"),
    (lambda: simulate(line3(), Spmd(points=(5, 5), loops=2), "dlah"), "workload.points"),
    (lambda: simulate(line3(), Spmd(points=5, loops=2, layout="ring"), "dlah"), "workload.layout"),
    # the fit is checked before the run, as an experiment file's (dlbkit.simulate calls Family.check_fit),
    # and named by the argument's path, as workload.points is
    (lambda: simulate(line3(topology="star"), Spmd(points=5, loops=2), "dlah"), "platform.network.topology"),
    (lambda: simulate(Platform([Node("a", cores=2), Node("b")]), Spmd(points=5, loops=2), "none"),
     "platform.nodes[0].cores"),
])
def test_bad_spmd_input_names_the_field(make_call, field):
    with pytest.raises(ConfigError) as e:
        make_call()
    assert e.value.field == field


def test_result_plots_of_an_spmd_run():
    r = simulate(line3(), Spmd(points=100, loops=7, boundary=10, noise=0.0), "dlah", window=2)
    fig = r.plot_points()
    ys = [line.get_ydata() for line in fig.axes[0].get_lines()[:3]]
    assert [list(y) for y in ys] == [r.trace.series["points"][:, i].tolist() for i in range(3)]
    assert r.plot_loop_times().axes[0].get_ylabel() == "loop time (s)"
    # an SPMD run's intervals are its loops: the Gantt chart has a bar per loop of every node
    gantt = r.plot_gantt()
    assert len(gantt.axes[0].get_yticks()) == 3 and r.trace.n_intervals == 7 * 3
