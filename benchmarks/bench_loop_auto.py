"""balancer="auto" on a time-stepping loop, against every fixed chunking balancer (issue 16).

Usage: python benchmarks/bench_loop_auto.py sim [--steps 50] [--items 2000] [--latency 5e-5] [--margin M]
       python benchmarks/bench_loop_auto.py real [--steps 10] [--items 2000] [--balancers auto,awf-c,...]
       python benchmarks/bench_loop_auto.py predict [--items 100000] [--workers 16]

sim: the divisible simulator with steps=: four workers at speeds 1, 1, 0.5, 0.25; worker 1's
availability drops to 0.25 half-way (at the time the default balancer, AWF-C, ends step steps/2);
each step 2 000 items of uneven cost (exponential, mean 0.2 ms, drawn once: the same loop every
step); a request's round trip 0.1 ms. Prints every fixed balancer's total time, auto's, the best
fixed in hindsight, and auto's prediction error per step (predicted / measured − 1 of the step
it ran with a prediction).
real: the same on dlbkit.Loop with four emulated workers (the same platform as a TOML-less Platform,
the drop at half the default's expected total); items are busy loops; --rounds R runs every
balancer R times in ABBA order (the machine's load drifts between runs).
predict: the time of one prediction for a step of --items items on --workers workers over every
default candidate, coarsened (max_items 2048, the default) and not, and the error coarsening costs.
"""

import argparse
import statistics
import sys
import time

import numpy as np

from dlbkit.families.divisible.balancers.auto import DEFAULT_CANDIDATES, ROBUST_DEFAULT
from dlbkit.balancers.registry import resolve
from dlbkit.model.availability import Step
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.families.divisible.model.workload import CostModel, Divisible
from dlbkit.families.divisible.sim.auto import predict
from dlbkit.families.divisible.sim.engine import simulate_divisible
from timing import best_of

SPEEDS = (1.0, 1.0, 0.5, 0.25)
MEAN = 2e-4  # seconds per item at speed 1
LATENCY = 5e-5  # one way


def platform(drop_at: float | None, latency: float = LATENCY) -> Platform:
    nodes = [Node("master")]
    for i, s in enumerate(SPEEDS):
        avail = Step(at=drop_at, level=0.25) if (i == 1 and drop_at is not None) else 1.0
        nodes.append(Node(f"w{i}", s, availability=avail))
    return Platform(nodes, Network(latency, 1e12), name="four-workers")


