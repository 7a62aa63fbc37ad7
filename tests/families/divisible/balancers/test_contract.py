"""One contract suite over every registered chunking balancer (scikit-learn's check_estimator idea)."""


import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dlbkit
from dlbkit import ConfigError, CostModel, Divisible, Node, Platform, make, simulate
from dlbkit.balancers.registry import REGISTRY, names

from support.profiles import examples

CHUNKING = names("chunking")

#: the loop self-scheduling techniques this package must offer (notes/dls_techniques.md)
EXPECTED = {"gss", "tss", "tfss", "fac", "fac2", "wf", "awf-b", "awf-c", "awf-d", "awf-e", "af", "fsc",
            "mfsc", "fiss", "viss", "pls", "rnd", "tap"}

_CANDIDATES = [0, -1, -0.5, 1.5, "bogus", float("nan"), None, True]


def tiles(trace, n_items):
    """True when the chunks' [first, first + count) ranges cover [0, n_items) with no gap or overlap."""
    first = np.asarray(trace.first)
    count = np.asarray(trace.count)
    order = np.argsort(first, kind="stable")
    f, c = first[order], count[order]
    return (len(f) > 0 and f[0] == 0 and bool(np.all(c >= 1)) and bool(np.all(f[1:] == f[:-1] + c[:-1]))
            and int(f[-1] + c[-1]) == n_items)


def test_every_dls_technique_is_registered():
    assert EXPECTED <= set(CHUNKING)


def test_min_chunk_zero_is_rejected_with_field_and_value():
    with pytest.raises(ConfigError) as err:
        make("gss", {"min_chunk": 0})
    assert "min_chunk" in str(err.value) and "got 0" in str(err.value)


@pytest.mark.parametrize("mechanism", ["self-scheduling", "rounds"])
@pytest.mark.parametrize("name", CHUNKING)
def test_simulation_processes_every_item_once_and_respects_the_bound(name, mechanism, platform):
    workload = Divisible(1000, CostModel("uniform", low=0.5, high=1.5))
    r = simulate(platform, workload, name, seed=3, mechanism=mechanism)
    assert tiles(r.trace, 1000)
    assert r.metrics["makespan"] >= r.metrics["lower_bound"] * (1 - 1e-12) > 0


@pytest.mark.parametrize("name", [n for n in CHUNKING if not REGISTRY[n].reads_measurements])
def test_rules_declared_blind_to_measurements_do_not_read_them(name, platform):
    """The engine skips measurements for these; forcing them on must not change a single decision."""
    cls = REGISTRY[name]
    seeing = type(cls.__name__ + "Seeing", (cls,), {"reads_measurements": True})
    workload = Divisible(600, CostModel("exponential", mean=1.0))
    blind = simulate(platform, workload, cls(), seed=5).trace
    full = simulate(platform, workload, seeing(), seed=5).trace
    assert blind.count == full.count and blind.node == full.node


@pytest.mark.parametrize("name", sorted(EXPECTED - {"rnd"}))
def test_one_object_runs_many_times_identically(name, platform):
    b = make(name)
    runs = [simulate(platform, Divisible(500, CostModel("normal", mean=1.0, std=0.5)), b, seed=9).trace
            for _ in range(2)]
    assert runs[0].count == runs[1].count and runs[0].t_end == runs[1].t_end


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_items=st.integers(1, 2500),
       speeds=st.lists(st.floats(0.25, 8.0, allow_nan=False), min_size=1, max_size=6),
       cost=st.sampled_from([CostModel(), CostModel("uniform", low=0.1, high=3.0),
                             CostModel("exponential", mean=1.0)]),
       seed=st.integers(0, 2**31 - 1))
def test_property_every_rule_conserves_items_and_is_reproducible(n_items, speeds, cost, seed):
    platform = Platform([Node("master")] + [Node(f"w{i}", speed=s) for i, s in enumerate(speeds)])
    workload = Divisible(n_items, cost)
    for name in CHUNKING:
        a = simulate(platform, workload, name, seed=seed).trace
        b = simulate(platform, workload, name, seed=seed).trace
        assert tiles(a, n_items), name
        assert sum(a.count) == n_items, name
        assert (a.node, a.first, a.count, a.t_start, a.t_end) == (b.node, b.first, b.count, b.t_start,
                                                                     b.t_end), name


def test_package_exports_the_chunking_classes():
    from dlbkit.families.divisible import balancers as chunking
    for cls_name in chunking.__all__:
        cls = getattr(chunking, cls_name)
        assert cls.name in REGISTRY and REGISTRY[cls.name] is cls
    assert dlbkit.simulate is simulate
