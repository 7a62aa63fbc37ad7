"""Reproduction of Sánchez, Macías & Suárez (004, ~2002): the ranked claims of notes/004_sanchez.md §6.

The paper has no table of times, only qualitative results and "about six times" (note, caveat), so the
claims are the note's §6 list, checked on the deterministic simulator of the 004 testbed
(data/platforms/sanchez2002*.toml; the experiment files data/experiments/sanchez2002_*.toml hold the
same setup). ``python -m dlbkit.face.reproduce.sanchez2002`` prints the table; ``dlbkit reproduce
sanchez2002`` prints it with the count: 13 of 14 asserted claims hold, 1 more row is reported only.

Calibrations (what was fitted to which number of the paper):

- the *calibrated* speeds PC1 = PC2 = 1, PC3 = 0.118, PC4 = 0.065 (sanchez2002_calibrated.toml) are
  fitted to the paper's one quantitative result, GACSYS's "about six times lower" (§5.1, Fig. 2's
  text): they make the ideal gain Σs/(n·min s) about six in both pairs (5.98 for E2/E4, 6.07 for
  E3/E5; note §5). The calibrated gain rows therefore check that Eq. 1 attains that ideal, not that
  the testbed gives six by itself; every row marked "calibrated" runs on these fitted speeds. The
  clock-rate speeds (733:733:200:133) are not fitted.
- nothing else is fitted to the paper: the GACSYS size and cost per unit, the MxV cost per row
  (the note's toy model), the master's CPU cost per byte sent (our assumption, ~50 MB/s; the MxV
  E2-vs-E3 row holds only because of it, and says so), the noise and the step slowdown are chosen
  before running and stated below with their reasons.

Every asserted row compares the value it prints, at the precision it prints, with a band written
in its tolerance (two-sided where the paper or the note gives a number). Modelling choices the
paper leaves open are constants below, each with its reason. Times are the application's execution
time: until the master holds every result (``Trace.end_time``).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from functools import lru_cache
from pathlib import Path

import numpy as np

from dlbkit.families.simulate import simulate
from dlbkit.families.divisible.balancers import Sanchez, Static
from dlbkit.model.availability import Recorded, Step
from dlbkit.families.divisible.model.metrics import BALANCE_TOLERANCE, rounds_to_balance
from dlbkit.model.platform import Platform
from dlbkit.model.trace import Trace
from dlbkit.families.divisible.model.view import LoopView
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.face.reproduce import Claim, format_claims, reported

__all__ = ["claims", "gacsys", "mxv"]

PLATFORMS = Path(__file__).resolve().parents[2] / "data" / "platforms"
#: speeds by clock rate (733:733:200:133) and the effective speeds fitted to "about six times" (note §5)
CALIBRATIONS = {"clock-rate": "sanchez2002.toml", "calibrated": "sanchez2002_calibrated.toml"}
#: experiment pair -> node of the master ("load balancing program instance"); the slaves are the other
#: three PCs (004 §5: E2/E4 master on PC4, E3/E5 on PC1)
PAIRS = {"E2/E4": "pc4", "E3/E5": "pc1"}
SEQUENTIAL_NODE = "pc1"  # E1: "sequential execution ... on the fastest processor (PC1)"
C0_VALUES = (1, 10, 20)  # "initial distribution of information units equal to one, ten and twenty" (004 §5.1)

# --- GACSYS parameter estimation (004 §4.1): compute-bound, tiny messages, Eq. 1 ------------------
GACSYS_UNITS = 3000  # input size not given (note §4); the note's toy model uses 3000 units (§5)
GACSYS_COST = 0.01  # seconds per unit on PC1 (speed 1 = PC1), the note's toy model (§5)
GACSYS_BYTES_IN = 0  # WORK carries only (start, count) (note §3.1)
GACSYS_BYTES_OUT = 24  # per unit: estimated time, power and area as three doubles (note §3.1)

# --- MxV (004 §4.2, §5.2): communication-bound, modified Eq. 1 -------------------------------------
MXV_ROWS, MXV_COLS = 5000, 1000  # "a matrix with 5000 rows by 1000 columns of integers"
MXV_BYTES_IN = 4 * MXV_COLS  # one int32 row per information unit (note §3.2)
MXV_BYTES_OUT = 4  # one int32 result per row
MXV_COST = 5e-6  # seconds per row on PC1: the note's toy model (§2.5); 25 ms for the product ("tens of ms", §3.2)
VECTOR_BYTES = 4 * MXV_COLS  # "Initially, the vector is broadcasted": the engine's broadcast_bytes

#: master CPU seconds per byte sent, at speed 1 (the engine divides by the master's speed): our
#: assumption, ~50 MB/s of MPI/TCP send processing on a PIII-733; it is what makes a PC4 master slow
#: (004 §5.2: "the load balancing mechanism is running in a low performance node (PC4)")
MASTER_COST_PER_BYTE = 2e-8

# --- tolerances (note §6), fixed from the texts before the runs --------------------------------------
GAIN_FRACTION = 0.85  # §6.1: 0.85 x ideal <= T_noLB/T_LB <= ideal Σs/(n·min s) (no balancer beats the ideal)
SIX_TIMES = (4.5, 6.5)  # §6.1: "about six times lower" with the calibrated speeds: 6 ± 1.5
BALANCE_ROUNDS = (1, 2)  # §6.3: "homogeneous execution time ... on third iteration" = round index 2; round 0
#                          is the equal split, so a balancer can be balanced from round index 1 on
NOISE = 0.05  # §6.3: ±5% multiplicative noise
NOISE_PERIOD = 1.0  # s between redraws of a node's CPU share (about one round at c0 = 10)
NOISE_SEEDS = (1, 2, 3)
NOISY_MEDIAN_MAX = 1.15  # §6.3: median per-round max/min t_exe from round 2 on (max/min >= 1 by definition)
NOISE_HORIZON = 1000.0  # s of noisy availability drawn (longer than any run here)
STEP_NODE, STEP_AT, STEP_LEVEL = "pc2", 5.0, 0.5  # §6.4: a slave (in both pairs) halves mid-run
STEP_ROUNDS = 2  # §6.4: balanced again within 2 rounds after the step
#: §6.5: MxV with LB is "lightly smaller" than without: smaller (T_LB/T_noLB < 1), and lightly, which we
#: read as by at most 10% (>= 0.90). Read from the sentence, not from our runs: the note's one-sided
#: "<= 1 + ε" let LB be 5% slower, which "smaller" excludes.
MXV_LIGHTLY = (0.90, 1.0)
SEQ_FACTOR = 10  # §6.5: parallel MxV slower than sequential "by > 10x in the derived model"
UNIT_EXAMPLE = dict(units=[10, 10, 10], exe=[2.0, 3.0, 6.0], calc=[1.5, 2.5, 5.5], expected=[36, 22, 10])  # §6.7


# --- runs ------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _platform(calibration: str) -> Platform:
    return Platform.from_toml(PLATFORMS / CALIBRATIONS[calibration])


def gacsys() -> Divisible:
    return Divisible(GACSYS_UNITS, CostModel("constant", value=GACSYS_COST), GACSYS_BYTES_IN, GACSYS_BYTES_OUT)


def mxv() -> Divisible:
    return Divisible(MXV_ROWS, CostModel("constant", value=MXV_COST), MXV_BYTES_IN, MXV_BYTES_OUT)


def _run(platform: Platform, workload: Divisible, balancer, master: str,
         cost_per_byte: float = MASTER_COST_PER_BYTE, broadcast: float = 0.0) -> Trace:
    return simulate(platform, workload, balancer, mechanism="rounds", master=master,
                    master_cost_per_byte=cost_per_byte, broadcast_bytes=broadcast).trace


@lru_cache(maxsize=None)
def _gacsys_time(calibration: str, master: str, c0: int, balanced: bool, rounding: str = "floor") -> float:
    b = Sanchez(c0=c0, estimator="eq1", rounding=rounding) if balanced else Static(size=c0)
    return _run(_platform(calibration), gacsys(), b, master).end_time


@lru_cache(maxsize=None)
def _mxv_time(master: str, c0: int, balanced: bool, cost_per_byte: float = MASTER_COST_PER_BYTE) -> tuple:
    """(seconds, rounds) of MxV on the calibrated testbed."""
    p = _platform("calibrated")
    b = Sanchez(c0=c0, estimator="eq1_comm_aware", order="slowest_first") if balanced else Static(size=c0)
    tr = _run(p, mxv(), b, master, cost_per_byte, broadcast=VECTOR_BYTES)
    return tr.end_time, tr.meta["n_rounds"]


def _sequential(workload: Divisible, platform: Platform) -> float:
    """E1: the whole job on PC1 alone, data local (no messages), one static chunk."""
    alone = platform.subset([SEQUENTIAL_NODE])
    return simulate(alone, workload, Static(), master=SEQUENTIAL_NODE, master_computes=True).trace.end_time


def _ideal_gain(platform: Platform, master: str) -> float:
    """Σs/(n·min s) over the slaves: no-LB/LB for a compute-bound job and a perfect balancer (note §5)."""
    s = [n.speed for n in platform.nodes if n.name != master]
    return sum(s) / (len(s) * min(s))


def _with_availability(platform: Platform, spec_of) -> Platform:
    nodes = [dataclasses.replace(n, availability=spec_of(n)) for n in platform.nodes]
    return Platform(nodes, platform.network, name=platform.name)


def _noisy(platform: Platform, seed: int) -> Platform:
    """Every node's CPU share redrawn every NOISE_PERIOD s, uniform in [1 − 2·NOISE, 1] = 0.95 ± 5%."""
    rng = np.random.default_rng(seed)
    times = tuple(np.arange(0.0, NOISE_HORIZON, NOISE_PERIOD).tolist())

    def spec(_node):
        return Recorded(times, tuple(rng.uniform(1.0 - 2 * NOISE, 1.0, len(times)).tolist()))
    return _with_availability(platform, spec)


