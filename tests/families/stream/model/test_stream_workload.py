"""The Stream workload: validated constructors and the [workload] parser name the field; an experiment
file runs the family; bad input on the command line is one line and exit status 2."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from support.profiles import examples

from dlbkit import ConfigError
from dlbkit.face.cli import main
from dlbkit.families.stream.model import workload
from dlbkit.families.stream.model.workload import Burst, Demand, Stream, read_arrivals_csv, stream_from_dict


@pytest.mark.parametrize("kwargs, field", [
    ({"rates": 0.0, "jobs": 5}, "workload.rates"),
    ({"rates": -1.0, "jobs": 5}, "workload.rates"),
    ({"rates": [1.0, -0.5], "jobs": 5}, r"workload.rates\[1\]"),
    ({"rates": [0.0, 0.0], "jobs": 5}, "workload.rates"),
    ({"rates": 1.0}, "workload.jobs"),
    ({"rates": 1.0, "jobs": 0}, "workload.jobs"),
    ({"rates": 1.0, "jobs": 5, "width": 0}, "workload.width"),
    ({"trace": [(1.0, 0, 1.0), (0.5, 1, 1.0)]}, r"workload.trace\[1\].time"),
    ({"trace": [(0.0, 0, -1.0)]}, r"workload.trace\[0\].demand"),
    ({"trace": [(0.0, 0, 1.0)], "rates": 1.0}, "workload.rates"),
    ({"rates": 1.0, "jobs": 5, "bursts": (Burst(0, 10, 2), Burst(5, 20, 2))}, "workload.bursts"),
])
def test_bad_stream_values_name_the_field(kwargs, field):
    with pytest.raises(ConfigError, match=field):
        Stream(**kwargs)


def test_bad_demand_and_burst_values_name_the_field():
    with pytest.raises(ConfigError, match="demand.kind"):
        Demand("pareto")
    with pytest.raises(ConfigError, match="demand.mean"):
        Demand(mean=0.0)
    with pytest.raises(ConfigError, match="demand.values"):
        Demand("recorded")
    with pytest.raises(ConfigError, match="bursts.end"):
        Burst(5.0, 5.0, 2.0)
    with pytest.raises(ConfigError, match="bursts.factor"):
        Burst(0.0, 5.0, 0.0)


def test_an_unknown_origin_or_a_rate_list_of_the_wrong_length_is_refused_against_the_platform():
    with pytest.raises(ConfigError, match=r"workload.trace\[1\].origin must be a node of the platform"):
        Stream(trace=[(0.0, "a", 1.0), (1.0, "zz", 1.0)]).check_fit(["a", "b"])
    with pytest.raises(ConfigError, match=r"workload.trace\[0\].origin"):
        Stream(trace=[(0.0, 2, 1.0)]).check_fit(["a", "b"])
    with pytest.raises(ConfigError, match="workload.rates must be one rate per platform node"):
        Stream(rates=[1.0, 1.0, 1.0], jobs=3).check_fit(["a", "b"])


def test_demands_have_the_stated_means():
    rng = np.random.default_rng(0)
    for d in (Demand("exponential", 2.0), Demand("deterministic", 2.0), Demand("lognormal", 2.0, 0.8),
              Demand("recorded", values=(1.0, 3.0))):
        assert d.draw(rng, 200_000).mean() == pytest.approx(2.0, rel=0.02)


def test_per_origin_rates_set_the_share_of_arrivals():
    a = Stream(rates=[1.0, 3.0, 0.0], jobs=40_000).arrivals(["a", "b", "c"], np.random.default_rng(1))
    share = np.bincount(a.origin, minlength=3) / a.n_jobs
    assert share == pytest.approx([0.25, 0.75, 0.0], abs=0.01)
    assert a.time[-1] / a.n_jobs == pytest.approx(1 / 4, rel=0.02) and np.all(np.diff(a.time) >= 0)


def test_the_parser_and_the_csv_reader(tmp_path):
    w = stream_from_dict({"kind": "stream", "rates": 0.5, "jobs": 10, "width": 2,
                          "demand": {"kind": "lognormal", "mean": 2.0, "sigma": 0.5}, "bursts": [[1, 2, 3]]})
    assert w.width == 2 and w.demand.kind == "lognormal" and w.bursts == (Burst(1, 2, 3),)
    with pytest.raises(ConfigError, match="grid.workload.demand.mean"):
        stream_from_dict({"rates": 0.5, "jobs": 10, "demand": {"mean": -1}}, "grid.workload")
    with pytest.raises(ConfigError, match="grid.workload.jobs"):
        stream_from_dict({"rates": 0.5}, "grid.workload")
    with pytest.raises(ConfigError, match="workload.colour"):
        stream_from_dict({"rates": 0.5, "jobs": 1, "colour": 1})
    f = tmp_path / "a.csv"
    f.write_text("time,origin,demand,width\n0.0,0,1.5,1\n0.2,b,2.0,3\n")
    assert read_arrivals_csv(f) == ((0.0, 0, 1.5, 1), (0.2, "b", 2.0, 3))
    f.write_text("time,origin,demand\n1.0,0,1.5\n0.5,0,2.0\n")
    with pytest.raises(ConfigError, match=r"workload.trace\[1\].time"):
        stream_from_dict({"trace": str(f)})
    f.write_text("time,origin,demand\n\n")  # a header and no row: was "got 'tuple'", without the file
    with pytest.raises(ConfigError) as e:
        stream_from_dict({"trace": str(f)})
    assert str(e.value) == (f"workload.trace {f} must be a header and at least one row time,origin,demand[,width]; "
                            "got 'its header and no row'")


EXPERIMENT = """name = "s"
repetitions = 1
[platform]
nodes = [{name = "a", speed = 1.0, cores = 2}, {name = "b", speed = 2.0}, {name = "c", speed = 1.0}]
[workload]
kind = "stream"
%s
[engine]
samples = 10
[[balancers]]
name = "nezha"
[[balancers]]
name = "power-of-d"
info = {model = "gossip", period = 0.5}
"""


def test_an_experiment_file_runs_the_stream_family(tmp_path, capsys):
    p = tmp_path / "e.toml"
    p.write_text(EXPERIMENT % "rates = 0.3\njobs = 200")
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "results.csv").read_text().count("\n") == 3


@pytest.mark.parametrize("workload, field", [("rates = -1.0\njobs = 10", "workload.rates"),
                                             ("rates = 1.0\njobs = 10\nwidth = 0", "workload.width"),
                                             ('trace = [[1.0, 0, 1.0], [0.5, 0, 1.0]]', "workload.trace[1].time"),
                                             ('trace = [[0.0, "zz", 1.0]]', "workload.trace[0].origin")])
def test_bad_stream_input_on_the_command_line_is_one_line_and_exit_2(tmp_path, capsys, workload, field):
    p = tmp_path / "e.toml"
    p.write_text(EXPERIMENT % workload)
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err


def test_an_unknown_info_model_is_one_line_and_exit_2(tmp_path, capsys):
    p = tmp_path / "e.toml"
    p.write_text((EXPERIMENT % "rates = 0.3\njobs = 20").replace('model = "gossip"', 'model = "rumour"'))
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "info.model" in err


CLI_CASES = {  # the Tests section's bad input, each through an experiment file on the command line
    "rate 0": ("rates = 0.0\njobs = 10", "", "workload.rates"),
    "rate < 0 in a list": ("rates = [1.0, 0.0, -1.0]\njobs = 10", "", "workload.rates[2]"),
    "d < 1": ("rates = 1.0\njobs = 10", "params = {d = 0}", "balancers[0].params (parameter 'd' of power-of-d)"),
    "d > n without replacement": ("rates = 1.0\njobs = 10", "params = {d = 4, replace = false}",
                                  "balancers[0].params (parameter 'd' of power-of-d) must be at most the 3 nodes"),
    "unsorted CSV trace": ('trace = "unsorted.csv"', "", "workload.trace[1].time"),
    "CSV trace naming an unknown node": ('trace = "unknown.csv"', "", "workload.trace[1].origin"),
    "unknown info model": ("rates = 1.0\njobs = 10", 'info = {model = "rumour"}', "balancers[0].info.model"),
}


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_every_bad_input_from_the_command_line_is_one_line_and_exit_2(tmp_path, capsys, case):
    workload, balancer, field = CLI_CASES[case]
    (tmp_path / "unsorted.csv").write_text("time,origin,demand\n1.0,a,1.0\n0.5,b,1.0\n")
    (tmp_path / "unknown.csv").write_text("time,origin,demand\n0.0,a,1.0\n0.5,zz,1.0\n")
    p = tmp_path / "e.toml"
    p.write_text(f"""name = "s"
