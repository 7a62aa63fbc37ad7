"""``dlbkit.dask.scheduler``: Dask collections computed under dlbkit's mapping balancers give what Dask's
own synchronous scheduler gives; the call's errors are one line, named."""

import operator

import pytest

dask = pytest.importorskip("dask")
np = pytest.importorskip("numpy")

import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402

import dlbkit.dask  # noqa: E402
from dlbkit import ConfigError, TaskError  # noqa: E402


def _square(v):
    return v * v


@pytest.fixture(scope="module")
def heft():
    return dlbkit.dask.scheduler(workers=2, balancer="heft")


@pytest.mark.parametrize("balancer", ["pd", "heft"])
def test_an_array_reduction_equals_dasks_own(balancer):
    x = da.arange(144, chunks=12).reshape(12, 12)
    y = (x + x.T).sum(axis=0)
    got = y.compute(scheduler=dlbkit.dask.scheduler(workers=2, balancer=balancer))
    np.testing.assert_array_equal(got, y.compute(scheduler="sync"))
    assert got.sum() == 2 * 143 * 144 // 2  # every element twice: 2 × (0 + … + 143)


def test_a_bag_and_a_delayed_in_one_compute(heft):
    b = db.from_sequence(range(20), npartitions=4).map(_square).sum()
    d = dask.delayed(operator.mul)(dask.delayed(abs)(-6), dask.delayed(operator.add)(3, 4))
    assert dask.compute(b, d, scheduler=heft) == (sum(v * v for v in range(20)), 42)
    assert heft.last.trace.meta["assignment"]  # the run's trace is kept: every task placed


def test_the_last_run_is_kept_with_its_trace(heft):
    d = dask.delayed(operator.add)(dask.delayed(abs)(-2), 10)
    assert d.compute(scheduler=heft) == 12
    assert len(heft.last.results) == 2 and sorted(heft.last.results.values()) == [2, 12]
    assert len(heft.last.trace.meta["assignment"]) == 2


def test_a_hand_made_legacy_graph_with_literals_and_nested_keys(heft):
    # as dask.threaded.get takes it: a bare literal is a value, keys nested in lists come back so
    dsk = {"a": 1, "b": (operator.add, "a", 2), ("c", 0): (sum, ["a", "b"])}
    assert heft(dsk, ["b", [("c", 0), "a"]]) == (3, (4, 1))
    assert heft(dsk, "b") == 3
    assert heft(dsk, ["b", [("c", 0), "a"]]) == dask.get(dsk, ["b", [("c", 0), "a"]])


def test_a_dataframe_groupby_equals_dasks_own(heft):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")  # dask.dataframe needs it
    import dask.dataframe as dd
    df = dd.from_pandas(pd.DataFrame({"a": range(50), "g": [i % 3 for i in range(50)]}), npartitions=5)
    r = df.groupby("g").a.sum()
    assert r.compute(scheduler=heft).equals(r.compute(scheduler="sync"))


def test_errors_are_named_before_and_at_compute(heft):
    with pytest.raises(ConfigError, match="^balancer must be a mapping balancer"):
        dlbkit.dask.scheduler(balancer="nope")
    with pytest.raises(ConfigError, match="^backend must be one of 'local', 'mpi'"):
        dlbkit.dask.scheduler(backend="nowhere")
    with pytest.raises(ConfigError, match="^keys must be one of the graph's 1 keys; got 'zz'"):
        heft({"a": (operator.add, 2, 1)}, ["zz"])
    with pytest.raises(ConfigError, match="directed acyclic graph"):
        heft({"a": (operator.add, "b", 1), "b": (operator.add, "a", 1)}, ["a"])
    with pytest.raises(TaskError, match="^task 'a' failed: ZeroDivisionError"):
        heft({"a": (operator.truediv, 1, 0)}, ["a"])


def test_repr_names_the_options():
    assert repr(dlbkit.dask.scheduler(workers=3, balancer="cpop")).startswith(
        "dlbkit.dask.scheduler(balancer='cpop', backend='local', workers=3, seed=0")