def _rounds(trace: Trace) -> list[tuple[float, float, float]]:
    """Per round: (start, end, max/min t_exe over the workers that had units)."""
    by: dict[int, list] = {}
    for rnd, _w, _n, s, _send, _calc, exe in trace.rounds:
        by.setdefault(rnd, []).append((s, exe))
    out = []
    for rnd in sorted(by):
        v = by[rnd]
        exe = [e for _, e in v]
        out.append((min(s for s, _ in v), max(s + e for s, e in v), max(exe) / min(exe)))
    return out


def _balanced(imbalance: float) -> bool:
    return imbalance <= 1.0 + BALANCE_TOLERANCE


def _fmt(xs, nd=2) -> list:
    return [round(float(x), nd) for x in xs]


#: a calibrated row's tag: which fit it depends on (module docstring)
CALIBRATED = "calibrated speeds (fitted to 'about six times lower')"


def _in(x: float, lo: float, hi: float, *, hi_open: bool = False) -> bool:
    """lo <= x <= hi (or < hi): *x* and the bounds as printed, so the row reads as it is decided."""
    return lo <= x and (x < hi if hi_open else x <= hi)


# --- the claims, in the note's rank order --------------------------------------------------------
def _claims_gain() -> list[Claim]:
    """§6.1 [STRONG]: LB vs no-LB gain on the compute-bound GACSYS stand-in."""
    out = []
    for cal in CALIBRATIONS:
        for pair, master in PAIRS.items():
            p = _platform(cal)
            ideal = round(_ideal_gain(p, master), 2)
            need = round(GAIN_FRACTION * ideal, 2)
            gains = _fmt(_gacsys_time(cal, master, c0, False) / _gacsys_time(cal, master, c0, True)
                         for c0 in C0_VALUES)
            ok = all(_in(g, need, ideal) for g in gains)
            tol = f"in [{GAIN_FRACTION} x ideal, ideal] = [{need:.2f}, {ideal:.2f}] for every c0"
            if cal == "calibrated":
                ok = ok and all(_in(g, *SIX_TIMES) for g in gains)
                tol = f"in [{SIX_TIMES[0]}, {SIX_TIMES[1]}] and " + tol
                speeds = f"{CALIBRATED}: the ideal {ideal:.2f} is about six by construction, so this row checks " \
                         f"that Eq. 1 attains it"
            else:
                speeds = f"clock-rate speeds (not fitted): the paper's six is out of reach, ideal {ideal:.2f}"
            text = (f"GACSYS {pair}, {cal} speeds: T_noLB/T_LB (Eq. 1 vs equal chunks) for c0 = "
                    f"{', '.join(map(str, C0_VALUES))}; {speeds}")
            failing = [c0 for c0, g in zip(C0_VALUES, gains) if not _in(g, need, ideal)]
            if failing:
                carry = [_gacsys_time(cal, master, c0, False) / _gacsys_time(cal, master, c0, True, "carry")
                         for c0 in failing]
                text += (f". FAILS at c0 = {failing}: with floor rounding the slowest slave stays at c0 units "
                         f"and the fast ones' counts are truncated (note §2.7.1); carry rounding gives "
                         f"{_fmt(carry)}")
            out.append(Claim(text, "about six times lower", gains, tol, ok))
    return out


