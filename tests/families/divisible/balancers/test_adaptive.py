"""Adaptive chunking rules (AWF-B/C/D/E, AF, FAC and TAP with estimates) on hand-set measurements.

A test plays the engine: it asks for chunks, and between requests books a worker's finished chunk
in the view exactly as the simulator does (items, chunks, compute time, Σ squared item times,
overhead). Expected numbers are worked by hand (comments).
"""

import pytest

from dlbkit import LoopView, make
from dlbkit.families.divisible.balancers._common import WeightedPerformance


def report(view, w, times, overhead=0.0):
    """Book a finished chunk of worker *w* whose items took *times* seconds each."""
    view.items_done[w] += len(times)
    view.chunks_done[w] += 1
    view.compute_time[w] += sum(times)
    view.sq_item_time[w] += sum(t * t for t in times)
    view.overhead_time[w] += overhead
    view.last_chunk[w] = len(times)
    view.last_time[w] = sum(times)


def ask(b, view, w):
    n = max(1, min(b.chunk(view, w), view.remaining))
    view.remaining -= n
    return n


# --- AWF -------------------------------------------------------------------------------------

def test_awf_b_updates_weights_at_batch_boundaries_only():
    b = make("awf-b")
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    # batch 1, no results: weights = nominal (1, 1), c = ⌈100/4⌉ = 25, batch 50
    assert [ask(b, v, 0), ask(b, v, 1)] == [25, 25]
    # worker 0: 25 items in 50 s (rate 0.5/s). Batch 2 opens: worker 1 has no result, so it is
    # assumed at its nominal speed scaled like worker 0: weights stay (1, 1); c = ⌈50/4⌉ = 13
    report(v, 0, [2.0] * 25)
    assert ask(b, v, 0) == 13
    assert b.weights_ == pytest.approx([1.0, 1.0])
    # worker 1: 25 items in 12.5 s; same batch, weights frozen: 13 more (batch used up, R = 24)
    report(v, 1, [0.5] * 25)
    assert ask(b, v, 1) == 13
    assert b.weights_ == pytest.approx([1.0, 1.0])
    # worker 1's 2nd chunk: 13 items in 13 s. Batch 3 opens: weighted average times
    # π0 = 50/25 = 2;  π1 = (1·12.5 + 2·13)/(1·25 + 2·13) = 38.5/51  → rates 1/2 and 102/77
    # w = 2·r/Σr: w0 = 154/281 = 0.548043, w1 = 408/281 = 1.451957; c = ⌈24/4⌉ = 6, batch 12
    report(v, 1, [1.0] * 13)
    assert ask(b, v, 1) == 9  # round(408/281 · 6 = 8.712)
    assert b.weights_ == pytest.approx([154 / 281, 408 / 281], rel=1e-12)
    # worker 0's 2nd chunk arrives mid-batch: the batch keeps its weights: round(924/281 = 3.29) = 3
    report(v, 0, [2.0] * 13)
    assert ask(b, v, 0) == 3
    assert b.weights_ == pytest.approx([154 / 281, 408 / 281], rel=1e-12)
    assert b.batches_ == 3 and v.remaining == 12


def test_awf_c_updates_weights_before_every_chunk():
    b = make("awf-c")
    v = LoopView(100, 2, [1.0, 3.0])
    b.start(v)
    # no results: weights = nominal speeds normalised to Σ = 2: (0.5, 1.5)
    assert ask(b, v, 0) == 13  # round(0.5·⌈100/4⌉ = 12.5) = 13 (halves up), R = 87
    assert ask(b, v, 1) == 33  # 1.5·⌈87/4⌉ = 1.5·22 = 33, R = 54
    # worker 0: 13 items at 1 s → rate 1; worker 1 unmeasured → 3·(1/1) = 3: weights still (0.5, 1.5)
    report(v, 0, [1.0] * 13)
    assert ask(b, v, 0) == 7  # 0.5·⌈54/4⌉ = 0.5·14 = 7, R = 47
    # worker 1: 33 items at 0.5 s → rate 2; weights 2·(1, 2)/3 = (2/3, 4/3)
    report(v, 1, [0.5] * 33)
    assert ask(b, v, 1) == 16  # 4/3·⌈47/4⌉ = 4/3·12 = 16, R = 31
    assert b.weights_ == pytest.approx([2 / 3, 4 / 3])
    # worker 0's 2nd chunk, 7 items at 1 s: π0 = (13 + 2·7)/(13 + 2·7) = 1 → rate 1, unchanged
    report(v, 0, [1.0] * 7)
    assert ask(b, v, 0) == 5  # round(2/3·⌈31/4⌉ = 16/3 = 5.33) = 5


