"""Dask's task-spec graphs (``dask._task_spec``) and Dask collections in ``dlbkit.graph`` / ``run_graph``
(runtime/tasks.py): results as ``dask.compute(..., scheduler="sync")`` gives them, and the errors."""

import functools
import operator
import pickle

import pytest

dask = pytest.importorskip("dask")
np = pytest.importorskip("numpy")

import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402
from dask._task_spec import Alias, DataNode, Dict, List, Set, Task, TaskRef, Tuple  # noqa: E402

import dlbkit  # noqa: E402
from dlbkit import ConfigError  # noqa: E402
from dlbkit.families.graph.runtime.tasks import DaskNode, parse_tasks  # noqa: E402


def _combine(items, mapping, scale):
    return (sum(items) + mapping["x"] * mapping["y"]) * scale


def _every_construct():
    """Every node kind, a legacy tuple task beside them, a tuple key; the values worked out by hand."""
    return {
        "a": DataNode("a", 3),                                       # 3
        "b": Task("b", operator.add, TaskRef("a"), 4),               # 3 + 4 = 7
        "c": Alias("c", "b"),                                        # 7
        # (3 + 7 + 5 + 7·10) · 3 = 255: a List and a Dict of TaskRefs and literals, a TaskRef keyword
        "d": Task("d", _combine, List(TaskRef("a"), TaskRef("c"), 5), Dict(x=TaskRef("b"), y=10),
                  scale=TaskRef("a")),
        "e": (operator.mul, "d", 2),                                 # legacy: 255 · 2 = 510
        ("f", 0): Task(("f", 0), sum, [1, 2, 3]),                    # a literal list: 6
        "g": (operator.add, "e", ("f", 0)),                          # legacy, a tuple key: 516
        "h": (sum, ["a", "c", 1]),                                   # legacy list of keys: 3 + 7 + 1 = 11
        "i": Task("i", sorted, Set(TaskRef("a"), TaskRef("b"), 1)),  # [1, 3, 7]
        "j": Task("j", list, Tuple(TaskRef("a"), 2)),                # [3, 2]
        "k": 42,                                                     # beside Dask nodes, data (as in Dask)
    }


EXPECTED = {"a": 3, "b": 7, "c": 7, "d": 255, "e": 510, ("f", 0): 6, "g": 516, "h": 11, "i": [1, 3, 7],
            "j": [3, 2], "k": 42}


@pytest.mark.parametrize("balancer", ["pd", "heft"])
def test_a_hand_made_graph_of_every_construct_gives_the_values_worked_out_by_hand(balancer):
    r = dlbkit.run_graph(_every_construct(), workers=2, balancer=balancer)
    assert r.results == EXPECTED
    assert list(r.results) == list(EXPECTED)  # the order given
    # Dask's own executor agrees
    ts = dask._task_spec
    assert dict(ts.execute_graph(ts.convert_legacy_graph(_every_construct()))) == EXPECTED


def test_the_dependencies_are_the_nodes_and_the_task_graph_has_their_edges():
    spec = parse_tasks(_every_construct())
    keys = spec.keys
    deps = {keys[i]: {keys[j] for j in d} for i, d in enumerate(spec.deps)}
    assert deps == {"a": set(), "b": {"a"}, "c": {"b"}, "d": {"a", "b", "c"}, "e": {"d"}, ("f", 0): set(),
                    "g": {"e", ("f", 0)}, "h": {"a", "c"}, "i": {"a", "b"}, "j": {"a"}, "k": set()}
    assert all(type(f) is DaskNode for f in spec.fns)
    f = pickle.loads(pickle.dumps(spec.fns[keys.index("d")]))  # what crosses to a worker
    assert f(3, 7, 7) == 255


def test_a_dask_array_expression_as_a_graph_dict_and_as_a_collection():
    x = da.arange(16, chunks=4).reshape(4, 4).rechunk(2)
    y = (x + x.T).sum()
    (want,) = dask.compute(y, scheduler="sync")
    (key,) = y.__dask_keys__()
    assert dlbkit.graph(dict(y.__dask_graph__()), workers=2)[key] == want == 240
    assert dlbkit.graph(y, workers=2) == want
    z = x + x.T  # keys nested lists: the collection's value is the whole array
    np.testing.assert_array_equal(dlbkit.graph(z, workers=2), dask.compute(z, scheduler="sync")[0])