def _claims_sequential() -> list[Claim]:
    """§6.2 [STRONG]: without balancing the parallel run is slower than sequential on PC1."""
    out = []
    for cal in CALIBRATIONS:
        t_seq = _sequential(gacsys(), _platform(cal))
        ratios = [_gacsys_time(cal, m, c0, False) / t_seq for m in PAIRS.values() for c0 in C0_VALUES]
        worst = round(min(ratios), 2)
        speeds = CALIBRATED if cal == "calibrated" else "clock-rate speeds (not fitted)"
        out.append(Claim(f"GACSYS, {speeds}: no-LB (E4, E5; every c0) slower than sequential on PC1 (E1, "
                         f"{t_seq:.0f} s); ours = min T_noLB/T_seq (the paper gives no number)",
                         "without balancing is worse than sequential execution time", worst,
                         "> 1", worst > 1.0))
    return out


def _claims_balance() -> list[Claim]:
    """§6.3 [STRONG]: balance by the third round, deterministic and with ±5% noise."""
    p = _platform("calibrated")
    first, after = [], []
    medians = []
    for master in PAIRS.values():
        for c0 in (10, 20):  # c0 >= 10 (note §6.3); c0 = 1 with floor rounding: see the c0 claim
            tr = _run(p, gacsys(), Sanchez(c0=c0), master)
            rb = rounds_to_balance(tr)
            first.append(rb)
            imb = [r[2] for r in _rounds(tr)]
            after.append(max(imb[int(rb):-1]) if not math.isnan(rb) else math.inf)  # the clipped last round aside
            for seed in NOISE_SEEDS:
                imb = [r[2] for r in _rounds(_run(_noisy(p, seed), gacsys(), Sanchez(c0=c0), master))]
                medians.append(statistics.median(imb[BALANCE_ROUNDS[1]:]))
    worst = int(max(first)) if all(math.isfinite(x) for x in first) else math.inf
    stays = round(max(after), 3)
    noisy = round(max(medians), 3)
    lo, hi = BALANCE_ROUNDS
    return [
        Claim(f"GACSYS, {CALIBRATED}, E2 and E3, c0 = 10 and 20, no noise: worst first round index whose "
              f"t_exe agree within {BALANCE_TOLERANCE:.0%} (max/min), and they stay so (worst later round "
              f"{stays:.3f}, the clipped last round aside). Reading: 'on third iteration' is round index 2; "
              f"without noise Eq. 1 balances after one measured round, so 1 is the design's value",
              "on third iteration (round index 2)", worst,
              f"in [{lo}, {hi}] and later rounds <= {1 + BALANCE_TOLERANCE:.2f}",
              _in(worst, lo, hi) and stays <= 1.0 + BALANCE_TOLERANCE),
        Claim(f"Same with ±{NOISE:.0%} noise (each node's CPU share redrawn every {NOISE_PERIOD:g} s, uniform in "
              f"[{1 - 2 * NOISE:.2f}, 1], seeds {list(NOISE_SEEDS)}): worst median per-round max/min t_exe "
              f"from round index {hi} on (the note's check, §6.3)", "usually ... on third iteration",
              noisy, f"in [1, {NOISY_MEDIAN_MAX}]", _in(noisy, 1.0, NOISY_MEDIAN_MAX)),
    ]