def test_awf_e_counts_scheduling_overhead_where_awf_c_does_not():
    # the same history; worker 1's chunk also waited 9.5 s for its work (overhead_time)
    results = {}
    for name in ("awf-c", "awf-e"):
        b = make(name)
        v = LoopView(100, 2, [1.0, 1.0])
        b.start(v)
        ask(b, v, 0)  # 25, R = 75
        ask(b, v, 1)  # ⌈75/4⌉ = 19, R = 56
        report(v, 0, [1.0] * 25)
        report(v, 1, [0.5] * 19, overhead=9.5)
        results[name] = (ask(b, v, 1), b.weights_)
    # AWF-C: rates (1, 2) → w1 = 4/3: round(4/3·⌈56/4⌉ = 4/3·14 = 18.67) = 19
    assert results["awf-c"][0] == 19
    assert results["awf-c"][1] == pytest.approx([2 / 3, 4 / 3])
    # AWF-E: worker 1's time is 9.5 + 9.5 = 19 s for 19 items → rate 1, as worker 0: w = (1, 1) → 14
    assert results["awf-e"][0] == 14
    assert results["awf-e"][1] == pytest.approx([1.0, 1.0])


def test_awf_d_counts_scheduling_overhead_where_awf_b_does_not():
    weights = {}
    for name in ("awf-b", "awf-d"):
        b = make(name)
        v = LoopView(100, 2, [1.0, 1.0])
        b.start(v)
        ask(b, v, 0)
        ask(b, v, 1)  # batch 1: 25, 25
        report(v, 0, [1.0] * 25, overhead=25.0)  # 25 s computing + 25 s overhead
        report(v, 1, [1.0] * 25)
        ask(b, v, 0)  # opens batch 2
        weights[name] = b.weights_
    assert weights["awf-b"] == pytest.approx([1.0, 1.0])
    # D: π0 = 50/25 = 2, π1 = 1 → rates (0.5, 1) → w = 2·(1/3, 2/3)
    assert weights["awf-d"] == pytest.approx([2 / 3, 4 / 3])


def test_weighted_performance_weighs_the_kth_chunk_by_k():
    v = LoopView(100, 1, [1.0])
    perf = WeightedPerformance(1, with_overhead=False)
    report(v, 0, [1.0] * 10)  # chunk 1: 10 items, 10 s
    perf.sync(v)
    report(v, 0, [3.0] * 10)  # chunk 2: 10 items, 30 s
    perf.sync(v)
    # π = (1·10 + 2·30)/(1·10 + 2·10) = 70/30 (the plain mean would be 40/20 = 2)
    assert perf.num[0] / perf.den[0] == pytest.approx(70 / 30)
    # two chunks booked at once get their mean index 3.5: +3.5·(10 + 10) s, +3.5·(5 + 5) items
    report(v, 0, [2.0] * 5)
    report(v, 0, [2.0] * 5)
    perf.sync(v)
    assert perf.num[0] == pytest.approx(70 + 3.5 * 20) and perf.den[0] == pytest.approx(30 + 3.5 * 10)


def test_awf_restarts_from_nominal_weights():
    b = make("awf-c")
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    ask(b, v, 0)
    report(v, 0, [4.0] * 25)
    report(v, 1, [1.0] * 5)
    ask(b, v, 1)
    assert b.weights_ != pytest.approx([1.0, 1.0])
    b.start(LoopView(100, 2, [1.0, 1.0]))
    assert b.weights_ == [1.0, 1.0]


# --- AF --------------------------------------------------------------------------------------

