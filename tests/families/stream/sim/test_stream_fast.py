"""The stream engine's specialised loop (``dlbkit.families.stream.sim._fast``) against the kernel path: the same
placements (the balancer's every answer), the same completion of every job, queue maxima, statistics and
counts, bit for bit; on Poisson streams, on integer traces full of exact ties, and with a tolerance
large enough that many events share an instant; and the conditions under which it runs."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dlbkit import ConfigError
from dlbkit.families.stream.balancers.power_of_d import PowerOfD
from dlbkit.model import Network, Node, Platform
from dlbkit.model.availability import Constant
from dlbkit.families.stream.model.workload import Demand, Stream
from dlbkit.families.stream.sim import _fast as _stream_fast
from dlbkit.families.stream.sim import engine as stream_engine
from dlbkit.families.stream.sim.engine import simulate_stream

from support.profiles import examples


class Recorded(PowerOfD):
    """Power of d that keeps its answers (the per-job placements, which record=False does not trace)."""

    name = "power-of-d"

    def start(self, view, rng=None):
        super().start(view, rng)
        self.answers = []

    def place(self, view):
        j = super().place(view)
        self.answers.append(j)
        return j


def run_both(monkeypatch, platform, workload, *, d=2, replace=True, seed=0, tol=None, **kw):
    """The fast path's and the kernel path's traces and placements, after checking each took its path."""
    if tol is not None:
        monkeypatch.setattr(stream_engine, "SIMULTANEITY_TOLERANCE", tol)
    ran = []
    loop = _stream_fast._loop

    def counted(*a):
        out = loop(*a)
        ran.append(out.ties)
        return out

    monkeypatch.setattr(_stream_fast, "_loop", counted)
    fb = Recorded(d=d, replace=replace)
    fast = simulate_stream(platform, workload, fb, seed=seed, samples=0, record=False, **kw)
    monkeypatch.setattr(_stream_fast, "eligible", lambda *a, **k: "forced")
    kb = Recorded(d=d, replace=replace)
    kern = simulate_stream(platform, workload, kb, seed=seed, samples=0, record=False, **kw)
    monkeypatch.undo()
    assert kern.meta["path"] == "kernel (forced)"
    return fast, kern, fb.answers, kb.answers, ran


def assert_same(fast, kern, fa, ka):
    assert fa == ka  # every placement
    assert set(fast.series) == set(kern.series)
    for k in kern.series:
        assert np.array_equal(np.asarray(fast.series[k]), np.asarray(kern.series[k]), equal_nan=True), k
    mf = {k: v for k, v in fast.meta.items() if k != "path"}
    mk = {k: v for k, v in kern.meta.items() if k != "path"}
    assert repr(mf) == repr(mk)  # repr: nan == nan, and -0.0 vs 0.0 would show
    for a in ("events", "end_time", "messages", "bytes", "total_work", "max_item", "info_messages"):
        assert repr(getattr(fast, a)) == repr(getattr(kern, a)), a


@pytest.mark.parametrize("n,rho,d,replace,jobs,seed", [
    (1000, 0.9, 2, True, 20_000, 1), (1000, 0.9, 2, False, 20_000, 2), (100, 0.7, 3, True, 20_000, 3),
    (50, 0.95, 1, True, 20_000, 4), (10, 0.5, 2, False, 20_000, 5), (3, 0.99, 2, True, 20_000, 6),
    (1, 0.8, 1, True, 5_000, 7), (7, 0.3, 7, False, 5_000, 8)])
def test_the_fast_loop_gives_the_kernel_paths_trace(monkeypatch, n, rho, d, replace, jobs, seed):
    w = Stream(rates=rho, jobs=jobs)
    fast, kern, fa, ka, ran = run_both(monkeypatch, n, w, d=d, replace=replace, seed=seed)
    assert fast.meta["path"] == "fast" and ran
    assert fast.events == 2 * jobs
    assert_same(fast, kern, fa, ka)


def test_many_near_ties_are_run_in_the_kernels_order(monkeypatch):
    # a tolerance of 0.01 s at ~90 events per second: about one event in ten shares an instant
    w = Stream(rates=0.9, jobs=4000)
    fast, kern, fa, ka, ran = run_both(monkeypatch, 50, w, seed=11, tol=0.01)
    assert fast.meta["path"] == "fast" and ran[0] > 100  # the tie resolver ran, and the loop kept going
    assert_same(fast, kern, fa, ka)


@pytest.mark.parametrize("chunk", [1, 7, 1000])
def test_the_loop_reads_the_arrivals_in_blocks_without_changing_anything(monkeypatch, chunk):
    """The loop reads the arrivals' arrays CHUNK jobs at a time (memory: no Python object per job);
    with blocks of 1, 7 and 1000 jobs and many near ties (instants that straddle a block's end) the
    trace is still the kernel path's, bit for bit."""
    monkeypatch.setattr(_stream_fast, "CHUNK", chunk)
    fast, kern, fa, ka, ran = run_both(monkeypatch, 50, Stream(rates=0.9, jobs=2500), seed=11, tol=0.01)
    assert fast.meta["path"] == "fast" and ran[0] > 50
    assert_same(fast, kern, fa, ka)


def test_exact_ties_of_an_integer_trace(monkeypatch):
    rng = np.random.default_rng(5)
    t = np.cumsum(rng.integers(0, 2, 400))
    rows = [(float(x), int(rng.integers(0, 4)), float(rng.integers(1, 4)), 1) for x in t]
    w = Stream(trace=rows)
    fast, kern, fa, ka, ran = run_both(monkeypatch, 4, w, seed=3)
    assert_same(fast, kern, fa, ka)
    # equal departure times on two nodes: the loop cannot tell their kernel order, so the engine
    # started again on the kernel (and said so)
    assert fast.meta["path"] == "kernel (a tie the fast loop cannot order)"


def test_a_tie_with_an_arrival_in_the_past_of_the_instant(monkeypatch):
    # arrival at 1.0, its task done at 2.0; arrival at 2.0 + 1e-10 (one instant with the departure
    # at the engine's tolerance): the departure was scheduled at 1.0, after the arrival (scheduled
    # at 1.0 too, by the first arrival, but earlier): the arrival runs first and the task waits
    rows = [(1.0, 0, 1.0), (2.0 + 1e-10, 0, 1.0), (5.0, 0, 1.0)]
    fast, kern, fa, ka, ran = run_both(monkeypatch, 1, Stream(trace=rows), d=1)
    assert_same(fast, kern, fa, ka)


@settings(max_examples=examples(60), deadline=None)
@given(n=st.integers(1, 6), rho=st.floats(0.1, 1.5), d=st.integers(1, 3), replace=st.booleans(),
       jobs=st.integers(1, 150), seed=st.integers(0, 2**16), tol=st.sampled_from([None, 1e-3, 0.05, 0.5]),
       kind=st.sampled_from(["exponential", "deterministic"]))
def test_property_fast_equals_kernel_on_small_random_runs(n, rho, d, replace, jobs, seed, tol, kind):
    if not replace and d > n:
        d = n
    w = Stream(rates=rho, jobs=jobs, demand=Demand(kind, mean=1.0))
    mp = pytest.MonkeyPatch()
    try:
        fast, kern, fa, ka, ran = run_both(mp, n, w, d=d, replace=replace, seed=seed, tol=tol)
    finally:
        mp.undo()
    assert fast.meta["path"] == "fast" or fast.meta["path"] == "kernel (a tie the fast loop cannot order)"
    assert_same(fast, kern, fa, ka)
    assert fast.events == 2 * jobs and len(fa) == jobs


def test_a_bad_answer_is_the_same_error_on_both_paths(monkeypatch):
    class Bad(PowerOfD):
        name = "power-of-d"

        def place(self, view):
            return view.n_nodes  # not a node

    w = Stream(rates=0.5, jobs=20)
    with pytest.raises(ConfigError, match=r"the answer of power-of-d.place"):
        simulate_stream(4, w, Bad(), samples=0, record=False)
    monkeypatch.setattr(_stream_fast, "eligible", lambda *a, **k: "forced")
    with pytest.raises(ConfigError, match=r"the answer of power-of-d.place"):
        simulate_stream(4, w, Bad(), samples=0, record=False)


def _path(platform=8, workload=None, **kw):
    w = workload or Stream(rates=0.5, jobs=50)
    kw.setdefault("samples", 0)
    kw.setdefault("record", False)
    return simulate_stream(platform, w, PowerOfD(), seed=1, **kw).meta["path"]


def test_the_engine_takes_the_fast_loop_only_where_it_applies():
    assert _path() == "fast"
    assert _path(warmup=0.5, batch_update=False) == "fast"
    assert _path(samples=3) == "kernel (samples=3)"
    assert _path(record=True) == "kernel (record=True)"
    assert _path(record_decisions=True) == "kernel (record_decisions=True)"
    assert _path(inline=False) == "kernel (inline=False)"
    assert _path(info="gossip").startswith("kernel (an information model")
    assert _path(task_bytes=10.0).startswith("kernel (") and "transfer" in _path(task_bytes=10.0)
    assert _path(workload=Stream(rates=0.5, jobs=50, width=2)) == "kernel (a job of more than one task)"
    two = Platform([Node(f"n{i}", cores=1 + (i == 0)) for i in range(3)], Network(latency=0.0, bandwidth=1.0))
    assert _path(two) == "kernel (a node with more than one slot)"
    fast = Platform([Node(f"n{i}", speed=1.0 + (i == 0)) for i in range(3)], Network(latency=0.0, bandwidth=1.0))
    assert _path(fast) == "kernel (a node whose rate is not 1)"
    # rate 1 from nominal speed 2 at availability 0.5: the loop's job ideal time assumes speed 1
    half = Platform([Node(f"n{i}", speed=1.0 + (i == 0), availability=Constant(1.0 - 0.5 * (i == 0))) for i in range(3)],
                    Network(latency=0.0, bandwidth=1.0))
    assert _path(half) == "kernel (a node whose nominal speed is not 1)"
    unit = Platform([Node(f"n{i}") for i in range(3)], Network(latency=0.0, bandwidth=1.0))
    assert _path(unit) == "fast"
    # initial loads are the workload's (not an engine option): the loop does not model them
    assert _path(workload=Stream(rates=0.5, jobs=50, initial=[2] + [0] * 7)) == "kernel (initial loads)"
    assert _path(service="ps") == "kernel (service='ps' (an option the fast loop does not implement))"


def test_an_option_the_loop_does_not_know_runs_on_the_kernel_unless_at_its_default():
    def engine(platform, workload, balancer, *, samples=0, service="fifo", initial=None):
        """An engine with two options added after the fast loop was written."""

    base = {"platform": 4, "workload": None, "balancer": None, "samples": 0}
    ok = dict(exact=True, slots=[1] * 4, rates=[1.0] * 4, speeds=[1.0] * 4, widths=np.ones(3, dtype=np.int64),
              demands=np.ones(3), zero_transfer=True)
    assert _stream_fast.eligible(engine, {**base, "service": "fifo", "initial": None}, **ok) is None
    why = _stream_fast.eligible(engine, {**base, "service": "ps", "initial": None}, **ok)
    assert why == "service='ps' (an option the fast loop does not implement)"
    why = _stream_fast.eligible(engine, {**base, "service": "fifo", "initial": [1, 0, 0, 0]}, **ok)
    assert why.startswith("initial=[1, 0, 0, 0]")


def test_the_supermarket_bench_runs_the_fast_loop_and_its_queue_is_the_theory():
    # N = 200 servers, ρ = 0.9, d = 2: Σ_i λ^(2^i − 1) = 2.3527 (Mitzenmacher's limit, N → ∞);
    # the finite system sits slightly above it; the bench's figures are the trace's
    w = Stream(rates=0.9, jobs=60_000)
    tr = simulate_stream(200, w, PowerOfD(d=2), seed=4, samples=0, record=False)
    assert tr.meta["path"] == "fast"
    theory = sum(0.9 ** (2 ** i - 1) for i in range(1, 30))
    assert math.isclose(theory, 2.3527, abs_tol=1e-4)
    assert abs(tr.meta["queue_mean"] - theory) < 0.1


@pytest.mark.parametrize("n,replace", [(2, False), (3, False), (1000, False), (1, True), (5, True), (1000, True)])
def test_power_of_two_inlined_equals_the_general_rule(n, replace):
    # the inlined d = 2 cases of PowerOfD.place against Draws.sample + the least rule, on one stream
    from dlbkit.families.stream.balancers._draw import Draws, least
    from dlbkit.families.stream.model.view import StreamView

    rng = np.random.default_rng(n)
    view = StreamView(n)
    b = PowerOfD(d=2, replace=replace)
    b.start(view, np.random.default_rng(42))
    ref = Draws(np.random.default_rng(42))
    ties = 0
    for _ in range(12_000):  # about three blocks of draws: the refills in the middle of a decision too
        view.queue[:] = rng.integers(0, 3, n).tolist()
        cands = ref.sample(list(range(n)), 2, replace)
        want = least(cands, lambda c: view.queue[c], ref)
        ties += len(cands) == 2 and cands[0] != cands[1] and view.queue[cands[0]] == view.queue[cands[1]]
        assert b.place(view) == want
    assert n == 1 or ties > 100


class NumpyAnswers(PowerOfD):
    """Power of d whose answer is a numpy integer (accepted, as decide.place accepts it), counting how
    often it is asked."""

    name = "power-of-d"

    def start(self, view, rng=None):
        super().start(view, rng)
        self.asked = 0

    def place(self, view):
        self.asked += 1
        return np.int64(super().place(view))


def test_a_numpy_answer_is_checked_not_asked_for_again(monkeypatch):
    """The inlined decision in the kernel path, the fast loop and its tie resolver each ask place() once
    per job even when the answer is not a plain int; inline on and off give the same trace."""
    w = Stream(rates=0.9, jobs=3000)
    ran = []
    loop = _stream_fast._loop

    def counted(*a):
        out = loop(*a)
        ran.append(out.ties)
        return out

    monkeypatch.setattr(stream_engine, "SIMULTANEITY_TOLERANCE", 0.01)  # many ties: the resolver runs
    monkeypatch.setattr(_stream_fast, "_loop", counted)
    fb = NumpyAnswers(d=2)
    fast = simulate_stream(50, w, fb, seed=11, samples=0, record=False)
    assert fast.meta["path"] == "fast" and ran[0] > 100 and fb.asked == 3000
    monkeypatch.undo()
    traces = []
    for inline in (True, False):
        b = NumpyAnswers(d=2)
        traces.append(simulate_stream(50, w, b, seed=11, inline=inline))
        assert b.asked == 3000
    a, b = traces
    assert a.meta["path"] == b.meta["path"] and a.meta["path"] != "fast"
    for col in ("node", "t_ask", "t_start", "t_end"):
        assert getattr(a, col) == getattr(b, col)
    assert repr(a.meta) == repr(b.meta)


def test_a_bad_answer_already_given_is_refused_as_decide_place_refuses_it():
    class Out(PowerOfD):
        name = "power-of-d"

        def place(self, view):
            return np.int64(view.n_nodes)

    for inline in (True, False):
        with pytest.raises(ConfigError, match=r"the answer of power-of-d\.place.*a node in \[0, 4\]"):
            simulate_stream(5, Stream(rates=0.5, jobs=10), Out(d=2), seed=0, inline=inline)