def _claims_step() -> list[Claim]:
    """§6.4 [MEDIUM]: after a slave halves its speed mid-run, balance returns within 2 rounds."""
    base = _platform("calibrated")
    p = _with_availability(base, lambda n: Step(at=STEP_AT, level=STEP_LEVEL) if n.name == STEP_NODE
                           else n.availability)
    late, gains = [], []
    for master in PAIRS.values():
        tr = _run(p, gacsys(), Sanchez(c0=10), master)
        rounds = _rounds(tr)
        k_step = next(k for k, (s, e, _) in enumerate(rounds) if s <= STEP_AT < e)
        imb = [r[2] for r in rounds[:-1]]  # the clipped last round aside
        back = next((k for k in range(k_step + 1, len(imb)) if all(_balanced(x) for x in imb[k:])), math.inf)
        late.append(back - k_step)
        gains.append(_run(p, gacsys(), Static(size=10), master).end_time / tr.end_time)
    gains = _fmt(gains)
    return [
        Claim(f"GACSYS, {CALIBRATED}, c0 = 10, {STEP_NODE} at {STEP_LEVEL:g} of its CPU from t = {STEP_AT:g} s: "
              f"rounds after the step's round until t_exe stay within {BALANCE_TOLERANCE:.0%} (E2, E3); a "
              f"property of the design (note §6.4), not a result of the paper",
              "not in the paper (follows from the design, note §6.4)", late, f"in [1, {STEP_ROUNDS}] each",
              all(_in(x, 1, STEP_ROUNDS) for x in late)),
        Claim("Same step: LB still beats no-LB, T_noLB/T_LB (E2/E4, E3/E5); a property of the design (note §6.4)",
              "not in the paper", gains, "> 1 each", min(gains) > 1.0),
    ]