def test_af_probes_then_uses_each_workers_mean_and_variance():
    b = make("af")
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    assert [ask(b, v, 0), ask(b, v, 1)] == [2, 2]  # no estimates: probe chunks of 2, R = 96
    # worker 0: items of 0.5 s and 1.5 s → μ0 = 1, σ0 = 0.5. Worker 1 unmeasured counts as (1, 0.5):
    # D = 2·0.25/1 = 0.5, T = 1/(1 + 1) = 0.5, TR = 48:
    # (0.5 + 96 − √(0.25 + 96)) / 2 = (96.5 − 9.810708)/2 = 43.34 → 43, R = 53
    report(v, 0, [0.5, 1.5])
    assert ask(b, v, 0) == 43
    # worker 1: items of 1.5 s and 2.5 s → μ1 = 2, σ1 = 0.5. D = 0.25/1 + 0.25/2 = 0.375,
    # T = 1/(1 + 1/2) = 2/3, TR = 106/3: (0.375 + 212/3 − √(0.140625 + 53)) / (2·2)
    # = (71.041667 − 7.289762)/4 = 15.94 → 16, R = 37
    report(v, 1, [1.5, 2.5])
    assert ask(b, v, 1) == 16


def test_af_without_variance_gives_the_speed_share_of_what_is_left():
    # σ = 0 → D = 0 → chunk_i = R·(1/μ_i)/Σ(1/μ_j): μ = (1, 3), R = 96: 96·1/(1 + 1/3) = 72
    b = make("af", {"probe": 2})
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    ask(b, v, 0)
    ask(b, v, 1)
    report(v, 0, [1.0, 1.0])
    report(v, 1, [3.0, 3.0])
    assert ask(b, v, 0) == 72
    assert ask(b, v, 1) == 6  # R = 24: 24·(1/3)/(4/3) = 6


def test_af_probe_respects_min_chunk():
    b = make("af", {"probe": 2, "min_chunk": 5})
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    assert ask(b, v, 0) == 5


# --- FAC and TAP with estimated μ, σ ---------------------------------------------------------

def test_fac_estimates_mu_and_sigma_from_the_view_at_each_batch():
    b = make("fac")
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    assert [ask(b, v, 0), ask(b, v, 1)] == [25, 25]  # no estimate: x = 2, ⌈100/4⌉
    # pooled over both workers: items of 0.5 s and 1.5 s alternately → μ = 1, σ = 0.5
    report(v, 0, [0.5, 1.5] * 12 + [1.0])
    report(v, 1, [0.5, 1.5] * 12 + [1.0])
    sd = (sum(t * t for t in ([0.5, 1.5] * 12 + [1.0]) * 2) / 50 - 1.0) ** 0.5  # mean is 1.0
    assert sd == pytest.approx(0.4898979)  # (24·(0.25 + 2.25)/2 + 1)/25 − 1 = 0.24
    # R = 50: b = 2·σ/(2·√50) = 0.069282, x = 1 + b² + b√(b²+2) = 1.102897, 50/(2x) = 22.67 → 23
    assert [ask(b, v, 0), ask(b, v, 1)] == [23, 23]
    assert b.x_ == pytest.approx(1 + 0.0048 + 0.069282 * (2.0048 ** 0.5), rel=1e-5)
    # R = 4: b = 0.4898979/2 = 0.244949, x = 1.06 + 0.244949·√2.06 = 1.411565, 4/(2x) = 1.417 → 2
    assert [ask(b, v, 0), ask(b, v, 1)] == [2, 2]


def test_tap_uses_pooled_estimates_once_measured():
    b = make("tap", {"alpha": 1.0})
    v = LoopView(100, 2, [1.0, 1.0])
    b.start(v)
    assert ask(b, v, 0) == 50  # v = 0: ⌈100/2⌉, as GSS
    report(v, 0, [0.5, 1.5] * 5)  # μ = 1, σ = 0.5 → v = 0.5
    # R = 50, T = 25: 25 + 0.125 − 0.5·√(50 + 0.0625) = 25.125 − 3.537831 = 21.59 → 22
    assert ask(b, v, 1) == 22
