"""Streams read from Standard Workload Format logs (the Parallel Workloads Archive's format): a small log
whose counts, arrival times and demands are worked by hand; every bad input one ConfigError naming the
file, the line and the field; the command line; a property over generated logs."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dlbkit
from dlbkit import ConfigError, Node, Platform
from dlbkit.face.cli import main
from dlbkit.families.stream.face.family import check_fit, describe
from dlbkit.families.stream.model.swf import SwfLog
from dlbkit.families.stream.model.workload import Stream, stream_from_dict

HEADER = """; Version: 2.2
; MaxJobs: 6
; MaxProcs: 8
; MaxNodes: 4
; UnixStartTime: 1000
; Note: free text is ignored
"""
#          job submit wait run alloc cpu mem req reqtime reqmem status user group exe queue part prec think
JOBS = ["1   10   0  100   2  -1 -1   2  200 -1   1   1 1 -1 1 1 -1 -1",   # line 7: completed, 2 × 100
        "2   15   5   50  -1  -1 -1   4  100 -1   1   1 1 -1 1 1 -1 -1",   # line 8: completed, requested 4 × 50
        "3   20   0   30   1  -1 -1   1   60 -1   0   2 1 -1 1 1 -1 -1",   # line 9: failed, 1 × 30
        "4   40   0    0   1  -1 -1   1   60 -1   1   2 1 -1 1 1 -1 -1",   # line 10: completed, run 0: no work
        "5   50   0   10   8  -1 -1   8   60 -1   5   3 1 -1 1 1 -1 -1",   # line 11: cancelled, 8 × 10
        "6   70   0   -1   2  -1 -1   2   60 -1   1   3 1 -1 1 1 -1 -1"]   # line 12: completed, run unknown


def write(tmp_path, jobs=JOBS, header=HEADER, name="log.swf"):
    f = tmp_path / name
    f.write_text(header + "\n".join(jobs) + "\n")
    return f


def rows(s):
    return [(t, o, d, w) for t, o, d, w in s.trace]


def test_the_hand_worked_log(tmp_path):
    f = write(tmp_path)
    s = Stream.read(f)  # completed jobs: 1, 2 (4 and 6 have no work)
    assert rows(s) == [(0.0, 0, 100.0, 2), (5.0, 0, 50.0, 4)]
    assert s.source == SwfLog(str(f), max_procs=8, max_nodes=4, max_jobs=6, max_records=None, unix_start_time=1000,
                              records=6, kept=2, dropped=2, width="processors", lines=(7, 8))
    assert s.name == "log"
    assert rows(Stream.read(f, statuses=(1, 0))) == [(0.0, 0, 100.0, 2), (5.0, 0, 50.0, 4), (10.0, 0, 30.0, 1)]
    every = Stream.read(f, statuses=None)
    assert rows(every) == [(0.0, 0, 100.0, 2), (5.0, 0, 50.0, 4), (10.0, 0, 30.0, 1), (40.0, 0, 10.0, 8)]
    assert sum(d * w for _, _, d, w in every.trace) == 200 + 200 + 30 + 80
    assert every.source.dropped == 2 and Stream.read(f, statuses=5).source.kept == 1
    # the window [15, 60) keeps jobs 2, 3, 5 (4 has no work): shifted so job 2 arrives at 0
    assert [r[0] for r in Stream.read(f, statuses=None, start=15, end=60).trace] == [0.0, 5.0, 35.0]
    assert [r[0] for r in Stream.read(f, statuses=None, load_scale=2).trace] == [0.0, 2.5, 5.0, 20.0]
    one = Stream.read(f, statuses=None, width="one")
    assert [(d, w) for _, _, d, w in one.trace] == [(200.0, 1), (200.0, 1), (30.0, 1), (80.0, 1)]
    assert [r[1] for r in Stream.read(f, statuses=None, origin=[0, 1]).trace] == [0, 1, 0, 1]
    assert {r[1] for r in Stream.read(f, origin="b").trace} == {"b"}


def test_the_arrivals_and_a_run(tmp_path):
    s = Stream.read(write(tmp_path))
    a = s.arrivals(["a", "b", "c"], np.random.default_rng(0))
    assert a.width.tolist() == [2, 4] and a.demand.tolist() == [100.0] * 2 + [50.0] * 4
    p = Platform([Node("a", cores=2), Node("b"), Node("c")])
    r = dlbkit.simulate(p, s, "nezha", seed=1)
    assert r.trace.total_work == pytest.approx(400.0)


def test_a_job_wider_than_the_platform_names_its_line(tmp_path):
    p = Platform([Node("a", cores=2), Node("b"), Node("c")])  # 4 slots
    check_fit(p, Stream.read(write(tmp_path)))  # widths 2 and 4 fit
    with pytest.raises(ConfigError, match=r"line 11 \(processors\) must be at most the platform's 4 slots"):
        check_fit(p, Stream.read(write(tmp_path), statuses=None))
    check_fit(p, Stream.read(write(tmp_path), statuses=None, width="one"))
    with pytest.raises(ConfigError, match="workload.origin must be a node of the platform"):
        check_fit(p, Stream.read(write(tmp_path), origin=[0, "zz"]))
    # the Python API checks as an experiment file does, before the run
    with pytest.raises(ConfigError, match=r"line 11 \(processors\) must be at most the platform's 4 slots"):
        dlbkit.simulate(p, Stream.read(write(tmp_path), statuses=None), "nezha")


def test_the_description_says_the_log_and_its_header(tmp_path):
    assert describe(Stream.read(write(tmp_path))) == ("2 jobs of the SWF log log.swf (width 'processors', MaxProcs 8; "
                                                      "2 left out for no work)")


def _bad(jobs=JOBS, header=HEADER):
    return header + "\n".join(jobs) + "\n"


BAD = {  # name -> (file text, the field named, keywords)
    "17 fields": (_bad(JOBS[:2] + [JOBS[2].rsplit(None, 1)[0]] + JOBS[3:]), r"line 9 must be 18 whitespace", {}),
    "a non-number": (_bad([JOBS[0], JOBS[1].replace(" 50 ", " abc ")] + JOBS[2:]), r"line 8 field 4 \(run time\)", {}),
    "not finite": (_bad([JOBS[0].replace(" 10 ", " nan ", 1)] + JOBS[1:]), r"line 7 field 2 \(submit time\)", {}),
    "negative run time": (_bad([JOBS[0].replace(" 100 ", " -5 ")] + JOBS[1:]), r"line 7 field 4 \(run time\)", {}),
    "fractional processors": (_bad([JOBS[0].replace(" 2 ", " 1.5 ", 1)] + JOBS[1:]),
                              r"line 7 field 5 \(allocated processors\)", {}),
    "processors beyond 2^53": (_bad([JOBS[0].replace(" 2 ", " 99999999999999999999999 ", 1)] + JOBS[1:]),
                               r"line 7 field 5 \(allocated processors\) must be a count of processors at most 2\^53",
                               {"width": "one"}),
    "a header number": (_bad(header=HEADER.replace("MaxProcs: 8", "MaxProcs: many")),
                        r"line 3 \(header MaxProcs\) must be an integer", {}),
    "empty after filtering": (_bad(), r"log.swf must be a log with at least one job of status in 4", {"statuses": [4]}),
    "no jobs": (HEADER, r"log.swf must be a log with at least one job", {}),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_input_is_one_error_naming_the_file_line_and_field(tmp_path, case):
    text, field, kw = BAD[case]
    f = tmp_path / "log.swf"
    f.write_text(text)
    with pytest.raises(ConfigError, match=field) as e:
        Stream.read(f, **kw)
    assert str(f) in str(e.value) and "\n" not in str(e.value)


def test_bytes_that_are_not_utf8_name_the_line_and_field(tmp_path):
    f = tmp_path / "log.swf"
    f.write_bytes(_bad().encode().replace(b"2   15 ", b"2   1\xff5 "))
    with pytest.raises(ConfigError, match=r"line 8 field 2 \(submit time\) must be UTF-8 text"):
        Stream.read(f)


@pytest.mark.parametrize("kw, field", [({"statuses": "1"}, "workload.statuses"), ({"load_scale": 0}, "workload.load_scale"),
                                       ({"start": 10, "end": 5}, "workload.end"), ({"width": "nodes"}, "workload.width"),
                                       ({"origin": [0, -1]}, r"workload.origin\[1\]"), ({"origin": []}, "workload.origin")])
def test_bad_keywords_name_the_keyword(tmp_path, kw, field):
    with pytest.raises(ConfigError, match=field):
        Stream.read(write(tmp_path), **kw)


def test_the_workload_table(tmp_path):
    write(tmp_path)
    s = stream_from_dict({"kind": "stream", "swf": "log.swf", "statuses": "any", "width": "one", "origin": [0, 1]},
                         base_dir=tmp_path)
    assert len(s.trace) == 4 and s.trace[1][1] == 1
    with pytest.raises(ConfigError, match="workload.rates must be absent with swf"):
        stream_from_dict({"swf": "log.swf", "rates": 1.0}, base_dir=tmp_path)
    with pytest.raises(ConfigError, match="workload.statuses must be absent without swf"):
        stream_from_dict({"rates": 1.0, "jobs": 3, "statuses": [1]})
    with pytest.raises(ConfigError, match="grid.workload.load_scale"):
        stream_from_dict({"swf": "log.swf", "load_scale": -1}, "grid.workload", base_dir=tmp_path)


EXPERIMENT = """name = "swf"
repetitions = 1
[platform]
nodes = [{name = "a", speed = 1.0, cores = 2}, {name = "b", speed = 1.0}, {name = "c", speed = 1.0}]
[workload]
kind = "stream"
swf = "log.swf"
%s
[engine]
samples = 10
[[balancers]]
name = "nezha"
"""


def test_the_command_line(tmp_path, capsys):
    d = tmp_path / "exp"
    d.mkdir()
    write(d)
    (d / "e.toml").write_text(EXPERIMENT % 'origin = ["a", "b"]')
    assert main(["simulate", str(d / "e.toml"), "--out", str(tmp_path / "o")]) == 0
    assert (tmp_path / "o" / "results.csv").read_text().count("\n") == 2 and (tmp_path / "o" / "summary.csv").is_file()
    capsys.readouterr()
    (d / "e.toml").write_text(EXPERIMENT % 'statuses = "any"')  # job 5 needs 8 slots of 4
    assert main(["simulate", str(d / "e.toml"), "--out", str(tmp_path / "o2")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "line 11 (processors)" in err
    (d / "log.swf").write_text(_bad([JOBS[0].replace(" 100 ", " -5 ")] + JOBS[1:]))
    (d / "e.toml").write_text(EXPERIMENT % "")
    assert main(["simulate", str(d / "e.toml"), "--out", str(tmp_path / "o3")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "line 7 field 4 (run time)" in err and "log.swf" in err


job = st.tuples(st.integers(0, 50),                       # inter-submit gap
                st.sampled_from([-1, 0, 1, 7, 3600]),      # run time
                st.sampled_from([-1, 0, 1, 2, 5]),         # allocated processors
                st.sampled_from([-1, 1, 3]),               # requested processors
                st.sampled_from([-1, 0, 1, 5]))            # status


@settings(max_examples=60, deadline=None)
@given(st.lists(job, min_size=1, max_size=40), st.sampled_from(["processors", "one"]),
       st.sampled_from([None, (1,), (0, 5)]))
def test_any_valid_log_keeps_each_job_once_in_order_with_its_work(tmp_path_factory, jobs, width, statuses):
    t, lines = 0, []
    expect = {}  # file line -> work
    for k, (gap, run, alloc, req, status) in enumerate(jobs):
        t += gap
        lines.append(f"{k + 1} {t} -1 {run} {alloc} -1 -1 {req} -1 -1 {status} 1 1 -1 1 1 -1 -1")
        procs = alloc if alloc > 0 else req
        if run > 0 and procs > 0 and (statuses is None or status in statuses):
            expect[len(HEADER.splitlines()) + k + 1] = run * procs
    f = write(tmp_path_factory.mktemp("swf"), lines)
    if not expect:
        with pytest.raises(ConfigError, match="at least one job"):
            Stream.read(f, statuses=statuses, width=width)
        return
    s = Stream.read(f, statuses=statuses, width=width)
    assert sorted(s.source.lines) == sorted(expect) and len(s.trace) == len(expect)
    times = [r[0] for r in s.trace]
    assert times[0] == 0 and all(a <= b for a, b in zip(times, times[1:]))
    assert math.isclose(sum(d * w for _, _, d, w in s.trace), sum(expect.values()))
    assert all(w == 1 for *_, w in s.trace) or width == "processors"
