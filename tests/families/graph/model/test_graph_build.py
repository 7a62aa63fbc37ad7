"""Building a TaskGraph: the fast path (plain ids and numbers, checked by numpy) gives the same graph
as the checked loop, and the vectorised in-tree and layered generators the same graph as the loops
they replace."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError, TaskGraph
from dlbkit.families.graph.model.workload import _edges_checked, _edges_fast, _table_checked, _table_fast, _topological
from dlbkit.families.graph.model.generate import _layer_edges, in_tree, layered

from support.profiles import examples

FIELDS = ("ids", "loads", "costs", "edges", "index", "preds", "succs", "topo")


def fields(g):
    return {f: getattr(g, f) for f in FIELDS}


def in_tree_by_levels(m, k, ls, cs):
    """The generator as it was before numpy: level k first, one task and one edge at a time."""
    first, nxt = {}, 0
    for lv in range(k, 0, -1):
        first[lv] = nxt
        nxt += m ** (lv - 1)
    loads, edges = [0.0] * nxt, []
    for lv in range(k, 0, -1):
        for q in range(m ** (lv - 1)):
            loads[first[lv] + q] = ls[lv - 1]
            if lv > 1:
                edges.append((first[lv] + q, first[lv - 1] + q // m, cs[lv - 2]))
    return list(range(nxt)), loads, edges


def test_a_binary_in_tree_of_three_levels_is_the_hand_drawn_one():
    g = in_tree(2, 3, l=[5, 6, 7], c=[1, 2])
    assert g.ids == tuple(range(7)) and g.loads == (7.0,) * 4 + (6.0,) * 2 + (5.0,)
    assert g.edges == ((0, 4, 2.0), (1, 4, 2.0), (2, 5, 2.0), (3, 5, 2.0), (4, 6, 1.0), (5, 6, 1.0))
    assert g.preds[4] == [(0, 2.0), (1, 2.0)] and g.preds[6] == [(4, 1.0), (5, 1.0)] and g.preds[0] == []
    assert g.succs[3] == [(5, 2.0)] and g.succs[6] == [] and g.topo == tuple(range(7))
    assert g.name == "intree2x3"


@pytest.mark.parametrize("m, k", [(2, 2), (2, 9), (3, 5), (5, 4), (7, 3)])
def test_the_in_tree_is_the_level_by_level_one(m, k):
    ls = [float(i + 1) for i in range(k)]
    cs = [0.5 * (i + 1) for i in range(k - 1)]
    ids, loads, edges = in_tree_by_levels(m, k, ls, cs)
    g = in_tree(m, k, l=ls, c=cs)
    assert fields(g) == fields(TaskGraph(ids, loads=loads, edges=[list(e) for e in edges], name=g.name))
    assert g.edges == tuple(edges) and g.loads == tuple(loads)


def random_graph(seed, n=60, ordered=False):
    """A random DAG on string ids, edges listed in a shuffled order (so preds/succs order matters),
    numbered against the topological order unless *ordered*; int and float data and loads."""
    rng = random.Random(seed)
    rank = list(range(n))
    if not ordered:
        rng.shuffle(rank)
    pairs = {(a, b) for a, b in (sorted(rng.sample(range(n), 2)) for _ in range(3 * n))}
    edges = [(f"t{rank[a]}", f"t{rank[b]}", rng.choice([0, 3, 2.5, 1e-9])) for a, b in pairs]
    rng.shuffle(edges)
    loads = [rng.choice([1, 0, 4.25, 1e30]) for _ in range(n)]
    return [f"t{i}" for i in range(n)], loads, edges


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ordered", [False, True])
def test_the_fast_path_builds_the_graph_the_checked_loop_builds(seed, ordered):
    ids, loads, edges = random_graph(seed, ordered=ordered)
    index = {t: i for i, t in enumerate(ids)}
    fast, checked = _edges_fast(edges, index, len(ids)), _edges_checked(edges, index, len(ids))
    assert fast is not None and fast == checked
    assert fast[3] is ordered
    g = TaskGraph(ids, loads=loads, edges=edges)
    # lists as edges and numpy floats as loads take the checked loops
    slow = TaskGraph(ids, loads=[np.float64(x) for x in loads], edges=[list(e) for e in edges])
    assert fields(g) == fields(slow) and g.topo == _topological(slow.preds, slow.succs, slow.ids)


def test_an_int_load_just_above_the_magnitude_limit_is_refused_on_the_fast_path_too():
    # 10**30 + 1 exceeds 1e30 (= 10**30 + 19884624838656 − …, compared exactly) only by int rules:
    # as a float it would round to 1e30 and pass
    big = int(1e30) + 1
    with pytest.raises(ConfigError, match=r"tasks\['a'\]\.load"):
        TaskGraph(["a", "b"], loads=[big, 1.0], edges=[("a", "b", 1.0)])
    with pytest.raises(ConfigError, match=r"edges\[0\]\.data"):
        TaskGraph(["a", "b"], loads=[1.0, 1.0], edges=[("a", "b", big)])


@pytest.mark.parametrize("edges, field", [
    ([("a", "b", 1.0), ("a", "b", 2.0)], r"edges\[1\] must be at most one edge"),
    ([("a", "b", 1.0), ("b", "b", 2.0)], r"edges\[1\] must be an edge between two different tasks"),
    ([("a", "b", 1.0), ("b", "z", 2.0)], r"edges\[1\]\.to must be the id of a task"),
    ([("a", "b", 1.0), (True, "b", 2.0)], r"edges\[1\]\.from must be the id of a task"),
    ([("a", "b", float("nan"))], r"edges\[0\]\.data"),
    ([("a", "b", -1)], r"edges\[0\]\.data"),
])
def test_bad_edges_name_the_first_bad_edge_whatever_the_path(edges, field):
    with pytest.raises(ConfigError, match=field):
        TaskGraph(["a", "b"], loads=[1.0, 1.0], edges=edges)


def test_edges_given_as_an_iterator_are_all_read():
    g = TaskGraph(["a", "b", "c"], loads=[1.0, 1.0, 1.0], edges=(e for e in [("a", "b", 1.0), ("b", "c", 2.0)]))
    assert g.edges == (("a", "b", 1.0), ("b", "c", 2.0)) and g.preds[2] == [(1, 2.0)]


# --- cost tables: the numpy check accepts and refuses what the checked loop does -------------------------
NOT_NUMBERS = ["1.0", None, [1.0], True, False, np.float64(2.0), 1 + 0j]
# int(1e30) is 1e30 exactly (10**30 is below it): one more is past dlbkit's limit, which the float refuses
BAD_NUMBERS = [float("nan"), float("inf"), -float("inf"), -1.0, -1, -5e-324, 1.0000001e30, int(1e30) + 1, 10**400]
GOOD_NUMBERS = [0.0, -0.0, 1.0, 2.5, 5e-324, 1e30, 0, 3, 2**53, 2**53 + 1, 10**30, int(1e30)]
entries = st.one_of(st.floats(min_value=0.0, max_value=1e30), st.integers(0, 2**60),
                    st.sampled_from(GOOD_NUMBERS), st.sampled_from(BAD_NUMBERS), st.sampled_from(NOT_NUMBERS))
# mostly one width (so that the numbers, not the shape, decide); sometimes a bad row
rows = st.one_of(st.lists(entries, min_size=3, max_size=3).map(tuple), st.lists(entries, min_size=3, max_size=3),
                 st.lists(entries, max_size=4), st.sampled_from(["abc", 1.0, None, np.ones(3)]))


def checked_outcome(table):
    """The checked loop's table or its error message, for *table* given as TaskGraph's costs."""
    ids = [f"t{i}" for i in range(len(table))]
    rows_ = [tuple(r) if isinstance(r, (list, tuple)) else r for r in table]  # as TaskGraph does
    try:
        return _table_checked(rows_, tuple(ids)), None
    except ConfigError as e:
        return None, str(e)


@settings(max_examples=examples(400), deadline=None)
@given(table=st.lists(rows, min_size=1, max_size=6))
def test_the_cost_table_fast_path_takes_what_the_checked_loop_takes_and_nothing_else(table):
    rows_ = [tuple(r) if isinstance(r, (list, tuple)) else r for r in table]
    fast = _table_fast(rows_)
    want, message = checked_outcome(table)
    if fast is not None:  # the same table, to the float and the sign of a zero
        assert message is None and fast == want
        assert [[(type(v), repr(v)) for v in r] for r in fast] == [[(type(v), repr(v)) for v in r] for r in want]
    values = [v for r in rows_ if isinstance(r, tuple) for v in r]
    plain = all(isinstance(r, tuple) for r in rows_) and all(type(v) in (float, int) for v in values) and (
        all(type(v) is float for v in values) or max(values) <= 2**53)  # ints beside larger numbers: the loop's
    if message is None and plain:  # the usual table does take the fast path
        assert fast is not None
    ids = [f"t{i}" for i in range(len(table))]
    if message is None:
        assert TaskGraph(ids, costs=table).costs == want
    else:
        with pytest.raises(ConfigError) as e:
            TaskGraph(ids, costs=table)
        assert str(e.value) == message


@pytest.mark.parametrize("table, message", [
    ([[1.0, 2.0], [1.0, float("nan")]], "tasks['b'].costs[1] must be a finite number >= 0; got nan"),
    ([[1.0, -2.0], [1.0, 1.0]], "tasks['a'].costs[1] must be a finite number >= 0; got -2.0"),
    ([[1.0, 2.0], [float("inf"), 1.0]], "tasks['b'].costs[0] must be a finite number >= 0; got inf"),
    ([[1.0, 2.0], [1.0]], "tasks['b'].costs must be 2 values, one per node (the width of the first task's "
                          "costs); got '1 values'"),
    ([[1.0, 2.0], ["3", 1.0]], "tasks['b'].costs[0] must be a finite number >= 0; got '3'"),
    ([[1.0, 2.0], "12"], "tasks['b'].costs must be a non-empty list of numbers, one per node; got '12'"),
    ([[], []], "tasks['a'].costs must be a non-empty list of numbers, one per node; got ()"),
    ([[1.0, True], [1.0, 1.0]], "tasks['a'].costs[1] must be a finite number >= 0; got True"),
    ([[1.0, 2.0], [int(1e30) + 1, 1.0]], "tasks['b'].costs[0] must be a number in [0, 1e30] (dlbkit's limits on "
                                         "magnitudes: 1e-30 to 1e30); got 1000000000000000019884624838657"),
])
def test_a_bad_cost_table_gets_the_checked_loops_message(table, message):
    assert _table_fast([tuple(r) if isinstance(r, list) else r for r in table]) is None
    with pytest.raises(ConfigError) as e:
        TaskGraph(["a", "b"], costs=table)
    assert str(e.value) == message


@pytest.mark.parametrize("kind", ["load", "costs", "data"])
def test_an_int_too_large_for_a_float_is_a_config_error_not_an_overflow(kind):
    big = 10**400  # math.isfinite(big) raises OverflowError
    tail = "must be a finite number >= 0; got " + str(big)
    with pytest.raises(ConfigError) as e:
        if kind == "load":
            TaskGraph(["a", "b"], loads=[1.0, big])
        elif kind == "costs":
            TaskGraph(["a", "b"], costs=[[1.0], [big]])
        else:
            TaskGraph(["a", "b"], loads=[1.0, 1.0], edges=[("a", "b", big)])
    field = {"load": "tasks['b'].load", "costs": "tasks['b'].costs[0]", "data": "edges[0].data"}[kind]
    assert str(e.value) == f"{field} {tail}"


def test_a_cost_table_of_ints_and_floats_is_floats_on_the_fast_path():
    table = [[1, 2.5], (0, 2**53)]
    fast = _table_fast([tuple(r) for r in table])
    assert fast == ((1.0, 2.5), (0.0, 9007199254740992.0)) and all(type(v) is float for r in fast for v in r)
    assert TaskGraph(["a", "b"], costs=table).costs == fast


# --- layered: its edges read in numpy blocks, the graph the per-task loop drew ---------------------------
def layered_by_loop(n, width, density, ccr, load, nodes, beta, seed):
    """layered as it was before the blocks (main at 25f08fc): one draw at a time."""
    rng = np.random.default_rng(seed)
    layers, t = [], 0
    while t < n:
        size = min(n - t, int(rng.integers(1, 2 * width)))
        layers.append(list(range(t, t + size)))
        t += size
    edges = loop_edges(rng, layers, density, ccr, load)
    loads = rng.uniform(0.5, 1.5, size=n) * load
    if nodes is None:
        return TaskGraph(list(range(n)), loads=loads.tolist(), edges=edges, name=f"layered{n}")
    costs = loads[:, None] * rng.uniform(1 - beta / 2, 1 + beta / 2, size=(n, nodes))
    return TaskGraph(list(range(n)), costs=costs.tolist(), edges=edges, name=f"layered{n}x{nodes}")


def loop_edges(rng, layers, density, ccr, load):
    edges = []
    for above, layer in zip(layers, layers[1:]):
        for j in layer:
            ps = [i for i in above if rng.random() < density] or [above[int(rng.integers(len(above)))]]
            edges.extend((i, j, float(rng.uniform(0.5, 1.5) * ccr * load)) for i in ps)
    return edges


@settings(max_examples=examples(200), deadline=None)
@given(n=st.integers(1, 400), width=st.integers(1, 40), density=st.sampled_from([0.0, 0.02, 0.1, 0.3, 0.7, 1.0]),
       ccr=st.sampled_from([0.0, 0.1, 1.0, 3.7]), load=st.sampled_from([1.0, 10.0, 0.3]),
       nodes=st.sampled_from([None, 1, 4]), beta=st.sampled_from([0.0, 0.5, 2.0]), seed=st.integers(0, 2**64))
def test_layered_is_the_graph_the_per_task_loop_drew(n, width, density, ccr, load, nodes, beta, seed):
    g = layered(n, width=width, density=density, ccr=ccr, load=load, nodes=nodes, beta=beta, seed=seed)
    ref = layered_by_loop(n, width, density, ccr, load, nodes, beta, seed)
    assert fields(g) == fields(ref) and g.name == ref.name


@settings(max_examples=examples(200), deadline=None)
@given(sizes=st.lists(st.integers(1, 12), min_size=1, max_size=60), density=st.floats(0.0, 1.0),
       block=st.integers(1, 200), skip=st.integers(0, 3), seed=st.integers(0, 2**64))
def test_layer_edges_in_small_blocks_are_the_loops_and_leave_the_stream_where_it_left_it(sizes, density, block,
                                                                                            skip, seed):
    # small blocks: many block turns, failed tasks near a block's end; *skip* 32-bit draws first, so
    # that the generator may start with half an output kept for integers()
    bounds = np.cumsum([0] + sizes).tolist()
    layers = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
    got, ref = np.random.default_rng(seed), np.random.default_rng(seed)
    for r in (got, ref):
        r.integers(7, size=skip, dtype=np.uint32)
    assert _layer_edges(got, bounds, density, 1.3, 2.0, block=block) == loop_edges(ref, layers, density, 1.3, 2.0)
    assert got.bit_generator.state == ref.bit_generator.state


@pytest.mark.parametrize("n, width, density, seed, n_edges", [
    (20_000, 10, 0.3, 0, 63_524),  # the default width and density: about one task in eight draws no parent
    (20_000, 30, 0.1, 11, 61_421),  # many blocks of 2^16 doubles
    (3_000, 1, 0.3, 5, 2_999),  # layers of one task: every task draws integers(1)
    (3_000, 3, 0.0, 5, 2_996),  # no test passes: one parent each, by integers()
    (3_000, 3, 1.0, 5, 8_771),  # every test passes: no integers()
])
def test_layered_is_the_loops_graph_on_fixed_cases(n, width, density, seed, n_edges):
    g = layered(n, width=width, density=density, seed=seed)
    assert fields(g) == fields(layered_by_loop(n, width, density, 1.0, 10.0, None, 0.5, seed))
    assert g.n_edges == n_edges