[platform]
nodes = [{{name = "a", speed = 1.0, cores = 2}}, {{name = "b", speed = 2.0}}, {{name = "c", speed = 1.0}}]
[workload]
kind = "stream"
{workload}
[[balancers]]
name = "power-of-d"
{balancer}
""")
    assert main(["simulate", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and field in err, err


def test_d_equal_to_n_without_replacement_and_d_above_n_with_replacement_run(tmp_path):
    """The boundary of the d > n check: d = n without replacement and d > n with it are valid."""
    from dlbkit.face.experiments import Experiment
    for params in ({"d": 3, "replace": False}, {"d": 5, "replace": True}):
        Experiment.from_dict({"platform": {"nodes": [{"name": x, "speed": 1.0} for x in "abc"]},
                              "workload": {"kind": "stream", "rates": 1.0, "jobs": 10},
                              "balancers": [{"name": "power-of-d", "params": params}]})


# --- a recorded trace checked as columns (the fast path) and row by row agree ------------------------
_value = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.just(0), st.just(1e-31),
                   st.just(2 ** 70), st.just(10 ** 400), st.booleans(), st.just("a"))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(_value, _value, _value, _value), min_size=1, max_size=6),
       st.lists(st.tuples(st.floats(0, 10), st.integers(0, 3), st.floats(0.1, 5), st.integers(1, 4)), min_size=1,
                max_size=6))
def test_the_columns_check_accepts_and_returns_what_the_row_by_row_check_does(drawn, good):
    """Rows checked as columns (4-tuples of plain ints and floats) give the same tuples as the row-by-row
    check, and every row the row-by-row check refuses falls back to it (so its error names the first bad row):
    over drawn rows, good ones (sorted) and ones with nan, inf, bools, strings, huge ints, negatives."""
    for rows in (drawn, sorted(good)):  # sorted: a new list, never drawn itself
        try:
            slow = workload._check_trace_rows(rows, "workload.trace")
        except ConfigError as e:
            slow = e
        fast = workload._checked_columns(rows)
        if isinstance(slow, ConfigError):
            assert fast is None
            with pytest.raises(ConfigError, match=re.escape(slow.field)):
                workload._check_trace(rows, "workload.trace")
        else:
            assert fast is not None or rows is drawn  # the plain good rows take the columns' path
            assert fast is None or (fast == slow and [tuple(map(type, r)) for r in fast]
                                    == [tuple(map(type, r)) for r in slow])
            assert workload._check_trace(rows, "workload.trace") == slow