def sim(a) -> None:
    wl = Divisible(a.items, cost=CostModel("exponential", mean=MEAN))
    ref = simulate_divisible(platform(None, a.latency), wl, resolve(ROBUST_DEFAULT), steps=a.steps // 2, seed=a.seed)
    drop = ref.meta["time_steps"][-1]["end"]
    plat = platform(drop, a.latency)
    rows = []
    t0 = time.perf_counter()
    for name in DEFAULT_CANDIDATES + ("auto",):
        b = resolve(name, {"margin": a.margin} if name == "auto" and a.margin is not None else None)
        tr = simulate_divisible(plat, wl, b, steps=a.steps, seed=a.seed)
        rows.append((name, tr.meta["time_steps"][-1]["end"], tr))
    wall = time.perf_counter() - t0
    fixed = sorted((r for r in rows if r[0] != "auto"), key=lambda r: r[1])
    auto = [r for r in rows if r[0] == "auto"][0]
    default = [r for r in rows if r[0] == ROBUST_DEFAULT][0]
    print(f"sim: {a.steps} steps of {a.items} items (exponential, mean {MEAN * 1e3:g} ms), speeds {SPEEDS}, "
          f"worker 1 drops to 0.25 at t = {drop:.4g} s; one-way latency {a.latency * 1e3:g} ms; seed {a.seed}; "
          f"{wall:.1f} s wall for all runs")
    print(f"{'balancer':<10} {'total (s)':>10} {'vs best fixed':>14}")
    for name, total, _ in sorted(rows, key=lambda r: r[1]):
        print(f"{name:<10} {total:10.4f} {total / fixed[0][1]:14.3f}")
    print(f"auto / best fixed ({fixed[0][0]}): {auto[1] / fixed[0][1]:.4f}; "
          f"auto / default ({ROBUST_DEFAULT}): {auto[1] / default[1]:.4f}")
    # the fluid bound: all steps' work poured into the workers' capacity with no barrier between steps,
    # no request round trip and items divisible at will; no balancer can finish before it, so
    # default / bound - 1 is the most any choice (auto's included) could gain over the default
    work = default[2].total_work
    before = sum(SPEEDS) * drop
    after = sum(SPEEDS) - 0.75 * SPEEDS[1]  # worker 1 at 0.25 of its speed
    bound = work / sum(SPEEDS) if work <= before else drop + (work - before) / after
    print(f"fluid lower bound {bound:.4f} s: default / bound {default[1] / bound:.4f}, best fixed / bound "
          f"{fixed[0][1] / bound:.4f}, auto / bound {auto[1] / bound:.4f}")
    recs = [s["auto"] for s in auto[2].meta["time_steps"]]
    errs = [r["predicted"] / r["measured"] - 1 for r in recs if r.get("predicted")]
    used = [r["used"] for r in recs]
    evals = [(k, r["evaluated"], r["next"]) for k, r in enumerate(recs) if r["evaluated"]]
    print("auto used per step:", " ".join(used))
    print("evaluations (after step k: why -> chosen):", evals)
    print("prediction error per step (%):", " ".join(f"{100 * e:+.1f}" for e in errs))
    if errs:
        print(f"|error| mean {100 * statistics.mean(abs(e) for e in errs):.2f}%, max "
              f"{100 * max(abs(e) for e in errs):.2f}%")


def busy(x):
    # item cost from a fixed exponential draw (the same every step), as a busy loop
    n = COUNTS[x]
    s = 0
    for i in range(n):
        s += i
    return s


COUNTS: list = []


def real(a) -> None:
    import dlbkit
    global COUNTS
    rng = np.random.default_rng(a.seed)
    # loop iterations calibrated to about MEAN seconds each on average
    t0 = time.perf_counter()
    s = 0
    for i in range(200_000):
        s += i
    per = (time.perf_counter() - t0) / 200_000
    COUNTS = [max(1, int(c / per)) for c in rng.exponential(MEAN, a.items)]
    expected = a.items * MEAN / sum(SPEEDS) * 1.15  # a step's rough length, for the drop's time
    names = a.balancers.split(",")
    print(f"real: {a.steps} steps of {a.items} busy-loop items (≈ exponential, mean {MEAN * 1e3:g} ms), "
          f"4 emulated workers {SPEEDS}, worker 1 at 0.25 from t ≈ {a.steps / 2 * expected:.3g} s of each pool")
    order = [n for r in range(a.rounds) for n in (names if r % 2 == 0 else names[::-1])]  # ABBA: load drifts
    for name in order:
        # the drop is on each pool's own clock: half of the default's expected total
        plat = Platform([Node(f"w{i}", s, availability=Step(at=a.steps / 2 * expected, level=0.25) if i == 1 else 1.0)
                         for i, s in enumerate(SPEEDS)], Network(LATENCY, 1e12))
        with dlbkit.Loop(busy, emulate=plat, balancer=name, seed=a.seed) as loop:
            t0 = time.perf_counter()
            for _ in range(a.steps):
                loop.map(range(a.items))
            wall = time.perf_counter() - t0
            steps = [r.metrics["makespan"] for r in loop.steps]
            recs = [r.trace.meta.get("auto") for r in loop.steps]
        line = f"{name:<8} wall {wall:7.3f} s, sum of step makespans {sum(steps):7.3f} s"
        if name == "auto":
            errs = [r["predicted"] / r["measured"] - 1 for r in recs if r and r.get("predicted")]
            line += "; used " + " ".join(r["used"] for r in recs)
            if errs:
                line += f"; prediction error mean |{100 * statistics.mean(abs(e) for e in errs):.1f}|%, " \
                        f"per step " + " ".join(f"{100 * e:+.0f}" for e in errs)
        print(line, flush=True)


def timing(a) -> None:
    rng = np.random.default_rng(a.seed)
    costs = rng.exponential(1.0, a.items)
    speeds = list(rng.uniform(0.25, 1.0, a.workers))
    nominal = [1.0] * a.workers
    out = {}
    for label, mx in (("coarsened (max_items 2048)", 2048), ("coarsened (max_items 8192)", 8192),
                      ("every item", a.items)):
        best, (preds, _) = best_of(lambda: predict(costs, speeds, nominal, DEFAULT_CANDIDATES,
                                                   simulate=simulate_divisible, latency=1e-4, max_items=mx),
                                   a.repeat if mx < a.items else 1)
        out[label] = dict(preds)
        print(f"predict {a.items} items, {a.workers} workers, {len(DEFAULT_CANDIDATES)} candidates, {label}: "
              f"{best:.3f} s (best of {a.repeat if mx < a.items else 1}); best {preds[0][0]}")
    full = out["every item"]
    for label in list(out)[:-1]:
        errs = {n: out[label][n] / full[n] - 1 for n in full}
        worst = max(errs, key=lambda n: abs(errs[n]))
        same = sorted(full, key=full.get)[0] == sorted(out[label], key=out[label].get)[0]
        pick = min(out[label], key=out[label].get)
        regret = full[pick] / min(full.values()) - 1
        print(f"  {label}: error vs every item: median |{100 * statistics.median(abs(e) for e in errs.values()):.2f}|%, "
              f"worst {worst} {100 * errs[worst]:+.1f}%; same best: {same} (its pick {pick} is "
              f"{100 * regret:.2f}% above the best on every item)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["sim", "real", "predict"])
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--items", type=int, default=None)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--balancers", default="auto,awf-c,static,fac2")
    ap.add_argument("--margin", type=float, default=None, help="sim: auto's margin (default: its own, 0.05)")
    ap.add_argument("--latency", type=float, default=LATENCY, help=f"sim: one-way latency in s (default {LATENCY:g})")
    ap.add_argument("--rounds", type=int, default=1, help="real: run the balancers this many times, in ABBA order")
    a = ap.parse_args()
    if a.what == "sim":
        a.steps, a.items = a.steps or 50, a.items or 2000
        sim(a)
    elif a.what == "real":
        a.steps, a.items = a.steps or 10, a.items or 2000
        real(a)
    else:
        a.items = a.items or 100_000
        timing(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