def test_two_chained_delayed_calls():
    a = dask.delayed(operator.mul)(2, 3)
    b = dask.delayed(operator.add)(a, 4)
    (want,) = dask.compute(b, scheduler="sync")
    assert dlbkit.graph(b, workers=2) == want == 10
    r = dlbkit.graph(dict(b.__dask_graph__()), workers=2)
    assert r[b.key] == 10 and r[a.key] == 6


def test_a_bag_map_sum():
    bag = db.from_sequence(range(6), npartitions=2).map(functools.partial(operator.mul, 2)).sum()
    (want,) = dask.compute(bag, scheduler="sync")
    assert dlbkit.graph(bag, workers=2) == want == 30
    s = db.from_sequence(range(6), npartitions=2).map(functools.partial(operator.add, 1))  # a bag's value: a list
    assert dlbkit.graph(s, workers=2) == dask.compute(s, scheduler="sync")[0] == [1, 2, 3, 4, 5, 6]


def test_run_graph_on_a_collection_gives_every_tasks_value():
    b = dask.delayed(operator.add)(dask.delayed(abs)(-5), 1)
    r = dlbkit.run_graph(b, workers=2)
    assert r.results[b.key] == 6 and len(r.results) == 2


def _one_line(e):
    s = str(e.value)
    assert "\n" not in s
    return s


def test_a_cycle_is_a_one_line_error_naming_its_keys():
    g = {"start": DataNode("start", 1), "p": Task("p", operator.add, TaskRef("q"), TaskRef("start")),
         "q": Task("q", operator.neg, TaskRef("p"))}
    with pytest.raises(ConfigError) as e:
        dlbkit.graph(g, workers=2)
    s = _one_line(e)
    assert "cycle" in s and ("q -> p -> q" in s or "p -> q -> p" in s)


def test_a_missing_dependency_is_a_one_line_error_naming_the_task_and_the_key():
    g = {"a": DataNode("a", 1), "b": Task("b", operator.add, TaskRef("a"), TaskRef("nowhere"))}
    with pytest.raises(ConfigError) as e:
        dlbkit.graph(g, workers=2)
    s = _one_line(e)
    assert "tasks['b']" in s and "'nowhere'" in s


def test_a_node_depending_on_itself_is_an_error():
    with pytest.raises(ConfigError) as e:
        dlbkit.graph({"a": Task("a", operator.neg, TaskRef("a"))}, workers=2)
    assert "tasks['a']" in _one_line(e) and "itself" in str(e.value)


def test_a_failing_node_is_a_task_error_with_its_key():
    g = {"a": DataNode("a", 0), "b": Task("b", operator.truediv, 1, TaskRef("a"))}
    with pytest.raises(dlbkit.TaskError) as e:
        dlbkit.graph(g, workers=2)
    assert e.value.index == "b"


def test_legacy_graphs_without_dask_nodes_keep_their_rules():
    # no Dask node: a value that is not a task is still refused, a missing key still a literal
    assert dlbkit.graph({"a": (operator.add, 1, 2), "b": (operator.concat, ["a"], ["zz"])},
                        workers=2) == {"a": 3, "b": [3, "zz"]}
    with pytest.raises(ConfigError):
        dlbkit.graph({"a": 42}, workers=2)


def test_a_high_level_graph_with_raw_arrays_beside_tasks():
    # from_array's graph: raw ndarrays and legacy tuples beside Task nodes; the HighLevelGraph is a Mapping
    x = da.from_array(np.arange(16.0).reshape(4, 4), chunks=2)
    y = (x @ x.T).mean(axis=0)
    want = dask.compute(y, scheduler="sync")[0]
    np.testing.assert_allclose(dlbkit.graph(y, workers=2), want)
    r = dlbkit.graph(y.__dask_graph__(), workers=2)
    np.testing.assert_allclose(np.concatenate([r[k] for k in y.__dask_keys__()]), want)


def test_a_legacy_graph_does_not_import_dask():
    import subprocess
    import sys
    code = ("import sys, operator\nfrom dlbkit.families.graph.runtime.tasks import parse_tasks\n"
            "parse_tasks({'a': (abs, -1), 'b': (operator.add, 'a', 1)})\nprint('dask' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
