"""What starting dlbkit costs: `import dlbkit`, `dlbkit --help`, and the first use of the API.

Usage: python benchmarks/bench_import.py [--repeat K] [--against SRC]

Each case runs in a fresh interpreter, K times; with --against (the ``src`` folder of another
checkout, e.g. a ``git worktree`` of an older commit) the two trees alternate A B A B, so a busy
machine slows both alike. Printed: the best and the median wall time of each case, and for
`import dlbkit` also the cumulative time ``python -X importtime`` gives the package (best of K),
and which of networkx, scipy, matplotlib, pymetis, highspy and tqdm the import loaded.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HEAVY = ("networkx", "scipy", "matplotlib", "pymetis", "highspy", "tqdm")
CASES = {
    "import dlbkit": ["-c", "import dlbkit"],
    "dlbkit --help": ["-m", "dlbkit", "--help"],
    "first simulate": ["-c", "import dlbkit; dlbkit.simulate"],
}


def _env(src: str) -> dict:
    return {**os.environ, "PYTHONPATH": src}


def wall(src: str, argv: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=_env(src), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def importtime(src: str) -> float:
    """The cumulative microseconds -X importtime reports for the dlbkit package, in seconds."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import dlbkit"], env=_env(src),
                          check=True, capture_output=True, text=True)
    last = [ln for ln in done.stderr.splitlines() if ln.rstrip().endswith("| dlbkit")][-1]
    return int(last.split("|")[1]) / 1e6


def loaded(src: str) -> list[str]:
    code = f"import sys, dlbkit; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], env=_env(src), check=True, capture_output=True, text=True)
    return done.stdout.split()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--against", help="the src folder of another checkout, measured alternately")
    args = ap.parse_args()
    here = str(Path(__file__).resolve().parents[1] / "src")
    trees = {"this": here} | ({"against": str(Path(args.against).resolve())} if args.against else {})
    times = {(t, c): [] for t in trees for c in CASES}
    imports = {t: [] for t in trees}
    for _ in range(args.repeat):
        for t, src in trees.items():  # A B A B
            for c, argv in CASES.items():
                times[t, c].append(wall(src, argv))
            imports[t].append(importtime(src))
    print(f"{'tree':8} {'case':16} {'best s':>8} {'median s':>9}")
    for (t, c), v in times.items():
        print(f"{t:8} {c:16} {min(v):8.3f} {statistics.median(v):9.3f}")
    for t, src in trees.items():
        heavy = " ".join(loaded(src)) or "none of them"
        print(f"{t:8} -X importtime dlbkit (best): {min(imports[t]):.3f} s; loads: {heavy}")


if __name__ == "__main__":
    main()
