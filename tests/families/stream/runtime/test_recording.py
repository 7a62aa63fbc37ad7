"""How a job stream's recording is read (``families/stream/runtime/recording.py``): its per-job series are checked
field by field before the trace is built from them."""

from __future__ import annotations

import pytest

import dlbkit
from dlbkit import ConfigError, Network, Node, Platform
from dlbkit.families.stream.model.workload import Stream
from dlbkit.runtime.record import trace_from_dict, trace_to_dict


def _recorded() -> dict:
    """A simulated stream's trace, as a real run's recording (source "local": its job series are checked)."""
    p = Platform([Node(str(i), speed=1.0) for i in range(3)], Network(latency=0.0, bandwidth=1e9))
    d = trace_to_dict(dlbkit.simulate(p, Stream(rates=0.5, jobs=20), "jsq", seed=1).trace)
    d["source"] = "local"
    return d


def test_a_recording_reads_back_with_its_job_series():
    d = _recorded()
    tr = trace_from_dict(d, "x.json")
    assert tr.family == "stream" and len(tr.series["job_time"]) == len(d["series"]["job_time"]) > 0


@pytest.mark.parametrize("bad, field", [([[1.0, 2.0], [3.0]], "series.job_time[0]"), (["soon"], "series.job_time[0]")])
def test_a_malformed_job_series_is_a_config_error_naming_the_field(bad, field):
    """A ragged series was numpy's ValueError ("inhomogeneous shape") once the check ran after the arrays were
    built; it is checked first."""
    d = _recorded()
    d["series"]["job_time"] = bad + d["series"]["job_time"][len(bad):]
    with pytest.raises(ConfigError) as e:
        trace_from_dict(d, "x.json")
    assert field in str(e.value)
