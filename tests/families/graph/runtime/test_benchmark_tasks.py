"""Benchmark tasks (:mod:`dlbkit.families.graph.runtime.benchmark_tasks`): a TaskGraph's tasks as sleeps or
busy loops of load × scale seconds, in the networkx form ``dlbkit.run_graph`` parses."""

from __future__ import annotations

import pickle
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

from dlbkit import ConfigError, TaskGraph
from dlbkit.families.graph.runtime.benchmark_tasks import Sleep, Spin, benchmark_tasks
from dlbkit.families.graph.runtime.tasks import parse_tasks


@pytest.mark.parametrize("kind", [Sleep, Spin])
def test_a_task_lasts_at_least_its_seconds_and_returns_none(kind):
    """2 ms by ``time.perf_counter()``, the clock the runtime times a task with; the parents' results
    passed to it are ignored; it pickles with its seconds (a worker is another process)."""
    task = kind(0.002)
    t0 = time.perf_counter()
    assert task("a parent's result", 7) is None
    assert time.perf_counter() - t0 >= 0.002
    again = pickle.loads(pickle.dumps(task))
    assert type(again) is kind and again.seconds == 0.002 and repr(again) == f"{kind.__name__}(0.002)"


def test_a_diamond_by_hand():
    """a (2) → b (4), a → c (1), b → d (3), c → d: at scale 0.5 the loads are 1, 2, 0.5, 1.5 s, the edges the
    same four with data 0 (their 10, 20, 30, 40 volumes not emulated), and run_graph parses it as that graph."""
    g = TaskGraph(["a", "b", "c", "d"], loads=[2, 4, 1, 3],
                  edges=[("a", "b", 10), ("a", "c", 20), ("b", "d", 30), ("c", "d", 40)], name="diamond")
    nx_g = benchmark_tasks(g, work="spin", scale=0.5)
    assert list(nx_g.nodes) == ["a", "b", "c", "d"] and nx_g.graph["name"] == "diamond"
    assert [nx_g.nodes[t]["load"] for t in nx_g.nodes] == [1.0, 2.0, 0.5, 1.5]
    assert [type(nx_g.nodes[t]["fn"]) for t in nx_g.nodes] == [Spin] * 4
    assert [nx_g.nodes[t]["fn"].seconds for t in nx_g.nodes] == [1.0, 2.0, 0.5, 1.5]
    assert sorted(nx_g.edges(data="data")) == [("a", "b", 0.0), ("a", "c", 0.0), ("b", "d", 0.0), ("c", "d", 0.0)]
    spec = parse_tasks(nx_g)
    assert spec.graph.ids == g.ids and spec.graph.loads == (1.0, 2.0, 0.5, 1.5)
    assert spec.deps == [[], [0], [0], [1, 2]]
    assert type(benchmark_tasks(g).nodes["a"]["fn"]) is Sleep  # sleep is the default


@pytest.mark.parametrize("kwargs, field", [
    ({"work": "busy"}, "work"), ({"work": 1}, "work"),
    ({"scale": 0}, "scale"), ({"scale": -0.5}, "scale"), ({"scale": float("nan")}, "scale"),
    ({"scale": float("inf")}, "scale"), ({"scale": 10 ** 400}, "scale"), ({"scale": None}, "scale"),
])
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(ConfigError) as e:
        benchmark_tasks(TaskGraph(["a"], loads=[1.0]), **kwargs)
    assert e.value.field == field


def test_a_cost_table_or_another_object_is_refused():
    with pytest.raises(ConfigError, match="cost table on 2 nodes"):
        benchmark_tasks(TaskGraph(["a"], costs=[[1.0, 2.0]], name="t"))
    with pytest.raises(ConfigError) as e:
        benchmark_tasks({"a": (abs, 1)})
    assert e.value.field == "graph"


@settings(max_examples=examples(50))
@given(loads=st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=20),
       scale=st.floats(1e-6, 10), data=st.data())
def test_the_tasks_keep_the_graph_and_scale_every_load(loads, scale, data):
    """Any DAG (edges from a lower index to a higher one): the same ids in order, the same dependencies,
    every load and every task's seconds = load × scale, no data."""
    n = len(loads)
    pairs = data.draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] < p[1])))
    g = TaskGraph(list(range(n)), loads=loads, edges=[(a, b, 5.0) for a, b in pairs])
    nx_g = benchmark_tasks(g, scale=scale)
    assert list(nx_g.nodes) == list(range(n))
    assert set(nx_g.edges) == set(pairs)
    for i in range(n):
        assert nx_g.nodes[i]["load"] == nx_g.nodes[i]["fn"].seconds == loads[i] * scale
    assert all(d == 0.0 for _, _, d in nx_g.edges(data="data"))
