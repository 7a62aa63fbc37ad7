"""``dlbkit simulate EXPERIMENT``: every run of an experiment file, the comparison table, results.csv,
summary.csv, the plots and report.html (``--executor mpi`` under ``mpiexec``: the runs on the ranks)."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
import warnings
from importlib import resources
from pathlib import Path

from dlbkit.errors import ConfigError, DlbkitError, closest
from dlbkit.face.cli.bars import SweepBar
from dlbkit.face.cli.options import add_import, add_launch, add_progress, check_launch_flags, start_job
from dlbkit.face.cli.ranks import env_rank, env_size

__all__ = ["HELP", "DESCRIPTION", "arguments", "command", "shipped_experiments", "find_experiment",
           "master_role"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit simulate --help``
HELP = "run an experiment file: table, results.csv, summary.csv, plots, report"
DESCRIPTION = ("Run every balancer × grid point × repetition of an experiment, print the "
               "comparison (mean ± 95% CI), and write results.csv, summary.csv, PNG plots "
               "and report.html. Rerunning resumes: finished runs are skipped.")


def arguments(s: argparse.ArgumentParser) -> None:
    """``simulate``'s arguments."""
    s.add_argument("experiment", metavar="EXPERIMENT",
                   help="an experiment TOML file, or the name of a shipped one (e.g. 'demo')")
    s.add_argument("--out", metavar="DIR", help="output directory (default: ./out/<experiment name>)")
    s.add_argument("--jobs", "-j", metavar="N", type=int, default=1, help="worker processes (default 1)")
    s.add_argument("--executor", metavar="NAME", default="local",
                   help="where the runs run: local (--jobs processes; the default), mpi (the ranks of the "
                        "mpiexec -n N job this command runs in: rank 0 runs the sweep, the others the runs), "
                        "dask (the workers of --scheduler)")
    s.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (--executor dask)")
    s.add_argument("--batch", metavar="N|auto", default="auto",
                   help="runs per task sent to the --jobs processes or the executor's workers: 1 (one run per "
                        "task), N, or auto (the default: about 0.1 s of measured work per task, shrinking by "
                        "factoring as the sweep ends; runs of 0.1 s or more go one per task)")
    add_launch(s, "with --executor mpi: rank 0 runs the sweep, the others its runs")
    add_progress(s, "a progress bar on stderr: of the runs, or of the work done inside the run when there is "
                    "one run to do")
    add_import(s)
    s.set_defaults(func=command)


def shipped_experiments() -> dict[str, Path]:
    """Shipped experiment files by name (src/dlbkit/data/experiments/*.toml)."""
    folder = resources.files("dlbkit") / "data" / "experiments"
    try:
        return {Path(str(f)).stem: Path(str(f)) for f in folder.iterdir() if str(f).endswith(".toml")}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def find_experiment(name: str) -> Path:
    """*name* if it is an existing file, else the shipped experiment of that name."""
    p = Path(name)
    if p.is_file():
        return p
    shipped = shipped_experiments()
    stem = p.name[:-5] if p.name.endswith(".toml") else p.name
    if p.parent == Path(".") and stem in shipped:
        return shipped[stem]
    raise ConfigError("EXPERIMENT", name, "an existing experiment TOML file or a shipped experiment name ("
                      + (", ".join(sorted(shipped)) or "none shipped") + ")", suggest=closest(stem, shipped))


def command(args) -> int:
    """``dlbkit simulate``: the arguments checked, the executor opened, the sweep run (:func:`_simulate`)."""
    from dlbkit.families.simulate import UnusedAvailabilityWarning
    from dlbkit.face.experiments.batching import check_batch
    from dlbkit.face.experiments.executors import SERVED, check_executor, open_executor

    check_launch_flags(args)
    if args.ranks is not None:  # dlbkit starts the MPI job on this same command, without --ranks
        if args.executor != "mpi":
            raise ConfigError("--ranks", args.ranks, "used with --executor mpi (the local executor's count is "
                              "--jobs)")
        find_experiment(args.experiment)  # a missing file said once, here, not by every rank
        return start_job(args)
    rank = env_rank()  # under mpiexec every rank checks the same arguments: rank 0 alone says what is wrong
    try:
        from dlbkit.runtime.backends.local import check_workers
        check_workers(args.jobs, "--jobs", more="--executor mpi or dask")  # >= 1, and processes that can start
        check_executor(args.executor, jobs=args.jobs, scheduler=args.scheduler)
        args.batch = check_batch(args.batch, "--batch")
        if args.executor != "mpi" and env_size() > 1:
            raise ConfigError("--executor", args.executor, f"mpi when mpiexec starts {env_size()} ranks (each "
                              "rank would run the whole sweep into the same files)")
        with warnings.catch_warnings():  # said once by rank 0, for the sweep, not once per run
            warnings.simplefilter("ignore", UnusedAvailabilityWarning)
            with open_executor(args.executor, scheduler=args.scheduler) as (executor, where):
                if executor is SERVED:  # an MPI rank but 0: it ran rank 0's runs until the sweep ended
                    return 0
                return _simulate(args, executor, where)
    except DlbkitError:
        if rank != 0:
            return 2
        raise


