"""``dlbkit run MODULE:FUNCTION``: a real parallel loop, FUNCTION(item) for every item on worker
processes or MPI ranks, handed out in chunks by a chunking balancer; ``--ranks N`` starts the MPI job
itself (:mod:`dlbkit.runtime.launch`)."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from dlbkit.errors import ConfigError, DlbkitError
from dlbkit.face.cli.loading import load_function
from dlbkit.face.cli.options import (add_balancer, add_emulate, add_json, add_launch, add_progress, add_record,
                                     add_seed, add_target, add_workers, check_balancer_arg, check_count,
                                     check_launch_flags, check_seed, emulate_arg, output_dir, parse_params,
                                     start_job, writable_file)
from dlbkit.face.cli.output import (balancer_label, jsonable, one_line, recorded_line, save_figure,
                                    warnings_in_one_line)
from dlbkit.face.cli.ranks import env_rank

__all__ = ["HELP", "DESCRIPTION", "arguments", "command"]

#: the command's line in ``dlbkit --help``, and the head of ``dlbkit run --help``
HELP = "run a real parallel loop: FUNCTION(item) for every item, balanced"
DESCRIPTION = ("Apply FUNCTION to every item (0..N-1 with --items N) on worker processes of this machine "
               "(--backend local, the default) or on MPI ranks, handing the items out in chunks chosen by "
               "a chunking balancer; print a one-line summary (items, workers, makespan, efficiency). "
               "With --backend mpi --ranks N, dlbkit starts the MPI job itself (mpiexec -n N) and, if a "
               "rank dies, ends with one line naming the rank and what it was doing; or start it as "
               "'mpiexec -n N dlbkit run ... --backend mpi'. Rank 0 coordinates, prints and writes files; "
               "the other N-1 ranks compute.")


def arguments(ru: argparse.ArgumentParser) -> None:
    """``run``'s arguments (the backends and the default balancer: the divisible family's real run)."""
    from dlbkit.families.run import BACKENDS
    from dlbkit.families.divisible.face.run import DEFAULT_BALANCER

    add_target(ru, "a module importable from the current directory or sys.path (work:step), or a .py file "
                   "(path/to/work.py:step), and the function to apply to each item")
    src = ru.add_mutually_exclusive_group(required=True)
    src.add_argument("--items", "-N", type=int, metavar="N", help="the items are the integers 0..N-1")
    src.add_argument("--items-file", metavar="FILE",
                     help="the items: a JSON list (a .json file) or one string per non-empty line")
    add_balancer(ru, "chunking", DEFAULT_BALANCER)
    add_workers(ru, "worker processes (local backend; default: the usable CPUs, or one per emulated worker)")
    ru.add_argument("--backend", choices=BACKENDS, default="local",
                    help="local processes (default), MPI ranks, or the workers of a Dask cluster (with --client)")
    ru.add_argument("--client", metavar="ADDRESS",
                    help="with --backend dask: the Dask scheduler's address, such as tcp://127.0.0.1:8786")
    add_launch(ru, "with --backend mpi: rank 0 coordinates, N-1 compute")
    add_emulate(ru, "slow the workers down as a platform's nodes would be: a platform TOML file (one worker per "
                    "core) or speed factors such as 1,1,0.5,0.25")
    ru.add_argument("--master", metavar="NODE", help="with a platform: the node that coordinates (not a worker)")
    add_seed(ru, "seed of emulated background load and random balancers (default 0)")
    add_record(ru)
    ru.add_argument("--journal", metavar="FILE",
                    help="append each finished chunk's results to FILE as they arrive; a rerun with the same FILE "
                         "(after a kill, a time limit, a failed item, a dead rank) computes only the items missing")
    ru.add_argument("--out", metavar="DIR", help="write gantt.png and work.png of the run in DIR")
    ru.add_argument("--results", metavar="FILE.json",
                    help="write the results, in item order, as a JSON list (values JSON cannot hold as text); "
                         "if an item fails, the results computed by then, as a JSON object from item index to result")
    add_progress(ru, "a progress bar on stderr")
    add_json(ru, "print the summary as a JSON object")
    ru.set_defaults(func=command)


def _read_items(path: str) -> list:
    """The items of ``--items-file``: a .json file's list, or one string per non-empty line."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError("--items-file", path, "an existing file: a JSON list (.json) or one item per line")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("--items-file", path, f"a readable UTF-8 text file ({one_line(str(e))})") from None
    if p.suffix == ".json":
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"--items-file {path}", one_line(str(e)), "a JSON list of items") from None
        if not isinstance(items, list):
            raise ConfigError(f"--items-file {path}", type(items).__name__, "a JSON list of items")
    else:
        items = [line.strip() for line in text.splitlines() if line.strip()]
    if not items:
        raise ConfigError("--items-file", path, "a file with at least one item")
    return items