def _claims_mxv() -> list[Claim]:
    """§6.5 [MEDIUM, qualitative]: MxV on 10 Mbps, comm-aware formula, slowest first."""
    t_seq = _sequential(mxv(), _platform("calibrated"))
    runs = {(m, c0, lb): _mxv_time(m, c0, lb) for m in PAIRS.values() for c0 in C0_VALUES for lb in (True, False)}
    slowest = round(min(t for t, _ in runs.values()) / t_seq)
    ratio = _fmt([runs[(m, c0, True)][0] / runs[(m, c0, False)][0] for m in PAIRS.values() for c0 in C0_VALUES], 4)
    lb_rounds = [runs[(m, 10, True)][1] for m in PAIRS.values()]
    eq_rounds = [runs[(m, 10, False)][1] for m in PAIRS.values()]
    e2_e3 = [runs[("pc4", c0, True)][0] / runs[("pc1", c0, True)][0] for c0 in C0_VALUES]
    e4_e5 = [runs[("pc4", c0, False)][0] / runs[("pc1", c0, False)][0] for c0 in C0_VALUES]
    masters = _fmt(e2_e3 + e4_e5, 3)
    free = _mxv_time("pc4", 10, True, 0.0)[0] / _mxv_time("pc1", 10, True, 0.0)[0]
    lo, hi = MXV_LIGHTLY
    ok_lb = all(_in(r, lo, hi, hi_open=True) for r in ratio)
    return [
        Claim(f"MxV 5000x1000 int32, {CALIBRATED}, 10 Mbps: every parallel run (E2–E5, every c0) vs sequential "
              f"on PC1 ({t_seq * 1e3:.0f} ms); ours = min T_par/T_seq (the paper gives no number; "
              f"{SEQ_FACTOR}x is the note's derived model)", "sequential execution is faster",
              slowest, f">= {SEQ_FACTOR}", slowest >= SEQ_FACTOR),
        Claim(f"MxV: T_LB/T_noLB (modified Eq. 1, slowest first) for E2/E4 then E3/E5, c0 = "
              f"{', '.join(map(str, C0_VALUES))}; LB needs {lb_rounds} rounds vs {eq_rounds} at c0 = 10 (the "
              f"formula starves late-sent slaves, note §2.5). Reading of 'lightly smaller': smaller (< 1) by "
              f"at most {1 - lo:.0%}" + ("" if ok_lb else ". FAILS"),
              "lightly smaller", ratio, f"in [{lo:.2f}, {hi:.2f}) each", ok_lb),
        Claim(f"MxV with master CPU cost {MASTER_COST_PER_BYTE:g} s/byte at speed 1 (our assumption, not fitted; "
              f"the row holds only because of it: without it T(E2)/T(E3) = {free:.3f} at c0 = 10): "
              f"T(E2)/T(E3) then T(E4)/T(E5), c0 = {', '.join(map(str, C0_VALUES))}",
              "E2 and E4 spend more execution time than E3 and E5", masters, "> 1 each",
              min(masters) > 1.0),
    ]


