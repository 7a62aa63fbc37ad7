"""The job-stream family's facts for ``dlbkit describe`` (dlbkit.families.stream.face.describe): its declared
files, and a property of the totals on random recorded streams."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from support.profiles import examples

from dlbkit.families.stream.face.describe import FILES, stream_facts
from dlbkit.families.stream.face.family import FAMILY
from dlbkit.families.stream.model.workload import Stream


def test_the_family_declares_its_files():
    assert FAMILY.files == FILES and [k.suffixes for k in FILES] == [(".swf",), (".csv",)]


def test_two_jobs_worked_by_hand():
    """(1 s, node 0, demand 2, width 3) and (5 s, node 2, demand 4): tasks 4, work 6 + 4 = 10, span 4 s, load
    10 / 4 = 2.5, per processor of 5: 0.5; widest 3, origins 2."""
    f = {x.key: x.value for x in stream_facts(Stream(trace=[(1.0, 0, 2.0, 3), (5.0, 2, 4.0, 1)]), 5)}
    assert (f["jobs"], f["tasks"], f["origins"], f["span"], f["total_work"], f["offered_load"],
            f["offered_load_per_processor"], f["widest_job"]) == (2, 4, 2, 4.0, 10.0, 2.5, 0.5, 3)


rows = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 3), st.integers(1, 9), st.integers(1, 4)),
                min_size=1, max_size=12)


@settings(max_examples=examples(100), deadline=None)
@given(rows)
def test_the_load_times_the_span_is_the_work(raw):
    """Integer times, demands and widths: the work is exactly Σ width × demand, the offered load times the span
    gives it back (none when every job arrives at once), and the widest job is between 1 and the tasks."""
    trace = sorted((float(t), o, float(d), w) for t, o, d, w in raw)
    f = {x.key: x.value for x in stream_facts(Stream(trace=trace))}
    assert f["total_work"] == sum(d * w for _, _, d, w in trace)
    assert f["span"] == trace[-1][0] - trace[0][0]
    if f["span"] > 0:
        assert math.isclose(f["offered_load"] * f["span"], f["total_work"], rel_tol=1e-12)
    else:
        assert f["offered_load"] is None
    assert 1 <= f["widest_job"] <= f["tasks"] == sum(w for *_, w in trace) and f["jobs"] == len(trace)