def command(args) -> int:
    """``dlbkit run``: the MPI job started (``--ranks``), or the loop run here (on this rank)."""
    if args.ranks is not None:
        return _launch(args)
    check_launch_flags(args)
    rank = env_rank() if args.backend == "mpi" else 0
    try:
        return _run(args, rank)
    except DlbkitError:
        if rank != 0:  # every rank finds the same bad input: rank 0 alone says so
            return 2
        raise


def _launch(args) -> int:
    """``--ranks N``: check everything here (one line for bad input, not one per rank), then start
    ``mpiexec -n N`` on the same command without ``--ranks`` (:mod:`dlbkit.runtime.launch`)."""
    import importlib.util

    if args.backend != "mpi":
        raise ConfigError("--ranks", args.ranks, "used with --backend mpi (the local backend's count is --workers)")
    check_launch_flags(args)
    emulate = _checked(args)["emulate"]
    if isinstance(emulate, list) and len(emulate) != args.ranks - 1:
        raise ConfigError("--emulate", args.emulate, f"one speed per worker rank: {args.ranks - 1} for --ranks "
                          f"{args.ranks} (rank 0 coordinates)")
    if isinstance(emulate, str):  # a platform: its workers against the worker ranks, by the job's own check,
        # here, before the job starts (inside it, every rank said so and the command exited 3, not 2)
        from dlbkit.runtime.backends.mpi import emulation_problem
        from dlbkit.families.divisible.model.seeding import DIVISIBLE
        from dlbkit.runtime.emulation import emulation_from
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a speed's warning: said once, by the job's rank 0
                problem = emulation_problem(emulation_from(emulate, args.seed, args.master, layout=DIVISIBLE),
                                            args.ranks)
        except ConfigError as e:
            if e.field == "master":
                raise ConfigError("--master", e.value, e.allowed) from None
            raise
        if problem is not None:
            raise ConfigError("--emulate", problem.value, problem.allowed)
    if importlib.util.find_spec("mpi4py") is None:
        raise ConfigError("--backend", "mpi", "used with mpi4py installed (pip install 'dlbkit[mpi]')")
    return start_job(args)


def _checked(args) -> dict:
    """The arguments of ``dlbkit run`` checked and loaded (the function imported, the items read, the
    balancer resolved): a bad one raises a ConfigError before anything starts."""
    from dlbkit.families.divisible.model.workload import MAX_ITEMS
    from dlbkit.families.divisible.face.run import check_items
    if args.items is not None and not 1 <= args.items <= MAX_ITEMS:
        raise ConfigError("--items", args.items, f"an integer from 1 to {MAX_ITEMS:,} (dlbkit's limit: the "
                          "coordinator keeps every result in memory)")
    if args.workers is not None:
        check_count(args.workers, "--workers")
        if args.backend == "local":
            from dlbkit.runtime.backends.local import check_workers
            check_workers(args.workers, "--workers", more="--backend mpi on several machines, or dlbkit simulate")
        if args.backend == "mpi":
            raise ConfigError("--workers", args.workers, "omitted with --backend mpi (the workers are the "
                              "mpiexec ranks but rank 0)")
    if args.client is not None and args.backend != "dask":
        raise ConfigError("--client", args.client, "used with --backend dask")
    if args.backend == "dask" and args.client is None:
        raise ConfigError("--client", None, "the Dask scheduler's address with --backend dask (tcp://HOST:PORT)")
    if args.master is not None and args.emulate is None:
        raise ConfigError("--master", args.master, "used with --emulate PLATFORM.toml")
    params = parse_params(args.param)
    record = writable_file(args.record, "--record")
    results_file = writable_file(args.results, "--results")
    journal = writable_file(args.journal, "--journal")
    check_seed(args.seed)
    out = output_dir(args.out)
    emulate = emulate_arg(args.emulate)
    items = range(args.items) if args.items is not None else check_items(_read_items(args.items_file), "--items-file")
    fn = load_function(args.target)
    check_balancer_arg(args.balancer, "chunking", params)  # reported before any worker starts
    return dict(params=params, record=record, results_file=results_file, out=out, emulate=emulate, items=items, fn=fn,
                journal=journal)


def _as_flag(e: ConfigError) -> ConfigError:
    """*e*, said with the flag where it names the API's name of one (emulate: its length against a
    job's ranks, checked by the run under a bare mpiexec, where no --ranks told the command line the
    count)."""
    if e.field in ("master", "workers", "seed", "emulate", "journal"):
        return ConfigError(f"--{e.field}", e.value, e.allowed, suggest=e.suggest)
    return e


