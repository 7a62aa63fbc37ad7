"""The trace's interval columns are typed arrays (8 bytes a row), whichever way an engine fills them,
and survive pickling, copying and the JSON file unchanged (dlbkit.model.trace)."""

import copy
import pickle
from array import array

import numpy as np
import pytest

from dlbkit import Divisible, Node, Platform, simulate
from dlbkit.model.trace import Column, Rows, Trace, column
from dlbkit.runtime.record import load_trace, save_trace

INTS = ("node", "first", "count", "round_of")
FLOATS = ("t_ask", "t_start", "t_end")


def _platform():
    return Platform([Node("m"), Node("a"), Node("b", speed=2.0), Node("c", speed=0.5)])


def _assert_typed(tr):
    for name in INTS + FLOATS:
        col = getattr(tr, name)
        assert isinstance(col, Column), name
        assert col.typecode == ("q" if name in INTS else "d"), name
        assert len(col) == tr.n_intervals, name


@pytest.mark.parametrize("engine", [{}, {"mechanism": "rounds"}, {"fast_path": False}, {"steps": 3}])
def test_a_divisible_run_keeps_typed_columns(engine):
    tr = simulate(_platform(), Divisible(500), "gss", seed=3, **engine).trace
    assert tr.n_intervals > 3
    _assert_typed(tr)
    # numpy reads a column in place (no copy); intervals() hands out copies a caller may change
    assert np.shares_memory(np.asarray(tr.t_end), np.frombuffer(tr.t_end, dtype=float))
    ct = tr.intervals()
    ct["t_end"][:] = -1.0
    assert min(tr.t_end) > 0.0
    assert ct["node"].dtype == np.int64 and ct["t_start"].dtype == np.float64


def test_pickle_copy_and_file_round_trip_keep_values_and_types(tmp_path):
    tr = simulate(_platform(), Divisible(300), "fac", seed=1).trace
    for other in (pickle.loads(pickle.dumps(tr)), copy.deepcopy(tr), copy.copy(tr),
                  load_trace(save_trace(tr, tmp_path / "t.json"))):
        _assert_typed(other)
        for name in INTS + FLOATS:
            assert getattr(other, name).tobytes() == getattr(tr, name).tobytes(), name


def test_columns_given_as_lists_or_numpy_arrays_are_converted():
    tr = Trace(2, [0, 1], node=[0, 1, 0], first=np.array([0, 4, 9], dtype=np.int32), count=[4, 5, 1],
               t_ask=np.array([0, 0, 2]), t_start=[0.5, 0.5, 2.5], t_end=(2.0, 3.0, 2.75), round_of=[-1] * 3)
    _assert_typed(tr)
    assert tr.node == [0, 1, 0] and tr.first == [0, 4, 9] and tr.t_ask == [0.0, 0.0, 2.0]
    assert tr.makespan == 3.0 and tr.story(9) == {"node": 0, "first": 9, "count": 1, "t_ask": 2.0,
                                                  "t_start": 2.5, "t_end": 2.75, "round": -1}
    tr.add_interval(1, 10, 2, 3.0, 3.5, 4.0)
    assert tr.n_intervals == 4 and tr.t_end[-1] == 4.0 and tr.round_of[-1] == -1
    tr.t_end = tr.intervals()["t_end"] * 2  # a whole column assigned as a numpy array
    assert isinstance(tr.t_end, Column) and tr.t_end == [4.0, 6.0, 5.5, 8.0]


def test_a_column_refuses_values_of_another_kind():
    tr = Trace(1, [0])
    with pytest.raises(TypeError):
        tr.node.append(1.5)
    with pytest.raises(TypeError):
        tr.t_end.append(None)
    with pytest.raises(TypeError):
        tr.count = np.array([1.0, 2.0])  # a float array does not become an integer column
    assert column("q", array("q", [1, 2])) == [1, 2]


def test_round_rows_are_typed_columns_that_read_as_tuples(tmp_path):
    tr = simulate(_platform(), Divisible(400), "gss", seed=2, mechanism="rounds").trace
    rows = tr.rounds
    assert isinstance(rows, Rows) and [c.typecode for c in rows.columns] == list("qqqdddd")
    assert len(rows) == tr.n_intervals  # one row per chunk
    as_list = list(rows)
    assert all(type(r) is tuple and len(r) == 7 for r in as_list) and rows == as_list
    assert rows[0] == as_list[0] and rows[-2:] == as_list[-2:]
    table = tr.round_table()
    assert table["round"].dtype == np.int64 and table["exe_time"].dtype == np.float64
    assert table["calc_time"].tolist() == [r[5] for r in as_list]
    for other in (pickle.loads(pickle.dumps(tr)), copy.deepcopy(tr), load_trace(save_trace(tr, tmp_path / "r.json"))):
        assert isinstance(other.rounds, Rows) and other.rounds == as_list
        assert all(a.tobytes() == b.tobytes() for a, b in zip(other.rounds.columns, rows.columns))


def test_round_rows_refuse_a_bad_row_and_keep_the_good_ones():
    tr = Trace(1, [0], rounds=[(0, 0, 5, 0.0, 0.1, 1.0, 1.2)])
    assert isinstance(tr.rounds, Rows)
    with pytest.raises(TypeError):
        tr.rounds.append((1, 0, 2.5, 1.2, 0.1, 1.0, 1.2))  # a float count
    with pytest.raises(ValueError):
        tr.rounds.append((1, 0, 2))
    assert tr.rounds == [(0, 0, 5, 0.0, 0.1, 1.0, 1.2)]
    tr.rounds += [(1, 0, 3, 1.2, 0.1, 0.5, 0.7)]
    assert len(tr.rounds) == 2 and tr.rounds[1] == (1, 0, 3, 1.2, 0.1, 0.5, 0.7)


def test_a_refused_value_leaves_every_column_as_it_was():
    """A row that a column refuses part-way (an int beyond int64 raises OverflowError, not TypeError; a
    float count in add_interval after node and first were appended) left the columns of unequal lengths."""
    tr = Trace(1, [0], rounds=[(0, 0, 5, 0.0, 0.1, 1.0, 1.2)])
    with pytest.raises(OverflowError):
        tr.rounds.append((1, 0, 2**63, 1.2, 0.1, 1.0, 1.2))
    assert [len(c) for c in tr.rounds.columns] == [1] * 7 and tr.rounds == [(0, 0, 5, 0.0, 0.1, 1.0, 1.2)]
    tr.add_interval(0, 0, 3, 0.0, 0.0, 1.0)
    for bad in [(0, 3, 1.5, 1.0, 1.0, 2.0), (0, 3, 2, 1.0, None, 2.0), (0, 2**63, 2, 1.0, 1.0, 2.0)]:
        with pytest.raises((TypeError, OverflowError)):
            tr.add_interval(*bad)
        assert {name: len(getattr(tr, name)) for name in ("node", "first", "count", "t_ask", "t_start", "t_end",
                                                          "round_of")} == dict.fromkeys(
            ("node", "first", "count", "t_ask", "t_start", "t_end", "round_of"), 1)
    assert tr.intervals()["count"].tolist() == [3]
