"""Exact chunk sequences of the count-based chunking rules on hand-worked cases.

Each case drives a balancer the way the self-scheduling engine does: ``start(view)``, then per
request ``chunk(view, worker)``, clamped to [1, remaining], with ``view.remaining`` decremented.
Expected lists are worked out by hand from the rule with exact arithmetic (shown in comments).
"""

import math

import numpy as np
import pytest

from dlbkit import ConfigError, LoopView, make


def drive(name, params=None, *, n_items=100, n_workers=4, speeds=None, order=None, rng=None):
    """Chunk sizes of one run, workers asking round-robin (or cyclically in *order*)."""
    b = make(name, params or {})
    view = LoopView(n_items, n_workers, list(speeds) if speeds else [1.0] * n_workers)
    b.start(view, rng)
    out, k = [], 0
    while view.remaining > 0:
        w = order[k % len(order)] if order else k % n_workers
        n = max(1, min(int(b.chunk(view, w)), view.remaining))
        out.append(n)
        view.remaining -= n
        k += 1
    return out


def test_gss_hands_out_a_pth_of_the_remainder():
    # ⌈R/P⌉, P = 4: ⌈100/4⌉=25, ⌈75/4⌉=19, ⌈56/4⌉=14, ⌈42/4⌉=11, ⌈31/4⌉=8, ⌈23/4⌉=6, ⌈17/4⌉=5,
    # ⌈12/4⌉=3, ⌈9/4⌉=3, ⌈6/4⌉=2, ⌈4/4⌉=1, then 1, 1, 1
    assert drive("gss") == [25, 19, 14, 11, 8, 6, 5, 3, 3, 2, 1, 1, 1, 1]


def test_gss_min_chunk_floors_the_tail():
    # as above until R = 12: ⌈12/4⌉ = 3 < 5 → 5; R = 7 → 5; R = 2 → 5 cut to 2 by the engine
    assert drive("gss", {"min_chunk": 5}) == [25, 19, 14, 11, 8, 6, 5, 5, 5, 2]


def test_tss_reproduces_the_published_example_table():
    # N = 1000, P = 4: f = ⌈1000/8⌉ = 125, l = 1, n = ⌈2000/126⌉ = 16, δ = 124/15 = 8.27 → ⌊δ⌋ = 8:
    # 125, 117, …, 37 (twelve chunks, 12·(125+37)/2 = 972 items), then 29 cut to the remainder 28
    assert drive("tss", n_items=1000) == [125, 117, 109, 101, 93, 85, 77, 69, 61, 53, 45, 37, 28]


def test_tfss_reproduces_the_published_example_table():
    # batches of the TSS chunks above: (125+117+109+101)/4 = 113, (93+85+77+69)/4 = 81,
    # (61+53+45+37)/4 = 49, (29+21+13+5)/4 = 17; 4·(113+81+49) = 972, so 17 and the remainder 11
    assert drive("tfss", n_items=1000) == [113] * 4 + [81] * 4 + [49] * 4 + [17, 11]


def test_tss_integer_decrement_of_zero_is_fixed_size_chunking():
    # N = 100, P = 4: f = 13, n = ⌈200/14⌉ = 15, δ = 12/14 → ⌊δ⌋ = 0: chunks of 13 (7·13 = 91), then 9
    assert drive("tss") == [13] * 7 + [9]
    assert drive("tfss") == [13] * 7 + [9]


def test_tss_real_decrement_falls_from_first_to_last():
    # f = 13, l = 1, n = 15, δ = 12/14 = 6/7; c_k = ⌊(91 − 6k)/7⌋:
    # 91/7=13, 85/7→12, 79/7→11, 73/7→10, 67/7→9, 61/7→8, 55/7→7, 49/7=7, 43/7→6, 37/7→5,
    # 31/7→4, 25/7→3, 19/7→2, 13/7→1, 7/7=1: sum 99, so one more chunk of l = 1
    assert drive("tss", {"decrement": "real"}) == [13, 12, 11, 10, 9, 8, 7, 7, 6, 5, 4, 3, 2, 1, 1, 1]
    # the published example with δ = 124/15 kept real: c_k = ⌊(1875 − 124k)/15⌋, k = 0 … 14
    assert drive("tss", {"decrement": "real"}, n_items=1000) == [
        125, 116, 108, 100, 91, 83, 75, 67, 58, 50, 42, 34, 25, 17, 9]


