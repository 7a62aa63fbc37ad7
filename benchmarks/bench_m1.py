"""Reference model M1 (docs/reference-models.md) through the general divisible engine + SS.

Usage: python benchmarks/bench_m1.py [--repeat K]
Prints, for each size, the makespan and event count against the reference, and the best wall time
and events per second of K runs (wall time covers building the platform and the whole simulation).
"""

import argparse

from dlbkit.face.bench import run_m1

REFERENCE = {(16, 10_000): (832.594, 30_032), (128, 100_000): (1044.558, 300_256),
             (1024, 1_000_000): (1303.304, 3_002_048)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'P':>5} {'N':>9} {'makespan':>12} {'ref':>10} {'rel err':>9} {'events':>9} {'ok':>3} "
          f"{'wall_s':>7} {'events/s':>11}")
    for (p, n), (ref_ms, ref_ev) in REFERENCE.items():
        runs = [run_m1(p, n) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["wall_s"])
        rel = abs(best["makespan"] - ref_ms) / ref_ms
        ok = rel <= 1e-9 and best["events"] == ref_ev
        print(f"{p:>5} {n:>9} {best['makespan']:>12.6f} {ref_ms:>10.3f} {rel:>9.1e} {best['events']:>9} "
              f"{'yes' if ok else 'NO':>3} {best['wall_s']:>7.3f} {best['events_per_s']:>11,.0f}")


if __name__ == "__main__":
    main()
