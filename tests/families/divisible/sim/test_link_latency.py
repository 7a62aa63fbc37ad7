"""One slow link modelled as one slow link: the divisible engine's ``link_latency`` (each worker's own
latency to the master), and the predictions of ``auto``/``advise`` that use it."""

from __future__ import annotations

import numpy as np
import pytest

from dlbkit.errors import ConfigError
from dlbkit.families.divisible.balancers.auto import Auto
from dlbkit.families.divisible.model.links import link_latencies, round_trip_latency
from dlbkit.families.divisible.model.workload import Divisible
from dlbkit.families.divisible.sim.auto import predict
from dlbkit.balancers.registry import resolve
from dlbkit.families.divisible.sim.engine import simulate_divisible
from dlbkit.model.platform import Network, Node, Platform

NODES = [Node("m"), Node("a"), Node("b"), Node("c")]


def _run(network, links=None, balancer="ss", n=60):
    return simulate_divisible(Platform(NODES, network), Divisible(n), resolve(balancer, kind="chunking"),
                              costs=np.full(n, 0.01), link_latency=links)


@pytest.mark.parametrize("balancer", ["ss", "gss", "fac2", "awf-c"])
def test_the_same_latency_on_every_link_is_the_network_latency(balancer):
    """Per-link latencies all equal to L give the trace of one network latency L, chunk for chunk."""
    a = _run(Network(latency=0.003), balancer=balancer)
    b = _run(Network(latency=0.0), {"a": 0.003, "b": 0.003, "c": 0.003}, balancer=balancer)
    assert (a.node, a.first, a.count) == (b.node, b.first, b.count)
    assert a.t_start == b.t_start and a.t_end == b.t_end


def test_a_slow_link_costs_its_own_worker_each_round_trip():
    """SS: worker c's every chunk costs it 2 × 0.05 s of round trip, the others 2 × 0.001 s; c computes
    fewer items, and the gaps the trace shows are each worker's own (link_latencies reads them back)."""
    tr = _run(Network(latency=0.0), {"a": 0.001, "b": 0.001, "c": 0.05}, n=120)
    done = np.bincount(tr.node, weights=tr.count, minlength=3)
    assert done[2] < done[0] / 5, done
    got = link_latencies(tr)
    assert got[0] == pytest.approx(0.001, abs=1e-9) and got[1] == pytest.approx(0.001, abs=1e-9)
    assert got[2] == pytest.approx(0.05, abs=1e-9)
    # the pooled estimate sits between: one number for all hides which worker is far
    assert 0.001 < round_trip_latency(tr) < 0.05


def test_a_node_not_of_the_platform_or_a_bad_latency_is_refused():
    with pytest.raises(ConfigError) as e:
        _run(Network(), {"z": 0.1})
    assert e.value.field == "engine.link_latency"
    with pytest.raises(ConfigError) as e:
        _run(Network(), {"a": -1.0})
    assert e.value.field == "engine.link_latency['a']"
    with pytest.raises(ConfigError) as e:
        _run(Network(), [0.1, 0.2, 0.3])
    assert e.value.field == "engine.link_latency"


def test_auto_chooses_differently_when_one_worker_sits_behind_a_slow_link():
    """400 items of 1 ms on 4 equal workers: with every link near (0.1 ms) the best predicted is one
    balancer; with the fourth behind 20 ms, another; and one latency averaged over the four links
    (5.075 ms) predicts the near case's choice, which per link the model says is worse."""
    names = Auto().validate().candidate_names()
    costs = np.full(400, 0.001)

    def best(latency):
        preds, _ = predict(costs, [1.0] * 4, [1.0] * 4, names, simulate=simulate_divisible, latency=latency)
        return preds

    near, far = best([1e-4] * 4), best([1e-4, 1e-4, 1e-4, 0.02])
    averaged = best(float(np.mean([1e-4, 1e-4, 1e-4, 0.02])))
    print("near", near[:3], "far", far[:3], "averaged", averaged[:3])
    assert far[0][0] != near[0][0]
    assert averaged[0][0] != far[0][0]
    # the averaged model's choice, judged by the per-link model, is slower than the per-link choice
    per_link = dict(far)
    assert per_link[averaged[0][0]] > per_link[far[0][0]] * 1.05