def test_tss_with_given_first_and_last():
    # f = 20, l = 4, n = ⌈200/24⌉ = 9, δ = 16/8 = 2 (whole, so both decrements agree):
    # 20, 18, 16, 14, 12, 10, 8 (sum 98), then 6 cut to 2
    for decrement in ("integer", "real"):
        assert drive("tss", {"first": 20, "last": 4, "decrement": decrement}) == [20, 18, 16, 14, 12, 10, 8, 2]


def test_tss_chunks_never_fall_below_last():
    # f = 20, l = 10, n = ⌈200/30⌉ = 7, δ = 10/6 → ⌊δ⌋ = 1: 20, 19, 18, 17, 16 (sum 90), then 10
    assert drive("tss", {"first": 20, "last": 10}) == [20, 19, 18, 17, 16, 10]
    # N = 1000, P = 4, l = 40: f = 125, n = ⌈2000/165⌉ = 13, ⌊85/12⌋ = 7: 125, 118, …, 55
    # (eleven chunks, 11·(125+55)/2 = 990), then the remainder 10 (the engine's cut, not the rule's)
    assert drive("tss", {"last": 40}, n_items=1000) == [125, 118, 111, 104, 97, 90, 83, 76, 69, 62, 55, 10]


def test_tss_first_below_last_is_a_config_error():
    b = make("tss", {"first": 2, "last": 5})
    with pytest.raises(ConfigError, match="first"):
        b.start(LoopView(100, 4, [1.0] * 4))


def test_tss_decrement_is_declared():
    with pytest.raises(ConfigError, match="decrement"):
        make("tss", {"decrement": "round"}).start(LoopView(100, 4, [1.0] * 4))


def test_tfss_real_decrement_batches_are_means_of_tss_chunks():
    # TSS (real δ) 13 12 11 10 | 9 8 7 7 | 6 5 4 3: batch means ⌈46/4⌉ = 12, ⌈31/4⌉ = 8,
    # ⌈18/4⌉ = 5; 4·12 + 4·8 + 4·5 = 100
    assert drive("tfss", {"decrement": "real"}) == [12] * 4 + [8] * 4 + [5] * 4


def test_fac2_halves_the_remainder_per_batch():
    # ⌈R/(2P)⌉ per batch of P = 4: ⌈100/8⌉ = 13 (R→48), ⌈48/8⌉ = 6 (→24), 3 (→12), ⌈12/8⌉ = 2 (→4),
    # ⌈4/8⌉ = 1 (→0)
    assert drive("fac2") == [13] * 4 + [6] * 4 + [3] * 4 + [2] * 4 + [1] * 4


def test_fac_with_known_mu_and_sigma():
    # μ = σ = 1, P = 4. b = Pσ/(2μ√R), x = 1 + b² + b√(b²+2), chunk ⌈R/(xP)⌉:
    # R=100: b=0.2, x=1.325657, 100/5.302629=18.859 → 19 (R→24)
    # R=24:  b=0.408248, x=1.767592, 24/7.070368=3.394 → 4 (R→8)
    # R=8:   b=0.707107, x=2.618034, 8/10.472136=0.764 → 1 (R→4)
    # R=4:   b=1, x=2+√3=3.732051, 4/14.928203=0.268 → 1 (R→0)
    assert drive("fac", {"mu": 1.0, "sigma": 1.0}) == [19] * 4 + [4] * 4 + [1] * 8


def test_fac_with_zero_sigma_is_static():
    # σ = 0: b = 0, x = 1, one batch of ⌈100/4⌉ = 25
    assert drive("fac", {"mu": 2.0, "sigma": 0.0}) == [25] * 4


def test_fac_without_estimates_behaves_as_fac2():
    assert drive("fac") == drive("fac2")


def test_wf_scales_the_fac2_chunk_by_nominal_speed():
    # speeds 1,1,2,4 → w = 4·s/8 = 0.5, 0.5, 1, 2; requests by workers 3, 2, 1, 0, ...;
    # chunk = round(w·c) cut to what the batch (P·c items) still holds:
    # c=13, batch 52: 26, 13, round(6.5)=7, 7 cut to 6          (R → 48)
    # c=6, batch 24:  12, 6, 3, 3                               (R → 24)
    # c=3, batch 12:  6, 3, round(1.5)=2, 2 cut to 1            (R → 12)
    # c=2, batch 8:   4, 2, 1, 1                                (R → 4)
    # c=1, batch 4:   2, 1, round(0.5)=1                        (R → 0)
    assert drive("wf", speeds=[1, 1, 2, 4], order=[3, 2, 1, 0]) == [
        26, 13, 7, 6, 12, 6, 3, 3, 6, 3, 2, 1, 4, 2, 1, 1, 2, 1, 1]