def _run(args, rank: int) -> int:
    """The loop run with this process as *rank* (0 when not under mpiexec); its summary printed by rank 0."""
    from dlbkit.errors import TaskError
    from dlbkit.families.divisible.face.run import run_map
    from dlbkit.runtime.progress import line_mode

    c = _checked(args)
    params, record, results_file, out, emulate, items, fn = (c[k] for k in ("params", "record", "results_file", "out",
                                                                            "emulate", "items", "fn"))
    try:
        with warnings_in_one_line(rank):
            r = run_map(fn, items, balancer=args.balancer, params=params, backend=args.backend, workers=args.workers,
                        client=args.client, progress=line_mode(args.progress), emulate=emulate, master=args.master, seed=args.seed,
                        record=record,  # written by run_map: the whole run, or the part before a failed item
                        journal=c["journal"])
    except ConfigError as e:
        raise _as_flag(e) from None
    except SystemExit as e:
        from dlbkit.runtime.backends.mpi import Rejected
        if isinstance(e, Rejected) and e.error is not None:  # a worker rank under a bare mpiexec: rank 0's
            raise e.naming(_as_flag(e.error)) from None      # error, named as rank 0 names it
        raise
    except TaskError as e:
        if rank == 0:
            print(e.remote_traceback.rstrip(), file=sys.stderr)
            print(f"dlbkit: error: {one_line(str(e).splitlines()[0])}", file=sys.stderr)
            _keep_part(e, record, results_file)
        return 1
    if args.backend == "mpi":
        from mpi4py import MPI
        if MPI.COMM_WORLD.Get_rank() != 0:
            return 0
    m = r.metrics
    tr = r.trace
    summary = {"function": args.target, "items": len(items), "workers": tr.n_nodes, "backend": args.backend,
               "balancer": r.balancer.name, "params": r.balancer.get_params(), "makespan": m["makespan"],
               "lower_bound": m["lower_bound"], "efficiency": m["efficiency"], "imbalance": m["imbalance"],
               "chunks": int(m["chunks"]), "messages": int(m["messages"])}
    written = []
    if "journal" in tr.meta:
        summary["journal"] = tr.meta["journal"]
        written.append(f"journal {tr.meta['journal']['path']}: {tr.meta['journal']['reused']} results reused, "
                       f"{tr.meta['journal']['computed']} computed")
    if record is not None:
        summary["record"] = str(record)
        written.append(recorded_line(record))
    if results_file is not None:
        results_file.write_text(json.dumps([jsonable(x) for x in r.results]) + "\n", encoding="utf-8")
        summary["results"] = str(results_file)
        written.append(f"wrote the results in {results_file}")
    if out is not None:
        summary["plots"] = [str(p) for p in _run_plots(r, out, args.target)]
        written.append(f"wrote gantt.png and work.png in {out}")
    if args.json:
        print(json.dumps(jsonable(summary)))
        return 0
    label = balancer_label(r.balancer.name, r.balancer.get_params())
    if summary.get("journal", {}).get("computed") == 0:  # no run to measure: say so, not "efficiency nan"
        print(f"{args.target}: {summary['items']} items, every result from the journal (nothing computed)")
    else:
        print(f"{args.target}: {summary['items']} items on {summary['workers']} workers ({args.backend}, {label}): "
              f"makespan {m['makespan']:.4g} s, efficiency {m['efficiency']:.2f}, {summary['chunks']} chunks")
    if isinstance(emulate, str):  # a platform: say which nodes compute (simulate's default differs)
        print(f"emulated {emulate}: " + (f"node {args.master!r} coordinates and does not compute; the other "
                                         "nodes' cores are the workers" if args.master is not None else
                                         "every node computes, one worker per core (the coordinator is not a "
                                         "platform node; --master NODE makes one)"))
    for line in written:
        print(line)
    return 0


def _keep_part(e, record: Path | None, results_file: Path | None) -> None:
    """After a failed item: the part that ran kept where --record and --results asked, each said on stderr."""
    if e.trace is None:
        return
    part = e.trace.meta["partial"]
    what = f"the {part['done']} of {part['of']} items computed before it"
    if record is not None:  # run_map wrote it (families.run.recording_what_ran)
        print(f"dlbkit: recorded the part that ran in {record}", file=sys.stderr)
    if results_file is not None:
        results_file.write_text(json.dumps({str(i): jsonable(v) for i, v in sorted(e.results.items())}) + "\n",
                                encoding="utf-8")
        print(f"dlbkit: wrote {what} in {results_file}, as an object from item index to result", file=sys.stderr)


def _run_plots(r, out: Path, label: str) -> list[Path]:
    """The run's Gantt chart and work over time drawn in *out* (*label*: the function's name)."""
    out.mkdir(parents=True, exist_ok=True)
    tr = r.trace
    paths = [out / "gantt.png", out / "work.png"]
    fig = r.plot_gantt(title=f"Gantt chart: {label}, {r.balancer.name}, {tr.n_intervals} chunks, "
                             f"makespan {r.makespan:.4g} s")
    save_figure(fig, paths[0], dpi=110)
    fig = r.plot_work(title=f"Work done per worker: {label}, {r.balancer.name}")
    save_figure(fig, paths[1], dpi=110)
    return paths