def _claim_c0() -> Claim:
    """§6.6 [WEAK]: smaller c0 is (a little) better. Reported, not asserted."""
    parts, monotone = [], {}
    for rounding in ("floor", "carry"):
        for pair, master in PAIRS.items():
            t = [_gacsys_time("calibrated", master, c0, True, rounding) for c0 in C0_VALUES]
            parts.append(f"{pair[:2]} {rounding}: " + "/".join(f"{x:.1f}" for x in t))
            monotone[rounding] = monotone.get(rounding, True) and all(a <= b for a, b in zip(t, t[1:]))
    said = "; ".join(f"{r}: {'holds' if m else 'does not hold'}" for r, m in monotone.items())
    return reported(f"GACSYS, {CALIBRATED}: T_LB in s for c0 = {'/'.join(map(str, C0_VALUES))}; smaller c0 "
                    f"faster in both pairs with {said}",
                    "increasing initial data size, LB spends a little more execution time",
                    "; ".join(parts), "note §6.6: fragile, floor rounding pins the slowest slave at c0 = 1")


def _claim_unit_example() -> Claim:
    """§6.7 [UNIT]: Eq. 1 on the note's hand-computed example."""
    ex = UNIT_EXAMPLE
    n = len(ex["units"])
    view = LoopView(n_items=1000, n_nodes=n, speeds=[1.0] * n, round=1, last_chunk=list(ex["units"]),
                    exe_time=list(ex["exe"]), calc_time=list(ex["calc"]))
    b = Sanchez()
    b.start(view)
    got = b.allocate(view)
    return Claim("Eq. 1 on t_exe = [2, 3, 6], t_calc = [1.5, 2.5, 5.5], n = [10, 10, 10], floor",
                 "[36, 22, 10] (hand-computed, note §6.7)", got, "exact", got == ex["expected"])


def claims() -> list[Claim]:
    """Every claim of notes/004_sanchez.md §6, in its rank order."""
    return [*_claims_gain(), *_claims_sequential(), *_claims_balance(), *_claims_step(), *_claims_mxv(),
            _claim_c0(), _claim_unit_example()]


if __name__ == "__main__":
    print(format_claims(claims()))