def test_wf_given_weights_are_normalised():
    # weights (2, 2, 4, 8) normalise to the same 0.5, 0.5, 1, 2 as speeds 1, 1, 2, 4
    assert drive("wf", {"weights": [2, 2, 4, 8]}, order=[3, 2, 1, 0]) == drive(
        "wf", speeds=[1, 1, 2, 4], order=[3, 2, 1, 0])


@pytest.mark.parametrize("weights, match", [([1.0, 2.0], "one value per worker"), ([1, 1, 0, 1], "> 0")])
def test_wf_bad_weights_are_config_errors(weights, match):
    b = make("wf", {"weights": weights})
    with pytest.raises(ConfigError, match=match):
        b.start(LoopView(100, 4, [1.0] * 4))


def test_fsc_uses_the_kruskal_weiss_chunk():
    # h = σ = 1, N = 100, P = 4: (√2·100 / (4·√ln 4))^(2/3) = (141.4214/4.709640)^(2/3)
    # = 30.0281^(2/3) = 9.660 → 10, ten chunks of 10
    assert drive("fsc", {"h": 1.0, "sigma": 1.0}) == [10] * 10


def test_fsc_caps_at_n_over_p_and_handles_zero_sigma():
    # h huge → (…)^(2/3) ≫ N/P → capped at ⌈100/4⌉ = 25; σ = 0 → 25 too
    assert drive("fsc", {"h": 1e6, "sigma": 1.0}) == [25] * 4
    assert drive("fsc", {"h": 1.0, "sigma": 0.0}) == [25] * 4


def test_mfsc_matches_fac2s_chunk_count():
    # t = ⌈100/4⌉ = 25: 25·ln2/ln25 = 17.3287/3.2189 = 5.383, +0.55 = 5.93 → 5, twenty chunks of 5
    assert drive("mfsc") == [5] * 20
    # N = 8000, P = 4: t = 2000, 2000·0.693147/7.600902 = 182.38, +0.55 → 182
    assert drive("mfsc", n_items=8000)[0] == 182


def test_mfsc_rounds_with_lb4omps_offset():
    # LB4OMP truncates t·ln2/ln t + 0.55: a fractional part of 0.45 or more rounds up.
    # t = 7 (N = 28): 7·0.693147/1.945910 = 2.493 → 3 (nearest: 2); t = 19 (N = 76): 4.473 → 5 (nearest: 4)
    assert drive("mfsc", n_items=28) == [3] * 9 + [1]
    assert drive("mfsc", n_items=76) == [5] * 15 + [1]
    # t = 10 (N = 40): 3.010 → 3; min_chunk raises it
    assert drive("mfsc", n_items=40)[0] == 3
    assert drive("mfsc", {"min_chunk": 4}, n_items=40)[0] == 4


def test_fiss_increases_by_a_fixed_step_per_stage():
    # B = P − 1 = 3, X = 5: C0 = ⌊100/20⌋ = 5, δ = ⌊2·100·(1 − 3/5)/(4·3·2)⌋ = ⌊80/24⌋ = 3;
    # stages 5, 8, 11 (4 chunks each, sum 96), then the last stage's 11 cut to the 4 left
    assert drive("fiss") == [5] * 4 + [8] * 4 + [11] * 4 + [4]


def test_fiss_with_given_stages_and_min_chunk():
    # B = 2, X = 4, N = 100, P = 4: C0 = ⌊100/16⌋ = 6 → min_chunk 7, δ = ⌊2·100·(2/4)/(4·2·1)⌋ = 12:
    # 7 ×4 (R 72), 19 ×3 (R 15), then 19 cut to 15
    assert drive("fiss", {"stages": 2, "min_chunk": 7}) == [7] * 4 + [19] * 3 + [15]


def test_viss_increments_halve_each_stage():
    # k = P = 4: c0 = ⌈100/16⌉ = 7; stages 7, ⌊10.5⌋ = 10, ⌊12.25⌋ = 12:
    # 7 ×4 (R 72), 10 ×4 (R 32), 12, 12 (R 8), 12 cut to 8
    assert drive("viss") == [7] * 4 + [10] * 4 + [12, 12, 8]


