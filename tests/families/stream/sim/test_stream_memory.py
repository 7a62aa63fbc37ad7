"""Memory of the stream engine per job (the defect: ``dlbkit reproduce nezha`` peaked at 14 GB).

Two causes, each checked here without a machine-dependent threshold:

* a run kept ~330 bytes per job in Python lists (a float or int object per item: 32-40 bytes, where
  an array holds 8) even on the fast path, which needs none of them;
* the engine's handlers reach one another through their closure cells, a reference cycle that kept
  all of a run's state alive after it returned, until the cyclic collector's next full pass: four
  long runs in a row piled up.

The bounds are counts of bytes per job measured by tracemalloc (numpy reports its buffers to it), not
timings: what a run must hold is a few 8-byte numbers per job (the arrivals' five arrays, the
completion and ideal times, transient draws), so a per-job bound is a bound on the engine's data
structures, the same on any machine.
"""

from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

from dlbkit.families.stream.balancers import PowerOfD, RandomPlacement
from dlbkit.balancers.registry import make
from dlbkit.model.platform import Node, Platform
from dlbkit.families.stream.model.workload import Stream
from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.families.stream.sim.engine import simulate_stream

J = 100_000


def _traced(fn):
    """(peak bytes during fn(), bytes still held after its result is dropped, with the cyclic
    collector off: what only a reference cycle would keep), after a warm-up call (imports, caches)."""
    fn()
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        path = out.meta["path"]
        peak = tracemalloc.get_traced_memory()[1] - base
        del out
        left = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
        if enabled:
            gc.enable()
    return peak, left, path


# bytes per job at the peak (10^5 jobs), what each path must hold: the arrivals' five arrays (40), the
# trace's completion and ideal times (16), transient draws and the fast loop's block lists (~2.3 MB,
# 23 per job here): measured 111; the kernel path adds its typed per-job state (9 arrays of 8 bytes,
# and np.repeat's temporaries): measured 175. Before the fix: 333 and 361. One more list of Python
# floats per job (40 bytes: a pointer and a float object) would break either bound.
@pytest.mark.full  # scale: memory per job over long streams
@pytest.mark.parametrize("inline,path,bound", [(True, "fast", 150), (False, "kernel (inline=False)", 200)])
def test_a_record_false_run_holds_a_few_numbers_per_job(inline, path, bound):
    """The supermarket case (reproduce nezha's long d = 1 rows) on both paths: the peak per job is a
    few 8-byte numbers (bounds above), and nothing per job outlives the run (before: ~270 bytes per job
    until a full collection)."""
    def run():
        return simulate_stream(1000, Stream(rates=0.9, jobs=J), RandomPlacement(), seed=1, samples=0, record=False,
                               inline=inline)

    peak, left, got = _traced(run)
    assert got == path
    assert peak / J < bound, f"{peak / J:.0f} bytes per job at the peak"
    assert left / J < 2, f"{left / J:.1f} bytes per job left after the run (a reference cycle?)"


@pytest.mark.parametrize("kw", [dict(service="ps"), dict(info={"model": "gossip", "period": 2.0}),
                                dict(record=True), dict(balancer="batch-sampling", late_binding=True)])
def test_no_run_leaves_its_state_to_the_cyclic_collector(kw):
    """Every variant of the kernel path (processor sharing, an information model, recording, late
    binding) frees its state when the caller drops the trace, without a collection."""
    kw = {"record": False, **kw}
    p = Platform([Node(f"n{i}", speed=1 + i % 3, cores=2) for i in range(16)])
    name = kw.pop("balancer", None)
    params = {"late_binding": kw.pop("late_binding")} if "late_binding" in kw else None
    jobs = 5_000

    def run():
        if name:
            b = make(name, params)
            assert b.late_binding is True
        else:
            b = PowerOfD(d=2)
        return simulate_stream(p, Stream(rates=0.3, jobs=jobs, width=2), b, seed=3, samples=0, **kw)

    peak, left, _ = _traced(run)
    # before the fix ~585 bytes per job stayed (every list of the run, and the trace's intervals with
    # record=True); what may stay is per process, not per job (caches: ~17 kB measured)
    assert left / jobs < 20, f"{left / jobs:.1f} bytes per job left after the run (a reference cycle?)"


def test_the_fast_loop_keeps_completions_in_an_array(monkeypatch):
    """The fast loop's per-job result is one float64 array (not a list of Python floats), and the
    trace's per-job series are arrays of 8-byte numbers."""
    seen = []
    loop = _stream_fast._loop

    def spy(*a):
        out = loop(*a)
        seen.append(out.done)
        return out

    monkeypatch.setattr(_stream_fast, "_loop", spy)
    tr = simulate_stream(100, Stream(rates=0.9, jobs=3 * _stream_fast.CHUNK + 5), PowerOfD(d=2), seed=2, samples=0,
                         record=False)
    assert tr.meta["path"] == "fast"
    assert isinstance(seen[0], np.ndarray) and seen[0].dtype == np.float64 and len(seen[0]) == 3 * _stream_fast.CHUNK + 5
    for k in ("job_time", "job_origin", "job_width", "job_first", "job_done", "job_ideal", "demand"):
        a = tr.series[k]
        assert isinstance(a, np.ndarray) and a.dtype.itemsize == 8 and a.dtype != object, k
    assert np.all(tr.series["job_done"] > tr.series["job_time"])  # every block's completions were written
