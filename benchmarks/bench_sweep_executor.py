"""A 1 000-run sweep of tiny runs: local processes (``--jobs``) against MPI ranks (``--executor mpi``).

Usage (from the repository root, the venv's python and mpiexec):
  python benchmarks/bench_sweep_executor.py [--repeat 3] [--runs 1000] [--items 100]   # drives all below

It writes a 1 000-run experiment (SS and GSS × 500 repetitions of a 100-item divisible loop on a
3-node platform; --items for longer runs), then times, each --repeat times into a fresh directory, best kept:
  sweep only (``run_sweep``, in this script):
    python bench_sweep_executor.py --sweep local --jobs J --batch B EXP     J = 1; J = 2 with B = 1, auto
    mpiexec -n N python bench_sweep_executor.py --sweep mpi --batch B EXP   N = 2, 3 (N-1 ranks run the runs),
                                                                            B = 1 (one run per task), auto
  the whole command (start-up, sweep, summary, plots, report):
    python -m dlbkit simulate EXP --jobs 2 --batch B                        B = 1, auto
    mpiexec -n 3 python -m dlbkit simulate EXP --executor mpi --batch B     B = 1, auto
and checks that every sweep's results.csv holds the same rows (all but wall_s). ``--batch 1`` is the
sweep as it was before batches (one run per task); ``auto`` is the default (experiments/batching.py).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXPERIMENT = """
name = "sweep_bench"
description = "1 000 tiny runs for the sweep-executor benchmark"
repetitions = {reps}
seed = 11

[platform]
nodes = [{{name = "m", speed = 1.0}}, {{name = "a", speed = 1.0}}, {{name = "b", speed = 2.0}}]
network = {{latency = 1e-3, bandwidth = 1e8}}

[workload]
kind = "divisible"
items = {items}
cost = {{dist = "uniform", low = 0.5, high = 1.5}}

[engine]
master = "m"

[[balancers]]
name = "ss"

[[balancers]]
name = "gss"
"""

HERE = Path(__file__).resolve()
SRC = HERE.parents[1] / "src"
MPIEXEC = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


def sweep_only(kind: str, jobs: int, batch: str, exp_path: str, out: str) -> None:
    """Time run_sweep alone; rank 0 (or the only process) prints 'SWEEP <seconds> <runs> <workers>'."""
    from dlbkit.face.experiments import load_experiment, run_sweep

    exp = load_experiment(exp_path)
    if kind == "local":
        t0 = time.perf_counter()
        sweep = run_sweep(exp, out, jobs=jobs, batch=batch)
        print(f"SWEEP {time.perf_counter() - t0:.4f} {sweep.ran} {jobs}", flush=True)
        return
    from mpi4py import MPI
    from mpi4py.futures import MPICommExecutor

    with MPICommExecutor(MPI.COMM_WORLD, root=0) as ex:
        if ex is not None:
            t0 = time.perf_counter()
            sweep = run_sweep(exp, out, executor=ex, batch=batch)
            print(f"SWEEP {time.perf_counter() - t0:.4f} {sweep.ran} {MPI.COMM_WORLD.Get_size() - 1}", flush=True)


def rows(path: Path) -> dict:
    with path.open(newline="") as fh:
        return {(r["label"], r["repetition"]): {k: v for k, v in r.items() if k != "wall_s"} for r in csv.DictReader(fh)}


def timed(cmd: list[str], env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return wall, r.stdout


def drive(repeat: int, n_runs: int, items: int) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "MPLBACKEND": "Agg"}
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        exp = tmp / "sweep_bench.toml"
        exp.write_text(EXPERIMENT.format(reps=n_runs // 2, items=items))
        configs = [("sweep only, --jobs 1", [py, str(HERE), "--sweep", "local", "--jobs", "1", str(exp)])]
        for b in ("1", "auto"):
            configs += [
                (f"sweep only, --jobs 2, --batch {b}",
                 [py, str(HERE), "--sweep", "local", "--jobs", "2", "--batch", b, str(exp)]),
                (f"sweep only, mpiexec -n 2 (1 worker rank), --batch {b}",
                 [MPIEXEC, "-n", "2", py, str(HERE), "--sweep", "mpi", "--batch", b, str(exp)]),
                (f"sweep only, mpiexec -n 3 (2 worker ranks), --batch {b}",
                 [MPIEXEC, "-n", "3", py, str(HERE), "--sweep", "mpi", "--batch", b, str(exp)]),
            ]
        for b in ("1", "auto"):
            configs += [
                (f"dlbkit simulate --jobs 2 --batch {b}",
                 [py, "-m", "dlbkit", "simulate", str(exp), "--jobs", "2", "--batch", b, "--no-progress"]),
                (f"mpiexec -n 3 dlbkit simulate --executor mpi --batch {b}",
                 [MPIEXEC, "-n", "3", py, "-m", "dlbkit", "simulate", str(exp), "--executor", "mpi", "--batch", b,
                  "--no-progress"]),
            ]
        reference = None
        best_sweep = {name: float("inf") for name, _ in configs}
        best_wall = dict(best_sweep)
        workers = {name: 2 for name, _ in configs}
        for k in range(repeat):  # configurations interleaved: a change of the machine's load hits them all
            for name, cmd in configs:
                out = tmp / f"out{k}"
                shutil.rmtree(out, ignore_errors=True)
                full = cmd + (["--out", str(out)] if "simulate" in cmd else [str(out)])
                wall, stdout = timed(full, env)
                best_wall[name] = min(best_wall[name], wall)
                for line in stdout.splitlines():
                    if line.startswith("SWEEP "):
                        _, sec, ran, w = line.split()
                        assert int(ran) == n_runs, line
                        best_sweep[name], workers[name] = min(best_sweep[name], float(sec)), int(w)
                got = rows(out / "results.csv")
                assert len(got) == n_runs
                if reference is None:
                    reference = got
                assert got == reference, f"{name}: rows differ from the first configuration's"
        print(f"{n_runs} runs of {items} items; best of {repeat}; per worker = runs/s ÷ processes running runs "
              "(rank 0 runs none)")
        print(f"{'configuration':60s} {'workers':>7s} {'sweep s':>8s} {'runs/s':>8s} {'per worker':>10s} "
              f"{'command s':>9s}")
        for name, _ in configs:
            w = workers[name]
            if best_sweep[name] < float("inf"):
                rate = n_runs / best_sweep[name]
                print(f"{name:60s} {w:7d} {best_sweep[name]:8.2f} {rate:8.0f} {rate / w:10.0f} {best_wall[name]:9.2f}")
            else:
                rate = n_runs / best_wall[name]
                print(f"{name:60s} {w:7d} {'':>8s} {rate:8.0f} {rate / w:10.0f} {best_wall[name]:9.2f}"
                      "   (runs/s over the whole command)")
        print("every configuration wrote the same rows (all fields but wall_s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sweep", choices=["local", "mpi"], help="time one sweep (used by the driver)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--batch", default="1", help="(with --sweep) runs per task: 1 or auto")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=1000, help="runs in the sweep (even; default 1000)")
    ap.add_argument("--items", type=int, default=100, help="items per run (default 100: a run of < 1 ms)")
    ap.add_argument("paths", nargs="*", help="(with --sweep) EXPERIMENT OUT_DIR")
    a = ap.parse_args()
    if a.sweep:
        sweep_only(a.sweep, a.jobs, "auto" if a.batch == "auto" else int(a.batch), *a.paths)
    else:
        drive(a.repeat, a.runs, a.items)


if __name__ == "__main__":
    main()