def test_pls_static_blocks_then_guided():
    # SWR = 0.5: blocks ⌈50/4⌉ = 13 for each worker's first request (R → 48), then ⌈R/4⌉:
    # 12 (→36), 9 (→27), 7 (→20), 5 (→15), 4 (→11), 3 (→8), 2 (→6), 2 (→4), 1, 1, 1, 1
    assert drive("pls") == [13] * 4 + [12, 9, 7, 5, 4, 3, 2, 2, 1, 1, 1, 1]


def test_pls_dynamic_pool_excludes_blocks_not_yet_taken():
    # worker 0 takes its block (13, R = 87) and asks again before anyone else: the dynamic pool is
    # 87 − 3·13 = 48, so it gets ⌈48/4⌉ = 12, not ⌈87/4⌉ = 22; then workers 1, 2, 3 get their 13
    assert drive("pls", order=[0, 0, 1, 2, 3])[:5] == [13, 12, 13, 13, 13]


def test_tap_tapers_gss_by_the_variability():
    # v = α·σ/μ = 1, T = R/4, chunk ⌈T + v²/2 − v·√(2T + v²/4)⌉:
    # R=100: 25.5 − √50.25 = 18.41 → 19;  R=81: 20.75 − √40.75 = 14.37 → 15;
    # R=66: 17 − √33.25 = 11.23 → 12;     R=54: 14 − √27.25 = 8.78 → 9;
    # R=45: 11.75 − √22.75 = 6.98 → 7;    R=38: 10 − √19.25 = 5.61 → 6;
    # R=32: 8.5 − √16.25 = 4.47 → 5;      R=27: 7.25 − √13.75 = 3.54 → 4;
    # R=23: 6.25 − √11.75 = 2.82 → 3;     R=20: 5.5 − √10.25 = 2.30 → 3;
    # R=17: 1.79 → 2; R=15: 1.47 → 2; R=13: 1.15 → 2; R=11: 0.85 → 1, and 1 from then on
    assert drive("tap", {"mu": 1.0, "sigma": 1.0, "alpha": 1.0}) == [
        19, 15, 12, 9, 7, 6, 5, 4, 3, 3, 2, 2, 2] + [1] * 11


def test_tap_without_variability_is_gss():
    assert drive("tap", {"mu": 1.0, "sigma": 0.0}) == drive("gss")
    assert drive("tap") == drive("gss")  # no estimates yet: v = 0


def test_rnd_draws_from_the_engine_generator():
    sizes = drive("rnd", {"min_chunk": 2, "max_chunk": 9}, rng=np.random.default_rng(7))
    ref = np.random.default_rng(7).integers(2, 10, size=len(sizes)).tolist()
    assert sizes[:-1] == ref[:-1]  # the last draw may be cut to what is left
    assert sizes[-1] == min(ref[-1], 100 - sum(sizes[:-1]))
    assert sum(sizes) == 100


def test_rnd_default_upper_bound_is_fac2s_first_chunk():
    sizes = drive("rnd", n_items=1000, rng=np.random.default_rng(3))
    assert max(sizes[:-1]) <= math.ceil(1000 / 8) and min(sizes) >= 1
    assert max(sizes[:-1]) >= 100  # 125 possible values, a dozen draws: the top range is reached


def test_rnd_bounds_and_rng_are_checked():
    with pytest.raises(ConfigError, match="max_chunk"):
        make("rnd", {"min_chunk": 5, "max_chunk": 4}).start(LoopView(10, 2, [1.0, 1.0]),
                                                          np.random.default_rng(0))
    with pytest.raises(ConfigError, match="Generator"):
        make("rnd").start(LoopView(10, 2, [1.0, 1.0]))


@pytest.mark.parametrize("name", ["gss", "tss", "tfss", "fac2", "wf", "fiss", "viss", "pls", "mfsc", "fsc"])
def test_start_resets_state_so_a_rule_repeats_its_sequence(name):
    b = make(name)
    seqs = []
    for _ in range(2):
        view = LoopView(500, 3, [1.0, 2.0, 3.0])
        b.start(view)
        seq = []
        while view.remaining > 0:
            n = max(1, min(b.chunk(view, len(seq) % 3), view.remaining))
            seq.append(n)
            view.remaining -= n
        seqs.append(seq)
    assert seqs[0] == seqs[1] and sum(seqs[0]) == 500