def _simulate(args, executor, where: str) -> int:
    """The sweep of the experiment *args* names on *executor* (*where*: how it is said), printed and written."""
    from dlbkit.face.experiments import format_table, format_verdict, load_experiment, run_sweep, summarise, write_outputs

    path = find_experiment(args.experiment)
    try:
        exp = load_experiment(path)
    except ConfigError as e:
        if str(path) in e.field:
            raise
        raise ConfigError(f"{path}: {e.field}", e.value, e.allowed) from None
    out = Path(args.out) if args.out else Path("out") / exp.name
    if out.exists() and not out.is_dir():
        raise ConfigError("--out", str(out), "a directory (a file of that name exists)")
    args.out_dir = out
    print(f"{exp.name}: {exp.n_runs} runs ({len(exp.balancers)} balancers × {len(exp.points)} grid point(s) × "
          f"{exp.repetitions} repetitions), {where or f'{args.jobs} job(s)'}, output in {out}", flush=True)
    role = master_role(exp)
    if role:
        print(role, flush=True)
    progress = SweepBar(sys.stderr, args.progress, getattr(exp.family, "progress_unit", "items"))

    t0 = time.perf_counter()
    sweep = run_sweep(exp, out, jobs=args.jobs, executor=executor, progress=progress,
                      run_progress=progress.run if progress.enabled else None, batch=args.batch)
    summary = summarise(sweep.rows)
    for message in _unused_availability(exp, sweep.rows):
        print(f"dlbkit: warning: {message}", file=sys.stderr)
    print()
    print(format_table(summary, family=exp.family) if summary else "no successful runs")
    for line in format_verdict(summary, exp.family.bar_metrics[0]):
        print(line)
    images = write_outputs(sweep, summary=summary, jobs=args.jobs, command=shlex.join(["dlbkit", *args.argv]))
    n_png = sum(len(v) for v in images.values())
    print(f"\n{sweep.ran} runs done, {sweep.skipped} reused from an earlier sweep, {len(sweep.failures)} failed; "
          f"{time.perf_counter() - t0:.1f} s")
    print(f"wrote {out / 'results.csv'}, summary.csv, {n_png} PNG plots and report.html in {out}")
    if sweep.removed_to is not None:  # rows were moved (run_sweep counts what it moves)
        print(f"moved {sweep.removed} row(s) of runs the experiment no longer has from results.csv to "
              f"{sweep.removed_to.name}, and removed the plots dlbkit drew for them")
    if sweep.failures:
        print(f"\n{len(sweep.failures)} run(s) failed (recorded in results.csv; a rerun retries them):")
        for r in sweep.failures:
            pt = f" [{r['point']}]" if r["point"] else ""
            print(f"  {r['label']}{pt} repetition {r['repetition']}: {r['error']}")
        return 1
    return 0


def master_role(exp) -> str:
    """The line that says which node of a master–worker family's platform is the master, and
    whether it computes ("" for the other families)."""
    if exp.family is None or not exp.family.master_worker:
        return ""
    m = exp.engine.get("master", 0)
    name = exp.platform.nodes[m].name if isinstance(m, int) else m
    if exp.engine.get("master_computes", False):
        return f"master: node {name!r} hands out work and also computes ([engine] master_computes = true)"
    others = {b.engine.get("master_computes") for b in exp.balancers} - {None, False}
    note = "; some balancers set master_computes = true" if others else ""
    return (f"master: node {name!r} hands out work and does not compute ([engine] master, master_computes = "
            f"true to change){note}")


def _unused_availability(exp, rows) -> list[str]:
    """Nodes whose availability changes only after the longest run of the sweep ended."""
    from dlbkit.families.simulate import unused_availability

    spans = [float(r["makespan"]) for r in rows if r.get("status", "ok") == "ok"]
    if not spans or not all(math.isfinite(x) for x in spans):
        return []

    class _Longest:
        family = exp.family.name if exp.family is not None else ""
        makespan = max(spans)

    return [m.replace("after the run ended", "after every run ended").replace("(makespan", "(longest makespan")
            for m in unused_availability(exp.platform, _Longest)]
