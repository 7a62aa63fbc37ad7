"""The ``dlbkit`` command line.

Subcommands::

    dlbkit simulate EXPERIMENT.toml [--out DIR] [--jobs N] [--batch N|auto]   run a sweep; table, CSVs, plots, report
    mpiexec -n N dlbkit simulate EXPERIMENT.toml --executor mpi   the same sweep's runs on N-1 MPI ranks
    dlbkit balancers [--json] [--kind KIND]                  the registered balancers
    dlbkit families [--json]                                  the workload families, their engines and kinds
    dlbkit bench m1|m2 --workers P --tasks N [--seed S] [--json] a reference model's makespan and speed
    dlbkit bench supermarket --servers N --load RHO --choices D --jobs J [--seed S] [--replace] [--json]
    dlbkit reproduce NAME [--json]                            a document's claims, theirs vs ours
    dlbkit run MODULE:FUNCTION --items N [--balancer B] ...   a real parallel loop: FUNCTION(i) for each item
    dlbkit replay TRACE.json [--balancer B ...] [--json]      a recorded run in the simulator, other balancers
    dlbkit cluster MODULE:FUNCTION --jobs N [--rate R] ...     a stream of real jobs on a decentralised Cluster
    dlbkit schedule GRAPH (--nodes M | --platform P.toml) [--balancer B] ...   a task graph mapped and timed
    dlbkit advise RUN.json [--balancer B ...] [--json]         the chunking balancers ranked for a recorded loop

Bad input prints one line, ``dlbkit: error: <message>``, on stderr and exits with status 2 (no
traceback). Ctrl-C exits with status 130; runs already finished stay in results.csv.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import re
import shlex
import sys
import textwrap
import time
import warnings
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Sequence

from dlbkit.errors import ConfigError, DlbkitError, closest

__all__ = ["main", "build_parser"]

#: the order in which ``--kind`` and ``dlbkit balancers`` list the kinds of balancer (docs/design.md)
KINDS = ("chunking", "placement", "migration", "repartition", "mapping", "graph-online")


def balancer_kinds() -> list[str]:
    """The kinds of KINDS that have at least one registered balancer (what ``--kind`` offers)."""
    from dlbkit.balancers import registry

    have = {c.kind for c in registry.REGISTRY.values()}
    return [k for k in KINDS if k in have] + sorted(have - set(KINDS))


#: what is a value, not an option, when it follows an option that takes one: "-" then a digit, ".digit",
#: inf or nan. argparse's own pattern before Python 3.13 takes only -12 and -1.5, so `--emulate -1e-09`
#: (or -1,0.5, or --rate -inf) was "--emulate: expected one argument" and the value never reached
#: dlbkit's own check, which names --emulate[0] and what it must be. No dlbkit option looks like this.
_NEGATIVE_NUMBER = re.compile(r"^-(\.?\d|inf|nan)", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format of every other dlbkit error (still exit status 2), and
    negative numbers in any float spelling read as values (:data:`_NEGATIVE_NUMBER`).

    *arguments*, a function of the parser, adds a command's arguments when the parser first parses
    (:func:`build_parser` with ``lazy=True``): a command's arguments may need its engine imported (a
    list of names for a help text or choices), which only the command that runs needs."""

    def __init__(self, *args, arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self._arguments = arguments
        # argparse's own attribute (3.8 to 3.14 at least); were it gone, this would only have no effect,
        # and a test would say so
        # (runtime/test_emulate_speeds_fuzz.py::test_a_negative_factor_after_the_flag_reaches_dlbkits_check)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def parse_known_args(self, args=None, namespace=None):
        # argparse parses a command's arguments with this method of the command's parser, after
        # parse_args chose the command (the main parser calls it too, and has no arguments to add)
        if self._arguments is not None:
            add, self._arguments = self._arguments, None
            add(self)
        return super().parse_known_args(args, namespace)

    def _parse_optional(self, arg_string):
        # argparse tries an option's prefix before the negative-number test: "-NaN" was -N with the value
        # "aN" where a command has -N (bench, run, cluster), so `--load -NaN` was "expected one argument"
        # and -N was set to "aN". A whole option string is still an option
        # (test_cli.py::test_minus_nan_after_an_option_is_a_value_not_the_short_option_n)
        if _NEGATIVE_NUMBER.match(arg_string) and arg_string not in self._option_string_actions:
            return None
        return super()._parse_optional(arg_string)

    def error(self, message: str):
        self.exit(2, f"dlbkit: error: {message} (see '{self.prog} --help')\n")


def _add_import(parser: argparse.ArgumentParser) -> None:
    """``--import MODULE``: a balancer of the user's own, registered when its module is imported, can
    then be named like a shipped one (an experiment file stays data: the code is named on the command
    line)."""
    parser.add_argument("--import", dest="imports", metavar="MODULE", action="append", default=[],
                        help="a Python module or .py file to import first (repeatable), e.g. one whose "
                             "balancers of your own are @register-ed (from dlbkit import register), so that "
                             "their names can be used here")


def _add_command(sub, name: str, arguments: Callable[[argparse.ArgumentParser], None], lazy: bool,
                 **kwargs) -> None:
    """The command *name* (*kwargs*: its help and description), its arguments added by *arguments*
    now or, *lazy*, when the command runs (:class:`_Parser`)."""
    parser = sub.add_parser(name, arguments=arguments if lazy else None, **kwargs)
    if not lazy:
        arguments(parser)


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The ``dlbkit`` parser and its commands. *lazy*: each command's arguments are added when that
    command is parsed, not here (:func:`main`: ``dlbkit --help`` and a command import only what
    they use; the help printed is the same)."""
    from dlbkit import __version__

    p = _Parser(prog="dlbkit", description="Dynamic load balancing on heterogeneous, non-dedicated clusters: "
                                            "simulate, compare, benchmark and reproduce.")
    p.add_argument("--version", action="version", version=f"dlbkit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    _add_command(sub, "simulate", _simulate_arguments, lazy,
                 help="run an experiment file: table, results.csv, summary.csv, plots, report",
                 description="Run every balancer × grid point × repetition of an experiment, print the "
                             "comparison (mean ± 95% CI), and write results.csv, summary.csv, PNG plots "
                             "and report.html. Rerunning resumes: finished runs are skipped.")
    _add_command(sub, "balancers", _balancers_arguments, lazy, help="list the registered balancers",
                 description="Every registered balancer with its kind, parameters (defaults), "
                             "taxonomy and source.")
    _add_command(sub, "families", _families_arguments, lazy,
                 help="list the workload families: workload, balancer kind, engines, metrics",
                 description="Every registered workload family: its workload class, the balancer kind "
                             "that decides for it, its simulation engines (the balancer kinds each "
                             "runs, its options; the first is the default), its "
                             "real-run entry point, metrics and plots.")
    _add_command(sub, "bench", _bench_arguments, lazy,
                 help="run a reference model: M1, M2 (BENCHMARKS.md) or the supermarket model",
                 description="Run a reference model through the general engine: makespan, events, "
                             "wall time and events per second.")
    _add_command(sub, "reproduce", _reproduce_arguments, lazy, help="check a source document's published claims",
                 description="Print each claim of a reproduction: the document's value, ours, the "
                             "tolerance and PASS/FAIL for an asserted claim, '—' for a claim reported "
                             "for the reader only. Exit status 0 if every asserted claim passes, 1 "
                             "otherwise. --json: a list of objects with the keys claim, paper, ours, "
                             "tolerance, asserted (true/false) and ok (true/false; null when not "
                             "asserted).")
    _add_run_parser(sub, lazy)
    _add_replay_parser(sub, lazy)
    _add_cluster_parser(sub, lazy)
    _add_schedule_parser(sub, lazy)
    _add_advise_parser(sub, lazy)
    return p


def _simulate_arguments(s: argparse.ArgumentParser) -> None:
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
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a progress bar on stderr: of the runs, or of the work done inside the run when "
                        "there is one run to do (default: when stderr is a terminal)")
    _add_import(s)
    s.set_defaults(func=_cmd_simulate)


def _balancers_arguments(b: argparse.ArgumentParser) -> None:
    b.add_argument("--json", action="store_true", help="a JSON list of objects")
    b.add_argument("--kind", metavar="KIND", help="only balancers of this kind: " + ", ".join(balancer_kinds()))
    _add_import(b)
    b.set_defaults(func=_cmd_balancers)


def _families_arguments(f: argparse.ArgumentParser) -> None:
    f.add_argument("--json", action="store_true", help="a JSON list of objects")
    f.set_defaults(func=_cmd_families)


def _bench_arguments(bn: argparse.ArgumentParser) -> None:
    from dlbkit.face.bench import MODELS

    bn.add_argument("model", choices=sorted(MODELS), help="reference model")
    bn.add_argument("--workers", "-P", type=int, metavar="P", help="number of workers (m1, m2)")
    bn.add_argument("--tasks", "-N", type=int, metavar="N", help="number of tasks (m1, m2)")
    bn.add_argument("--servers", type=int, metavar="N", help="servers (supermarket)")
    bn.add_argument("--load", type=float, metavar="RHO", help="arrival rate per server, below 1 (supermarket)")
    bn.add_argument("--choices", type=int, default=None, metavar="D", help="d, servers sampled per job (supermarket; 2)")
    bn.add_argument("--jobs", type=int, default=None, metavar="J", help="jobs (supermarket; 10^6)")
    bn.add_argument("--replace", action="store_true",
                    help="sample the d servers with replacement (supermarket; default: without)")
    bn.add_argument("--seed", type=int, default=None,
                    help="random seed (M2: default 1, the reference table's; M1 is deterministic and ignores it)")
    bn.add_argument("--json", action="store_true", help="a JSON object")
    bn.set_defaults(func=_cmd_bench)


def _reproduce_arguments(r: argparse.ArgumentParser) -> None:
    from dlbkit.face.reproduce import REPRODUCTIONS

    r.add_argument("name", metavar="NAME", help="reproduction name: " + ", ".join(sorted(REPRODUCTIONS)))
    r.add_argument("--json", action="store_true",
                   help="a JSON list of objects: claim, paper, ours, tolerance, asserted, ok (null if not asserted)")
    r.set_defaults(func=_cmd_reproduce)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with *argv* (default ``sys.argv[1:]``); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(lazy=True)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors (status 2)
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    args.argv = argv
    _files_only_plots()
    try:
        for name in getattr(args, "imports", None) or ():  # before any name is resolved
            load_module(name, "--import")
        return int(args.func(args) or 0)
    except DlbkitError as e:
        print(f"dlbkit: error: {_one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        out = getattr(args, "out_dir", None)
        kept = f"; finished runs are kept in {out / 'results.csv'} (rerun the same command to resume)" if out else ""
        print(f"\ndlbkit: interrupted{kept}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dlbkit balancers | head`
        return 0


def _files_only_plots() -> None:
    """The CLI only writes plot files: choose matplotlib's Agg backend here (importing
    :mod:`dlbkit.plots` never chooses one) and for the worker processes of a sweep."""
    os.environ["MPLBACKEND"] = "Agg"
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- simulate ---------------------------------------------------------------------------------------
def _on_terminal(stream, enabled: bool | None) -> bool:
    isatty = getattr(stream, "isatty", None)
    return (bool(isatty()) if callable(isatty) else False) if enabled is None else bool(enabled)


class RunBar:
    """``bar(done, total)``: the engines' ``progress`` callback (:mod:`dlbkit.sim.progress`) drawn
    as a bar of the work done inside one run (*unit*: items, tasks, loops) on *stream*, closed when
    ``done`` reaches ``total``; *enabled* None: only when *stream* is a terminal."""

    def __init__(self, stream, enabled: bool | None = None, unit: str = "items"):
        self.stream = stream
        self.enabled = _on_terminal(stream, enabled)
        self.unit = unit
        self.bar = None
        self.drawn = False  # a bar was drawn (and is closed once the run ends)

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or (self.drawn and self.bar is None):
            return
        if self.bar is None:
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, True, self.stream, unit=self.unit)
            self.drawn = True
        if total != self.bar.total:  # a tree's tasks are created as it runs
            self.bar.total = total
        self.bar.update(done)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class SweepBar:
    """``bar(done, total, row)`` after each run of a sweep: a progress bar of the runs on *stream*
    (:class:`~dlbkit.runtime.progress.Progress`, tqdm), closed at the last run; *enabled* None: only
    when *stream* is a terminal, so a redirected or piped stderr gets nothing. :attr:`run` is the
    bar of the work inside a run (:class:`RunBar`), which the sweep uses when it has one run to do:
    then that bar is the only one."""

    def __init__(self, stream, enabled: bool | None = None, unit: str = "items"):
        self.stream = stream
        self.enabled = _on_terminal(stream, enabled)
        self.bar = None
        self.run = RunBar(stream, self.enabled, unit)

    def __call__(self, done: int, total: int, row=None) -> None:
        if not self.enabled:
            return
        if self.run.drawn:  # the one run had its own bar: no bar of one run besides
            self.run.close()
            return
        if self.bar is None:  # drawn from the first finished run, when the total is known
            from dlbkit.runtime.progress import Progress

            self.bar = Progress(total, True, self.stream, unit="runs")
        self.bar.total = total
        self.bar.update(done)
        if done >= total:
            self.bar.close()


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


def _cmd_simulate(args) -> int:
    from dlbkit.face.api import UnusedAvailabilityWarning
    from dlbkit.face.experiments.batching import check_batch
    from dlbkit.face.experiments.executors import SERVED, check_executor, open_executor

    rank = _env_rank()  # under mpiexec every rank checks the same arguments: rank 0 alone says what is wrong
    try:
        from dlbkit.runtime.backends.local import check_workers
        check_workers(args.jobs, "--jobs", more="--executor mpi or dask")  # >= 1, and processes that can start
        check_executor(args.executor, jobs=args.jobs, scheduler=args.scheduler)
        args.batch = check_batch(args.batch, "--batch")
        if args.executor != "mpi" and _env_size() > 1:
            raise ConfigError("--executor", args.executor, f"mpi when mpiexec starts {_env_size()} ranks (each "
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
    from dlbkit.face.api import unused_availability

    spans = [float(r["makespan"]) for r in rows if r.get("status", "ok") == "ok"]
    if not spans or not all(math.isfinite(x) for x in spans):
        return []

    class _Longest:
        family = exp.family.name if exp.family is not None else ""
        makespan = max(spans)

    return [m.replace("after the run ended", "after every run ended").replace("(makespan", "(longest makespan")
            for m in unused_availability(exp.platform, _Longest)]


# --- balancers --------------------------------------------------------------------------------------
def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if hasattr(v, "item"):  # numpy scalars
        return _jsonable(v.item())
    return repr(v)


def _summary_line(doc: str | None) -> str:
    """The docstring's summary: its first paragraph, on one line."""
    text = inspect.cleandoc(doc or "")
    return _one_line(text.split("\n\n", 1)[0]) if text else ""


_ROLE = re.compile(r":[a-z]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")  # :class:`~a.b.C` (or `text <target>`)
_UNSHIPPED = re.compile(r"\b(?:notes|benchmarks|docs)/[\w./-]+\.md\b|\b(?:MODELS|DESIGN|BENCHMARKS)\.md\b")


def plain_text(text: str) -> str:
    """A docstring's reST as plain text for a terminal: roles (``:class:`~a.b.C``` → ``C``), literals
    (````x```` → ``x``) and emphasis (``*x*`` → ``x``) unmarked; references to files that are not
    installed with dlbkit (the repository's notes and benchmark pages) dropped."""
    def role(m: re.Match) -> str:
        target = m.group(1).strip()
        whole = m.group(0)
        return target.rsplit(".", 1)[-1] if ":`~" in whole else target

    text = _ROLE.sub(role, text)
    text = re.sub(r"``([^`]+)``", r"\1", text)
    text = re.sub(r"(?<![\w*])\*([^*\s][^*]*?)\*(?![\w*])", r"\1", text)
    # "...; notes/x.md §3" and "(see MODELS.md M1)": drop the reference with what qualifies it
    text = re.sub(r"\s*\((?:see |as in |cf\. )?[^()]*?(?:" + _UNSHIPPED.pattern + r")[^()]*\)", "", text)
    parts = [p for p in re.split(r";\s*", text) if not _UNSHIPPED.search(p)]
    text = "; ".join(parts) if len(parts) > 1 or parts else ""
    return _UNSHIPPED.sub("", text).strip()


def balancer_info(cls) -> dict:
    """What ``dlbkit balancers --json`` prints for one balancer class (its summary and source as
    plain text, without references to files dlbkit does not install)."""
    tax = getattr(cls, "taxonomy", None)
    return {"name": cls.name, "kind": cls.kind, "class": f"{cls.__module__}.{cls.__qualname__}",
            "parameters": {k: _jsonable(v) for k, v in cls.param_defaults().items()},
            "taxonomy": tax.as_dict() if tax is not None else {}, "source": plain_text(cls.source),
            "doc": plain_text(_summary_line(cls.__doc__))}


def _cmd_balancers(args) -> int:
    from dlbkit.balancers import registry

    kinds = balancer_kinds()
    if args.kind is not None and args.kind not in kinds:
        raise ConfigError("--kind", args.kind, "one of " + ", ".join(kinds) + " (the kinds with registered balancers)",
                          suggest=closest(args.kind, kinds))
    infos = [balancer_info(registry.REGISTRY[n]) for n in registry.names(args.kind)]
    if args.json:
        print(json.dumps(infos, indent=2, ensure_ascii=False))
        return 0
    if not infos:
        print(f"no {args.kind} balancers registered" if args.kind else "no balancers registered")
        return 0
    width = max(len(i["name"]) for i in infos)
    for k, i in enumerate(infos):
        if k:
            print()
        print(f"{i['name']:<{width}}  [{i['kind']}]  {i['doc']}")
        params = ", ".join(f"{p}={v!r}" if isinstance(v, str) else f"{p}={json.dumps(v)}"
                           for p, v in i["parameters"].items()) or "(none)"
        print(f"{'':<{width}}  parameters: {params}")
        print(f"{'':<{width}}  taxonomy:   " + "; ".join(f"{a}={v}" for a, v in i["taxonomy"].items()))
        print(f"{'':<{width}}  source:     {i['source']}")
    return 0


# --- families ---------------------------------------------------------------------------------------
def _cmd_families(args) -> int:
    from dlbkit import families

    infos = [f.as_dict() for f in families.FAMILIES.values()]
    if args.json:
        print(json.dumps(infos, indent=2, ensure_ascii=False))
        return 0
    width = max(len(i["name"]) for i in infos)
    for k, i in enumerate(infos):
        if k:
            print()
        pad = " " * width
        print(f"{i['name']:<{width}}  {i['summary']} ({i['source']})")
        print(f"{pad}  workload:  {', '.join(w.rsplit('.', 1)[1] for w in i['workload'])}")
        none = " (or 'none': no balancing)" if i["no_balancing_reference"] else ""
        kinds = i["balancer_kinds"]
        print(f"{pad}  balancers: {', '.join(kinds)}{none}  (dlbkit balancers --kind {' | '.join(kinds)})")
        for e in i["engines"]:
            tag = "default engine" if e["default"] else "engine"
            opts = ", ".join(e["options"]) or "(no experiment options)"
            where = "" if e["on_platform"] else "; not from experiment files"
            kinds = ", ".join(e["balancer_kinds"])
            print(f"{pad}  {tag}: {e['name']}: {e['entry']}; balancers: {kinds}; options: {opts}{where}")
        print(f"{pad}  real runs: {i['runtime'] or 'none yet'}")
        print(f"{pad}  metrics:   {', '.join(i['metrics'])}")
        print(f"{pad}  plots:     {', '.join(i['plots'])}")
    return 0


# --- bench ------------------------------------------------------------------------------------------
def _cmd_bench(args) -> int:
    from dlbkit.face.bench import MODELS, check_supermarket, check_tasks, check_workers

    fn = MODELS[args.model]
    check_seed(args.seed)
    # an option of the other models is an error, not ignored (as --ranks without --backend mpi is);
    # 0 is given (`0 in (None, False)` is true, so test identity)
    theirs = ("workers", "tasks") if args.model == "supermarket" else ("servers", "load", "choices", "jobs", "replace")
    for flag in theirs:
        if getattr(args, flag) is not None and getattr(args, flag) is not False:
            raise ConfigError(f"--{flag}", getattr(args, flag), "used with " + (
                "models m1 and m2 (the supermarket model takes --servers, --load, --choices, --jobs, --replace)"
                if args.model == "supermarket" else "the supermarket model (m1 and m2 take --workers, --tasks)"))
    # every value given is checked before any flag missing is named: the error names the flag at fault
    if args.model == "supermarket":
        check_supermarket(servers=args.servers, load=args.load, choices=args.choices, jobs=args.jobs,
                          replace=args.replace)
        for flag in ("servers", "load"):
            if getattr(args, flag) is None:
                raise ConfigError(f"--{flag}", None, "given for the supermarket model")
        res = fn(args.servers, args.load, 2 if args.choices is None else args.choices,
                 1_000_000 if args.jobs is None else args.jobs, 1 if args.seed is None else args.seed,
                 replace=args.replace)
        if args.json:
            print(json.dumps(_jsonable(res)))
            return 0
        print(f"supermarket: {res['servers']} servers, load {res['load']:g}, d = {res['choices']} "
              f"({'with' if res['replace'] else 'without'} replacement), {res['jobs']:,} jobs, seed {res['seed']}")
        print(f"  mean jobs per server {res['mean_jobs_per_server']:.6f}")
        print(f"  mean response        {res['mean_response']:.6f} s (simulated)")
        print(f"  events               {res['events']}")
        print(f"  wall time            {res['wall_s']:.4f} s")
        print(f"  events/s             {res['events_per_s']:,.0f}")
        return 0
    if args.workers is not None:
        check_workers(args.workers, args.model)
    if args.tasks is not None:
        check_tasks(args.tasks)
    for flag in ("workers", "tasks"):
        if getattr(args, flag) is None:
            raise ConfigError(f"--{flag}", None, f"given for model {args.model}")
    kwargs = {"seed": args.seed} if args.seed is not None and "seed" in inspect.signature(fn).parameters else {}
    res = fn(args.workers, args.tasks, **kwargs)
    res = {"model": args.model, "workers": args.workers, "tasks": args.tasks, **res}
    if args.json:
        print(json.dumps(_jsonable(res)))
        return 0
    print(f"model {res['model']}: {res['workers']} workers, {res['tasks']} tasks")
    print(f"  makespan     {res['makespan']:.6f} s (simulated)")
    print(f"  events       {res['events']}")
    print(f"  wall time    {res['wall_s']:.4f} s")
    print(f"  events/s     {res['events_per_s']:,.0f}")
    if "successful_steals" in res:
        print(f"  steals       {res['successful_steals']} successful")
    return 0


def wrapped_table(header: list[str], rows: list[list[str]], max_widths: list[int]) -> str:
    """An aligned plain-text table whose cells wrap within *max_widths* (rows separated by blank lines
    when any cell wraps)."""
    wrapped = [[textwrap.wrap(c, w, break_long_words=True) or [""] for c, w in zip(r, max_widths)] for r in rows]
    widths = [max([len(h)] + [max(len(x) for x in r[i]) for r in wrapped]) for i, h in enumerate(header)]
    multi = any(len(cell) > 1 for r in wrapped for cell in r)
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    for k, r in enumerate(wrapped):
        if multi and k:
            out.append("")
        for j in range(max(len(cell) for cell in r)):
            out.append("  ".join((cell[j] if j < len(cell) else "").ljust(w) for cell, w in zip(r, widths)).rstrip())
    return "\n".join(out)


# --- reproduce --------------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    if hasattr(v, "item") and not isinstance(v, (list, tuple, dict)):
        return _fmt(v.item())
    return str(v)


def _cmd_reproduce(args) -> int:
    from dlbkit.face.reproduce import run

    from dlbkit.face.reproduce import JSON_SCHEMA

    claims = [c.as_dict() for c in run(args.name)]
    checked = [c for c in claims if c["asserted"]]
    all_ok = all(c["ok"] for c in checked)
    if args.json:
        print(json.dumps([{k: _jsonable(c[k]) for k in JSON_SCHEMA} for c in claims], indent=2,
                         ensure_ascii=False))
        return 0 if all_ok else 1
    header = ["claim", "paper", "ours", "tolerance", "result"]
    rows = [[_one_line(str(c["claim"])), _fmt(c["paper"]), _fmt(c["ours"]), str(c["tolerance"]),
             "PASS" if c["ok"] else "FAIL" if c["asserted"] else "—"] for c in claims]
    print(wrapped_table(header, rows, [52, 26, 26, 26, 6]))
    n_ok = sum(bool(c["ok"]) for c in checked)
    print(f"\n{args.name}: {n_ok} of {len(checked)} asserted claims reproduced within tolerance"
          + (f" ({len(claims) - len(checked)} more reported, not asserted)" if len(claims) > len(checked) else ""))
    return 0 if all_ok else 1


# --- run --------------------------------------------------------------------------------------------
def _add_run_parser(sub, lazy: bool = False) -> None:
    _add_command(
        sub, "run", _run_arguments, lazy, help="run a real parallel loop: FUNCTION(item) for every item, balanced",
        description="Apply FUNCTION to every item (0..N-1 with --items N) on worker processes of this machine "
                    "(--backend local, the default) or on MPI ranks, handing the items out in chunks chosen by "
                    "a chunking balancer; print a one-line summary (items, workers, makespan, efficiency). "
                    "With --backend mpi --ranks N, dlbkit starts the MPI job itself (mpiexec -n N) and, if a "
                    "rank dies, ends with one line naming the rank and what it was doing; or start it as "
                    "'mpiexec -n N dlbkit run ... --backend mpi'. Rank 0 coordinates, prints and writes files; "
                    "the other N-1 ranks compute.")


def _run_arguments(ru: argparse.ArgumentParser) -> None:
    from dlbkit.families.run import BACKENDS
    from dlbkit.families.divisible.face.run import DEFAULT_BALANCER

    ru.add_argument("target", metavar="MODULE:FUNCTION",
                    help="a module importable from the current directory or sys.path (work:step), or a .py "
                         "file (path/to/work.py:step), and the function to apply to each item")
    src = ru.add_mutually_exclusive_group(required=True)
    src.add_argument("--items", "-N", type=int, metavar="N", help="the items are the integers 0..N-1")
    src.add_argument("--items-file", metavar="FILE",
                     help="the items: a JSON list (a .json file) or one string per non-empty line")
    ru.add_argument("--balancer", "-b", metavar="NAME", default=DEFAULT_BALANCER,
                    help=f"a chunking balancer (dlbkit balancers --kind chunking; default {DEFAULT_BALANCER})")
    ru.add_argument("--param", "-p", metavar="KEY=VALUE", action="append", default=[],
                    help="a balancer parameter (repeatable); VALUE is read as JSON if it can be (4, 0.5, true)")
    ru.add_argument("--workers", "-P", type=int, metavar="P",
                    help="worker processes (local backend; default: the usable CPUs, or one per emulated worker)")
    ru.add_argument("--backend", choices=BACKENDS, default="local", help="local processes (default) or MPI ranks")
    ru.add_argument("--ranks", type=int, metavar="N",
                    help="with --backend mpi: start the MPI job here, mpiexec -n N (rank 0 coordinates, N-1 "
                         "compute); a rank that dies is named in the last line")
    ru.add_argument("--emulate", metavar="PLATFORM",
                    help="slow the workers down as a platform's nodes would be: a platform TOML file (one "
                         "worker per core) or speed factors such as 1,1,0.5,0.25")
    ru.add_argument("--master", metavar="NODE", help="with a platform: the node that coordinates (not a worker)")
    ru.add_argument("--seed", type=int, default=0, help="seed of emulated background load and random balancers (default 0)")
    ru.add_argument("--record", metavar="TRACE.json", help="save the run's trace (for 'dlbkit replay')")
    ru.add_argument("--out", metavar="DIR", help="write gantt.png and work.png of the run in DIR")
    ru.add_argument("--results", metavar="FILE.json",
                    help="write the results, in item order, as a JSON list (values JSON cannot hold as text)")
    ru.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="a progress bar on stderr (default: when stderr is a terminal)")
    ru.add_argument("--json", action="store_true", help="print the summary as a JSON object")
    ru.set_defaults(func=_cmd_run)


def parse_params(pairs: Sequence[str] | None, flag: str = "--param", example: str = "min_chunk=4") -> dict[str, Any]:
    """``["k=v", ...]`` as a dict; each value is read as JSON when it parses (4, 0.5, true, [1, 2]),
    else kept as a string. *example* is a pair the command's error shows."""
    out: dict[str, Any] = {}
    for s in pairs or []:
        key, sep, value = s.partition("=")
        key = key.strip()
        if not sep or not key.isidentifier():
            raise ConfigError(flag, s, f"KEY=VALUE with a parameter name as KEY (e.g. {example})")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def check_balancer_arg(name: str, kind: str | tuple[str, ...], params: dict | None = None, *,
                       exclude: tuple[str, ...] = ()) -> None:
    """``--balancer NAME`` (and, with *params*, its ``--param`` pairs) checked alike by every command
    that takes one: a name that is not a balancer of *kind* (a typo or another kind) names ``--balancer``
    and lists the names that fit; a key its balancer does not take names ``--param`` and lists its
    parameters; a value outside a parameter's range names that parameter."""
    from dlbkit.balancers.registry import REGISTRY, kind_hint, names, resolve

    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    cls = REGISTRY.get(name.lower())
    if cls is None or cls.kind not in kinds or cls.name in exclude:
        fits = [n for k in kinds for n in names(k) if n not in exclude]
        raise ConfigError("--balancer", name, kind_hint(kinds) + (f" other than {', '.join(exclude)}" if exclude
                                                                  else "") + ": " + ", ".join(fits),
                          suggest=closest(name, fits))
    if params is not None:
        valid = cls.param_names()
        for k in params:
            if k not in valid:
                raise ConfigError("--param", k, f"a parameter of {cls.name}: " + (", ".join(valid) or "(it has none)"),
                                  suggest=closest(k, valid))
        resolve(cls.name, params, kind=kinds, field="--balancer")


def load_module(mod_name: str, field: str = "MODULE"):
    """The module *mod_name* (a dotted name importable from the current directory or sys.path, or a
    .py file), imported once; bad names are a ConfigError naming *field*, a module that fails while
    importing a DlbkitError naming it."""
    import importlib
    import os

    from dlbkit.face.own_modules import PRIVATE_PREFIX, import_file

    try:
        if mod_name.endswith(".py") or "/" in mod_name or os.sep in mod_name:
            path = Path(mod_name)
            if not path.is_file() or path.suffix != ".py":
                raise ConfigError(field, mod_name, "an existing .py file or an importable module name")
            folder = str(path.parent.resolve())
            name = path.stem
            known = sys.modules.get(name)
            # this file loaded before, under its name or the private one: once, as `import` does
            loaded = [m for m in (known, sys.modules.get(PRIVATE_PREFIX + name))
                      if m is not None and _same_file(getattr(m, "__file__", None), path)]
            if loaded:
                module = loaded[0]
            else:
                # a file named like another module (json.py; a module a dependency brings): that module
                # stays what its name imports, here and in every worker, and the file runs under a
                # private name that spawned workers load from the file (dlbkit.face.own_modules)
                clash = known is not None or _found_elsewhere(name, path)
                if folder not in sys.path:  # its sibling modules import; first, as `python FILE` has it,
                    # unless that would shadow the module of the same name in a spawned worker
                    sys.path.insert(len(sys.path) if clash else 0, folder)
                module = import_file(PRIVATE_PREFIX + name if clash else name, path)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            try:
                module = importlib.import_module(mod_name)
            except ModuleNotFoundError as e:
                if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
                    raise ConfigError(field, mod_name, "a module importable from the current directory or "
                                      "sys.path, or a .py file") from None
                raise
    except DlbkitError:
        raise
    except (Exception, SystemExit) as e:  # the user's module failed while importing
        raise DlbkitError(f"importing {mod_name} failed: {type(e).__name__}: {e}") from None
    return module


def _same_file(file: str | None, path: Path) -> bool:
    return file is not None and Path(file).resolve() == path.resolve()


def _found_elsewhere(name: str, path: Path) -> bool:
    """Whether the module name *name* imports something other than the file *path* (or cannot be a
    module name a worker imports at all: a dotted stem)."""
    import importlib.util
    if "." in name:
        return True
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and not _same_file(spec.origin, path)


def load_function(target: str):
    """The function named by ``MODULE:FUNCTION`` or ``FILE.py:FUNCTION`` (imported as ``python -m`` would:
    the current directory first; a file's own directory first)."""
    mod_name, sep, fn_name = target.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise ConfigError("MODULE:FUNCTION", target,
                          "a module or .py file and a function, separated by ':' (e.g. work:step or work.py:step)")
    module = load_module(mod_name)
    obj: Any = module
    for part in fn_name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None or not callable(obj):
        funcs = sorted(n for n, v in vars(module).items()
                       if inspect.isfunction(v) and not n.startswith("_") and v.__module__ == module.__name__)
        raise ConfigError("FUNCTION", fn_name, f"a function of {mod_name} ("
                          + (", ".join(funcs) if funcs else "it defines none") + ")")
    return obj


def _read_items(path: str) -> list:
    p = Path(path)
    if not p.is_file():
        raise ConfigError("--items-file", path, "an existing file: a JSON list (.json) or one item per line")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError("--items-file", path, f"a readable UTF-8 text file ({_one_line(str(e))})") from None
    if p.suffix == ".json":
        try:
            items = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConfigError(f"--items-file {path}", _one_line(str(e)), "a JSON list of items") from None
        if not isinstance(items, list):
            raise ConfigError(f"--items-file {path}", type(items).__name__, "a JSON list of items")
    else:
        items = [line.strip() for line in text.splitlines() if line.strip()]
    if not items:
        raise ConfigError("--items-file", path, "a file with at least one item")
    return items


def _emulate_arg(value: str | None):
    if value is None:
        return None
    parts = [x.strip() for x in value.split(",")]
    try:
        speeds = [float(x) for x in parts]
    except ValueError:
        pass
    else:  # checked here, by the API's own check, so a bad factor names the flag before anything starts
        from dlbkit.runtime.emulation import speed_factors
        return speed_factors(speeds, "--emulate")
    if not Path(value).is_file():
        raise ConfigError("--emulate", value, "a platform TOML file or comma-separated speed factors (e.g. 1,1,0.5)")
    return _platform_file(value, "--emulate")


def _platform_file(path: str, flag: str) -> str:
    """*path* checked as a platform file now, so that a bad field names the flag and the file as an
    experiment's error names its file (``--emulate p.toml: nodes[1].speed must be ...``)."""
    from dlbkit.model.platform import Platform

    if not path.lower().endswith(".ntp"):  # a thesis network file (schedule --platform): its own reader, any case
        try:
            Platform.from_toml(path)
        except ConfigError as e:
            if e.field == "file" or e.field.startswith("TOML syntax"):  # these name the file already
                raise
            raise ConfigError(f"{flag} {path}: {e.field}", e.value, e.allowed) from None
    return path


def _writable_file(path: str | None, flag: str) -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        raise ConfigError(flag, path, "a file name (a directory of that name exists)")
    if not p.parent.is_dir():
        raise ConfigError(flag, path, "a file in an existing directory")
    return p


def _output_dir(path: str | None, flag: str = "--out") -> Path | None:
    """The directory *path*, created now (before any work) so that one that cannot be is one line."""
    if path is None:
        return None
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(flag, str(out), "a directory (a file of that name exists)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(flag, str(out), f"a directory that can be created ({e.strerror})") from None
    return out


def check_seed(seed: int | None) -> int | None:
    """``--seed`` checked alike by every command that takes one (None: the command's default)."""
    if seed is not None and seed < 0:
        raise ConfigError("--seed", seed, "an integer >= 0")
    return seed


def _image_file(path: str | None, flag: str) -> Path | None:
    """A file to draw a figure in: in an existing directory, named with a format matplotlib writes
    (checked before the work, which a bad name would otherwise end in a traceback)."""
    p = _writable_file(path, flag)
    if p is not None:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = sorted(FigureCanvasBase.get_supported_filetypes())
        if p.suffix[1:].lower() not in formats:
            raise ConfigError(flag, path, "a file name ending in an image format: ." + ", .".join(formats))
    return p


def _env_rank() -> int:
    """This process's MPI rank from the launcher's environment (0 when not launched by mpiexec)."""
    import os

    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID"):
        v = os.environ.get(var)
        if v is not None and v.isdigit():
            return int(v)
    return 0


def _env_size() -> int:
    """The number of ranks the launcher started this process among (1 when not launched by mpiexec)."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        v = os.environ.get(var)
        if v is not None and v.isdigit():
            return int(v)
    return 1


def _cmd_run(args) -> int:
    if args.ranks is not None:
        return _launch(args)
    rank = _env_rank() if args.backend == "mpi" else 0
    try:
        return _run(args, rank)
    except DlbkitError:
        if rank != 0:  # every rank finds the same bad input: rank 0 alone says so
            return 2
        raise


@contextlib.contextmanager
def _warnings_in_one_line(rank: int):
    """While a run goes on, print each :class:`DlbkitWarning` as one line on stderr (rank 0 only),
    when it is raised: ``dlbkit: warning: <message>``; other warnings as Python prints them."""
    from dlbkit.errors import DlbkitWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", DlbkitWarning)
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if not issubclass(category, DlbkitWarning):
                return shown(message, category, filename, lineno, file, line)
            if rank == 0:
                print(f"dlbkit: warning: {_one_line(str(message))}", file=sys.stderr, flush=True)

        warnings.showwarning = show
        yield


def _launch(args) -> int:
    """``--ranks N``: check everything here (one line for bad input, not one per rank), then start
    ``mpiexec -n N`` on the same command without ``--ranks`` (:mod:`dlbkit.runtime.launch`)."""
    import importlib.util

    from dlbkit.runtime.launch import MAX_RANKS, find_mpiexec, launch, without_ranks

    if args.backend != "mpi":
        raise ConfigError("--ranks", args.ranks, "used with --backend mpi (the local backend's count is --workers)")
    if not 2 <= args.ranks <= MAX_RANKS:
        raise ConfigError("--ranks", args.ranks, f"an integer from 2 to {MAX_RANKS} (rank 0 coordinates, the "
                          "others compute)")
    if any(v in os.environ for v in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")):
        raise ConfigError("--ranks", args.ranks, "omitted when mpiexec already started this command")
    emulate = _checked(args)["emulate"]
    if isinstance(emulate, list) and len(emulate) != args.ranks - 1:
        raise ConfigError("--emulate", args.emulate, f"one speed per worker rank: {args.ranks - 1} for --ranks "
                          f"{args.ranks} (rank 0 coordinates)")
    if isinstance(emulate, str):  # a platform: its workers against the worker ranks, by the job's own check,
        # here, before the job starts (inside it, every rank said so and the command exited 3, not 2)
        from dlbkit.runtime.backends.mpi import emulation_problem
        from dlbkit.runtime.emulation import emulation_from
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a speed's warning: said once, by the job's rank 0
                problem = emulation_problem(emulation_from(emulate, args.seed, args.master), args.ranks)
        except ConfigError as e:
            if e.field == "master":
                raise ConfigError("--master", e.value, e.allowed) from None
            raise
        if problem is not None:
            raise ConfigError("--emulate", problem.value, problem.allowed)
    if importlib.util.find_spec("mpi4py") is None:
        raise ConfigError("--backend", "mpi", "used with mpi4py installed (pip install 'dlbkit[mpi]')")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise ConfigError("--ranks", args.ranks, "used with an mpiexec next to this Python or on PATH "
                          "(pip install mpich)")
    sys.stdout.flush()
    return launch(mpiexec, args.ranks, without_ranks(args.argv))


def _checked(args) -> dict:
    """The arguments of ``dlbkit run`` checked and loaded (the function imported, the items read, the
    balancer resolved): a bad one raises a ConfigError before anything starts."""
    from dlbkit.families.divisible.model.workload import MAX_ITEMS
    from dlbkit.families.divisible.face.run import check_items
    if args.items is not None and not 1 <= args.items <= MAX_ITEMS:
        raise ConfigError("--items", args.items, f"an integer from 1 to {MAX_ITEMS:,} (dlbkit's limit: the "
                          "coordinator keeps every result in memory)")
    if args.workers is not None:
        if args.workers < 1:
            raise ConfigError("--workers", args.workers, "an integer >= 1")
        if args.backend == "local":
            from dlbkit.runtime.backends.local import check_workers
            check_workers(args.workers, "--workers", more="--backend mpi on several machines, or dlbkit simulate")
        if args.backend == "mpi":
            raise ConfigError("--workers", args.workers, "omitted with --backend mpi (the workers are the "
                              "mpiexec ranks but rank 0)")
    if args.master is not None and args.emulate is None:
        raise ConfigError("--master", args.master, "used with --emulate PLATFORM.toml")
    params = parse_params(args.param)
    record = _writable_file(args.record, "--record")
    results_file = _writable_file(args.results, "--results")
    check_seed(args.seed)
    out = _output_dir(args.out)
    emulate = _emulate_arg(args.emulate)
    items = range(args.items) if args.items is not None else check_items(_read_items(args.items_file), "--items-file")
    fn = load_function(args.target)
    check_balancer_arg(args.balancer, "chunking", params)  # reported before any worker starts
    return dict(params=params, record=record, results_file=results_file, out=out, emulate=emulate, items=items, fn=fn)


def _as_flag(e: ConfigError) -> ConfigError:
    """*e*, said with the flag where it names the API's name of one (emulate: its length against a
    job's ranks, checked by the run under a bare mpiexec, where no --ranks told the command line the
    count)."""
    if e.field in ("master", "workers", "seed", "emulate"):
        return ConfigError(f"--{e.field}", e.value, e.allowed, suggest=e.suggest)
    return e


def _run(args, rank: int) -> int:
    from dlbkit.errors import TaskError
    from dlbkit.families.divisible.face.run import run_map

    c = _checked(args)
    params, record, results_file, out, emulate, items, fn = (c[k] for k in ("params", "record", "results_file", "out",
                                                                            "emulate", "items", "fn"))
    try:
        with _warnings_in_one_line(rank):
            r = run_map(fn, items, balancer=args.balancer, params=params, backend=args.backend, workers=args.workers,
                        progress=args.progress, emulate=emulate, master=args.master, seed=args.seed)
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
            print(f"dlbkit: error: {_one_line(str(e).splitlines()[0])}", file=sys.stderr)
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
    if record is not None:
        r.save(record)
        summary["record"] = str(record)
        written.append(f"recorded the run in {record} (dlbkit replay {shlex.quote(str(record))})")
    if results_file is not None:
        results_file.write_text(json.dumps([_jsonable(x) for x in r.results]) + "\n", encoding="utf-8")
        summary["results"] = str(results_file)
        written.append(f"wrote the results in {results_file}")
    if out is not None:
        summary["plots"] = [str(p) for p in _run_plots(r, out, args.target)]
        written.append(f"wrote gantt.png and work.png in {out}")
    if args.json:
        print(json.dumps(_jsonable(summary)))
        return 0
    label = balancer_label(r.balancer.name, r.balancer.get_params())
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


def balancer_label(name: str, params: dict) -> str:
    """``name`` or ``name(k=v, ...)`` with the parameters that differ from the defaults."""
    from dlbkit.balancers.registry import REGISTRY

    cls = REGISTRY.get(name)
    defaults = cls.param_defaults() if cls is not None else {}
    shown = [f"{k}={json.dumps(_jsonable(v))}" for k, v in params.items() if k not in defaults or v != defaults[k]]
    return name + (f"({', '.join(shown)})" if shown else "")


def _run_plots(r, out: Path, label: str) -> list[Path]:
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    tr = r.trace
    paths = [out / "gantt.png", out / "work.png"]
    fig = r.plot_gantt(title=f"Gantt chart: {label}, {r.balancer.name}, {tr.n_intervals} chunks, "
                             f"makespan {r.makespan:.4g} s")
    fig.savefig(paths[0], dpi=110)
    plt.close(fig)
    fig = r.plot_work(title=f"Work done per worker: {label}, {r.balancer.name}")
    fig.savefig(paths[1], dpi=110)
    plt.close(fig)
    return paths


# --- replay -----------------------------------------------------------------------------------------
def _add_replay_parser(sub, lazy: bool = False) -> None:
    _add_command(
        sub, "replay", _replay_arguments, lazy,
        help="replay a recorded run in the simulator, with its balancer and others",
        description="Simulate the loads of a run recorded with 'dlbkit run --record' (or run_map(record=...)): "
                    "the measured item costs on the measured worker speeds. Print, for the recorded balancer "
                    "and each --balancer, the simulated makespan and efficiency; for the recorded one also the "
                    "real makespan and the replay/real ratio. Efficiencies are against the replayed platform's "
                    "lower bound, the same for every row. A task graph's recording (dlbkit.graph(record=)) "
                    "replays in the graph simulator, a job stream's (dlbkit cluster --record) in the stream "
                    "simulator, which prints response times.")


def _replay_arguments(rp: argparse.ArgumentParser) -> None:
    from dlbkit.face.replay import MODELS

    rp.add_argument("trace", metavar="TRACE.json", help="a recorded trace")
    rp.add_argument("--balancer", "-b", metavar="NAME", action="append", default=[],
                    help="another balancer to try (repeatable, or comma-separated), of the recording's kind: "
                         "chunking for a loop, mapping for a task graph (dlbkit.graph), placement for a job "
                         "stream (dlbkit cluster)")
    rp.add_argument("--param", "-p", metavar="KEY=VALUE", action="append", default=[],
                    help="a parameter of the --balancer balancers (repeatable); the recorded one keeps its own")
    rp.add_argument("--seed", type=int, default=None, help="seed of random balancers (default: the recorded one, or 0)")
    rp.add_argument("--model", choices=MODELS, default=None,
                    help="worker speeds of a loop: measured from the run (default) or the emulated factors as set "
                         "(only for loops: a task graph replays its measured task costs on its recorded speeds, a "
                         "job stream on its emulated speeds)")
    rp.add_argument("--info", metavar="MODEL", action="append", default=[],
                    help="a job-stream recording (dlbkit cluster --record): also replay the recorded balancer under "
                         "this information model (repeatable: exact, neighbour, gossip, scatter-old, scatter-4.1, "
                         "scatter-4.2, scatter-4.3, monitored); the recorded model is always replayed, and each "
                         "--balancer runs under it")
    rp.add_argument("--json", action="store_true", help="a JSON object")
    _add_import(rp)
    rp.set_defaults(func=_cmd_replay)


def _named_balancers(names: Sequence[str], params: dict, kinds: tuple[str, ...]) -> list[tuple[str, dict]]:
    """Each ``--balancer`` name (of *kinds*) with the *params* it accepts; a name of another kind, or a
    parameter none of them accepts, is an error."""
    from dlbkit.balancers.registry import get

    for n in names:
        check_balancer_arg(n, kinds)
    classes = [get(n) for n in names]
    for k in params:
        if not any(k in c.param_names() for c in classes):
            raise ConfigError("--param", k, "a parameter of a --balancer balancer: " + "; ".join(
                f"{c.name}: {', '.join(c.param_names()) or '(none)'}" for c in classes))
    return [(c.name, {k: v for k, v in params.items() if k in c.param_names()}) for c in classes]


def _cmd_replay(args) -> int:
    from dlbkit.balancers.registry import make
    from dlbkit.face.replay import REPLAY_KINDS, check_replayable, compare, dispatch_latency, estimate
    from dlbkit.runtime.record import load_trace

    trace = load_trace(args.trace)
    check_seed(args.seed)
    check_replayable(trace)
    names = [n.strip() for b in args.balancer for n in b.split(",") if n.strip()]
    params = parse_params(args.param)
    if params and not names:
        raise ConfigError("--param", args.param, "used with --balancer (the recorded balancer is replayed as recorded)")
    named = _named_balancers(names, params, REPLAY_KINDS[trace.family])
    if args.model is not None and trace.family != "divisible":
        raise ConfigError("--model", args.model, "used with a loop recording (a task graph replays on its recorded "
                          "speeds, a job stream on its emulated speeds)")
    if trace.family == "stream":
        return _replay_stream_cmd(args, trace, named)
    if args.info:
        raise ConfigError("--info", args.info, "used with a job-stream recording (dlbkit cluster --record)")
    if trace.family == "graph":  # measured task costs on the recorded speeds; the --model of loops does not apply
        model = {"model": "recorded", "speeds": [float(s) for s in trace.speeds], "latency": dispatch_latency(trace)}
    else:
        model = estimate(trace, args.model or "measured").as_dict()
    rows = compare(trace, [make(n, p) for n, p in named], seed=args.seed, model=args.model)
    real = rows[0]["real_makespan"]
    bound = rows[0]["makespan"] * rows[0]["efficiency"]
    real_eff = bound / real if real > 0 else math.nan
    info = {"trace": str(args.trace), "balancer": trace.balancer,
            "params": dict(trace.meta.get("balancer_params") or {}), "workers": trace.n_nodes,
            "items": int(model.get("items", len(trace.meta.get("item_cost") or ()))),
            "backend": trace.meta.get("backend", trace.source),
            "real_makespan": real, "real_efficiency": real_eff, "model": model, "rows": rows}
    if args.json:
        print(json.dumps(_jsonable(info), indent=2))
        return 0
    print(f"replay of {args.trace}: {trace.balancer} on {trace.n_nodes} workers ({info['backend']}), "
          f"{info['items']} {'tasks' if trace.family == 'graph' else 'items'}; real makespan {real:.4g} s")
    speeds = " ".join(f"{s:.3g}" for s in model["speeds"])
    if trace.family == "graph":  # no master, no startup: a transfer's latency is the coordinator's dispatch
        print(f"model: recorded speeds {speeds}; dispatch latency {model['latency'] * 1e3:.3g} ms")
    else:
        print(f"model: {model['model']} speeds {speeds}; latency {model['latency'] * 1e3:.3g} ms; master overhead "
              f"{model['overhead'] * 1e3:.3g} ms; startup {model['startup'] * 1e3:.3g} ms")
    print()

    def label(row) -> str:
        return balancer_label(row["balancer"], row["params"]) + (" [recorded]" if row["recorded"] else "")

    header = ["balancer", "makespan (s)", "efficiency", "replay/real"]
    table = [[label(r), f"{r['makespan']:.4g}", f"{r['efficiency']:.3f}",
              f"{r['ratio']:.3f}" if r["ratio"] is not None else ""] for r in rows]
    table.append([f"real run ({trace.balancer})", f"{real:.4g}", f"{real_eff:.3f}", ""])
    print(wrapped_table(header, table, [60, 14, 10, 11]))
    return 0

def _replay_stream_cmd(args, trace, named: list[tuple[str, dict]]) -> int:
    """``dlbkit replay`` of a job stream recorded by ``dlbkit cluster --record``: the recorded jobs in the
    stream simulator under the recorded balancer and information model, each --balancer and each --info."""
    from dlbkit.face.replay import replay_stream
    from dlbkit.families.result import Result

    real = Result(trace, trace.balancer).metrics
    recorded_info = dict(trace.meta.get("info_params") or {"model": trace.meta.get("info") or "exact"})
    runs = [(None, None, None)] + [(b, p, None) for b, p in named] + [(None, None, {"model": m}) for m in args.info]
    rows = []
    for b, params, info in runs:
        r = replay_stream(trace, b, params, args.seed, info=info)
        rows.append({"balancer": r.balancer.name, "info": (info or recorded_info)["model"],
                     "response_mean": r.metrics["response_mean"], "response_p95": r.metrics["response_p95"]})
    out = {"trace": str(args.trace), "balancer": trace.balancer, "info": recorded_info, "jobs": len(trace.series["job_time"]),
           "real_response_mean": real["response_mean"], "real_response_p95": real["response_p95"], "rows": rows}
    if args.json:
        print(json.dumps(_jsonable(out), indent=2))
        return 0
    print(f"replay of {args.trace}: a job stream of {out['jobs']} jobs on {trace.n_nodes} nodes "
          f"({trace.balancer}, {recorded_info['model']}); real response (submit to the job's end on its node) mean "
          f"{real['response_mean'] * 1e3:.4g} ms, p95 {real['response_p95'] * 1e3:.4g} ms")
    table = [[r["balancer"], r["info"], f"{r['response_mean'] * 1e3:.4g}", f"{r['response_p95'] * 1e3:.4g}"]
             for r in rows]
    print(wrapped_table(["balancer", "info", "mean response (ms)", "p95 (ms)"], table, [24, 10, 18, 10]))
    return 0


# --- cluster (a stream of real jobs on dlbkit.Cluster) -------------------------------------------------------
def _add_cluster_parser(sub, lazy: bool = False) -> None:
    _add_command(
        sub, "cluster", _cluster_arguments, lazy,
        help="run a stream of real jobs on a decentralised cluster (dlbkit.Cluster)",
        description="Submit FUNCTION(i) for i in 0..N-1 to a dlbkit.Cluster of --workers nodes (worker processes "
                    "of this machine), at Poisson arrival times of --rate jobs/s (all at once without --rate), "
                    "round-robin over the nodes as origins; each origin places its jobs with the placement "
                    "--balancer on its view of the others' loads, built by the --info model's messages. Print the "
                    "response times (submit to result) and where the jobs ran. docs/cluster.md.")


def _cluster_arguments(cl: argparse.ArgumentParser) -> None:
    cl.add_argument("target", metavar="MODULE:FUNCTION",
                    help="a module importable from the current directory or sys.path, or a .py file, and the "
                         "function each job calls with its index")
    cl.add_argument("--jobs", "-N", type=int, required=True, metavar="N", help="jobs: FUNCTION(0) .. FUNCTION(N-1)")
    cl.add_argument("--rate", type=float, metavar="R", help="Poisson arrivals at R jobs/s (default: all at once)")
    cl.add_argument("--workers", "-P", type=int, default=None, metavar="P",
                    help="nodes (default: the usable CPUs, or one per --emulate speed)")
    cl.add_argument("--balancer", "-b", metavar="NAME", default="nezha",
                    help="a placement balancer (dlbkit balancers --kind placement; default nezha)")
    cl.add_argument("--param", "-p", metavar="KEY=VALUE", action="append", default=[],
                    help="a balancer parameter (repeatable); VALUE is read as JSON if it can be (4, 0.5, true)")
    cl.add_argument("--info", metavar="MODEL", default="gossip",
                    help="information model, one that sends messages: gossip (default), neighbour, scatter-old, "
                         "scatter-4.1, scatter-4.2, scatter-4.3")
    cl.add_argument("--info-param", metavar="KEY=VALUE", action="append", default=[],
                    help="an information model parameter (repeatable), e.g. period=0.02")
    cl.add_argument("--emulate", metavar="PLATFORM",
                    help="slow the nodes down: a platform TOML file (one node per platform node, its cores its slots) or speed factors 1,1,0.5")
    cl.add_argument("--seed", type=int, default=0, help="seed of the arrivals, the balancers and the gossip (default 0)")
    cl.add_argument("--record", metavar="TRACE.json", help="save the run's trace (for 'dlbkit replay')")
    cl.add_argument("--json", action="store_true", help="print the summary as a JSON object")
    cl.set_defaults(func=_cmd_cluster)


def _info_flags(e: ConfigError) -> ConfigError:
    """A ConfigError of ``Cluster(info=...)`` said in ``dlbkit cluster``'s words: ``info`` or
    ``info.model`` is ``--info``, ``info.KEY`` and ``info (KEY …)`` are ``--info-param``."""
    if e.field in ("info", "info.model"):
        return ConfigError("--info", e.value, e.allowed)
    if e.field.startswith("info.") or e.field.startswith("info ("):
        return ConfigError("--info-param " + e.field[5:].lstrip("."), e.value, e.allowed)
    return e


def _cmd_cluster(args) -> int:
    import numpy as np
    from concurrent.futures import wait
    from dlbkit.families.stream.face.cluster import Cluster

    if args.jobs < 1:
        raise ConfigError("--jobs", args.jobs, "an integer >= 1")
    if args.rate is not None and not (math.isfinite(args.rate) and args.rate > 0):
        raise ConfigError("--rate", args.rate, "a finite number of jobs per second > 0")
    check_seed(args.seed)
    if args.workers is not None and args.workers < 1:
        raise ConfigError("--workers", args.workers, "an integer >= 1")
    params = parse_params(args.param, example="d=2")
    fn = load_function(args.target)  # first, as `dlbkit run` does: its module may register the balancer
    check_balancer_arg(args.balancer, "placement", params)
    emulate = _emulate_arg(args.emulate)
    record = _writable_file(args.record, "--record")
    workers = args.workers  # None: one node per speed factor, per platform node, or per usable CPU (Cluster's rule)
    info = {"model": args.info, **parse_params(args.info_param, "--info-param")}
    rng = np.random.default_rng(args.seed)
    times = np.cumsum(rng.exponential(1 / args.rate, args.jobs)) if args.rate else np.zeros(args.jobs)
    sent: list[float] = []
    done: dict[int, float] = {}
    with _warnings_in_one_line(0):
        try:
            cluster = Cluster(workers, balancer=args.balancer, params=params, info=info, emulate=emulate,
                              seed=args.seed, record=record)
        except ConfigError as e:  # the information model is the flags' --info and --info-param
            raise _info_flags(e) from None
        with cluster as c:
            workers = len(c.alive())
            t0 = time.perf_counter()
            fs = []
            for i, t in enumerate(times):
                delay = t0 + t - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                sent.append(time.perf_counter())
                f = c.submit(fn, i)
                f.add_done_callback(lambda f, i=i: done.__setitem__(i, time.perf_counter()))
                fs.append(f)
            wait(fs)
    failed = [i for i, f in enumerate(fs) if f.exception() is not None]
    r = np.asarray([done[i] - sent[i] for i in range(len(fs)) if i in done])
    per_node = np.bincount([j.node for j in c.ps() if j.node >= 0], minlength=workers).tolist()
    res = c.result()
    tr = res.trace
    # two clocks of one response (docs/cluster.md, "Two response times"): here, submit to this client's
    # callback (the result's trip back included); in the recording (what replay calls real), submit to
    # the job's end on its node
    out = {"jobs": args.jobs, "workers": workers, "balancer": args.balancer, "info": info, "failed": len(failed),
           "response_mean": float(r.mean()), "response_p50": float(np.percentile(r, 50)),
           "response_p95": float(np.percentile(r, 95)), "response_p99": float(np.percentile(r, 99)),
           "recorded_response_mean": float(res.metrics["response_mean"]),
           "jobs_per_node": per_node, "forwarded": int(tr.meta["tasks_moved"]),
           "info_messages": float(tr.info_messages), "info_age_mean": float(tr.info_age_mean)}
    if args.json:
        print(json.dumps(_jsonable(out)))
    else:
        print(f"{args.jobs} jobs on {workers} nodes ({args.balancer}, {args.info}): response (submit to result "
              f"in this client) mean {out['response_mean'] * 1e3:.1f} ms, p50 {out['response_p50'] * 1e3:.1f}, p95 "
              f"{out['response_p95'] * 1e3:.1f}, p99 {out['response_p99'] * 1e3:.1f} ms (to the job's end on its "
              f"node, as recorded: mean {out['recorded_response_mean'] * 1e3:.1f} ms); jobs per node {per_node}; "
              f"{out['forwarded']} forwarded; {out['info_messages']:.0f} load messages, mean view age "
              f"{out['info_age_mean'] * 1e3:.1f} ms" + (f"; {len(failed)} failed (first: job {failed[0]}: "
                                                         f"{fs[failed[0]].exception()!r})" if failed else ""))
        if record is not None:
            print(f"recorded the run in {record} (dlbkit replay {shlex.quote(str(record))})")
    return 1 if failed else 0



def _add_schedule_parser(sub, lazy: bool = False) -> None:
    _add_command(sub, "schedule", _schedule_arguments, lazy,
                 help="map a task graph onto nodes with a mapping balancer and time the plan",
                 description="Read a task graph (.json, Kasahara .stg or the thesis's .adg), map it onto --nodes M "
                             "identical nodes (speed 1, a transfer takes its data) or a --platform, with a mapping "
                             "balancer (dlbkit balancers --kind mapping), and time the plan with the graph "
                             "family's evaluator. --json prints {makespan, assignment, start, finish}.")


def _schedule_arguments(sc: argparse.ArgumentParser) -> None:
    sc.add_argument("graph", metavar="GRAPH", help="a task graph file: .json, .stg or .adg")
    where = sc.add_mutually_exclusive_group(required=True)
    where.add_argument("--nodes", metavar="M", type=int, help="M identical nodes of speed 1")
    where.add_argument("--platform", metavar="P.toml", help="a platform TOML file (or a thesis .ntp network file)")
    sc.add_argument("--balancer", "-b", default="heft", metavar="NAME",
                    help="a mapping balancer (dlbkit balancers --kind mapping; default heft)")
    sc.add_argument("--param", "-p", action="append", metavar="KEY=VALUE",
                    help="a balancer parameter (repeatable); VALUE is read as JSON if it can be (4, 0.5, true)")
    sc.add_argument("--cost-model", default="standard", choices=["standard", "thesis"],
                    help="standard (default) or thesis (002: both ends busy for a message)")
    sc.add_argument("--contention", nargs="?", const="port", choices=["port", "link"], default=None,
                    help="standard model with contention: 'port' (the default when the flag is bare: one message "
                         "at a time per node's send and receive port) or 'link' (one message at a time per directed "
                         "link of the --platform's routed topology)")
    sc.add_argument("--seed", type=int, default=0, help="seed of a randomised balancer (default 0)")
    sc.add_argument("--gantt", metavar="FILE.png", help="also draw the Gantt chart to this file")
    sc.add_argument("--json", action="store_true", help="a JSON object: makespan, assignment, start, finish")
    _add_import(sc)
    sc.set_defaults(func=_cmd_schedule)


#: what ``schedule --json`` adds under "solver" for a mapper that reports an optimality gap (milp)
_SOLVER_KEYS = ("model", "status", "message", "objective", "dual_bound", "gap", "optimal", "estimate")


def _cmd_schedule(args) -> int:
    from dlbkit.families.graph.face.schedule import schedule
    if args.nodes is not None and args.nodes < 1:
        raise ConfigError("--nodes", args.nodes, "an integer >= 1")
    if args.platform is not None:
        if not Path(args.platform).is_file():
            raise ConfigError("--platform", args.platform, "an existing platform TOML file or a thesis .ntp network file")
        _platform_file(args.platform, "--platform")
    check_seed(args.seed)
    params = parse_params(args.param, example="insertion=false")
    check_balancer_arg(args.balancer, "mapping", params)
    gantt = _image_file(args.gantt, "--gantt")
    where = args.nodes if args.nodes is not None else args.platform
    if args.contention == "link" and args.nodes is not None:
        raise ConfigError("--contention", "link", "'port' (or the bare flag) with --nodes: 'link' needs the links of a "
                          "--platform's topology")
    contention = {None: False, "port": True, "link": "link"}[args.contention]
    from dlbkit.model.check import renamed
    # the API names its arguments ("nodes", the graph's "costs"); the command line names the flag and the file
    with renamed("nodes", "--nodes" if args.nodes is not None else "nodes"), \
            renamed("costs", f"costs of {args.graph}"), renamed("contention", "--contention"):
        r = schedule(args.graph, where, args.balancer, params=params, cost_model=args.cost_model,
                     contention=contention, seed=args.seed)
    info = r.trace.meta.get("plan_info") or {}
    if gantt is not None:
        import matplotlib.pyplot as plt
        fig = r.plot_gantt()
        fig.savefig(gantt)
        plt.close(fig)  # main() runs in-process too (tests, notebooks): pyplot kept every chart open
    if args.json:
        d = r.as_dict()
        if "gap" in info:  # a solver's report (the milp's): status, objective, dual bound, optimality gap
            d["solver"] = _jsonable({k: info[k] for k in _SOLVER_KEYS if k in info})
        print(json.dumps(d))
        return 0
    d = r.as_dict()
    print(f"{r.trace.meta['graph']}: {len(d['assignment'])} tasks on {r.trace.n_nodes} nodes, balancer "
          f"{args.balancer}, cost model {args.cost_model}: makespan {r.makespan:g}")
    if "gap" in info:
        print(f"{args.balancer}: {info.get('message', '')} objective {info['objective']:g}, dual bound "
              f"{info['dual_bound']:g}, gap {info['gap']:.4g}")
    # a --platform's nodes by the names its file gives ("/k" for a node's k-th core); --nodes M's by number
    names = r.trace.node_labels() or [str(p) for p in range(r.trace.n_nodes)]
    rows = [[str(t), names[p], f"{d['start'][t]:g}", f"{d['finish'][t]:g}"] for t, p in d["assignment"].items()]
    print(wrapped_table(["task", "node", "start", "finish"], rows, [24, 12, 12, 12]))
    return 0


# --- advise -----------------------------------------------------------------------------------------
def _add_advise_parser(sub, lazy: bool = False) -> None:
    _add_command(sub, "advise", _advise_arguments, lazy,
                 help="rank the chunking balancers for another run of a recorded loop",
                 description="Predict, by simulating it on what the recorded run's last step of items measured "
                             "(item costs, worker speeds, latency), each candidate chunking balancer's makespan "
                             "for another run of that step, best first; the balancer that ran it gets its "
                             "measured makespan beside the prediction. --json prints a list, best first.")


def _advise_arguments(ad: argparse.ArgumentParser) -> None:
    ad.add_argument("trace", metavar="RUN.json", help="a recorded run (dlbkit run --record, run_map(record=), Loop.save)")
    ad.add_argument("--balancer", "-b", metavar="NAME", action="append", default=[],
                    help="a candidate (repeatable, or comma-separated; default: the 20 rules auto chooses among, every "
                         "self-scheduling rule but rnd, sanchez and proportional)")
    ad.add_argument("--plot", metavar="FILE.png", help="also draw the run's auto choices and predictions per step")
    ad.add_argument("--json", action="store_true", help="a JSON list, best first")
    _add_import(ad)
    ad.set_defaults(func=_cmd_advise)


def _cmd_advise(args) -> int:
    from dlbkit.face.advise import advise, format_advice, plot_auto

    names = [n.strip() for b in args.balancer for n in b.split(",") if n.strip()]
    if args.balancer and not names:  # -b '' asked for candidates and named none: an error, not "every rule"
        names = [",".join(args.balancer)]
    for n in names:
        check_balancer_arg(n, "chunking", exclude=("auto",))
    plot = _image_file(args.plot, "--plot")
    rows = advise(args.trace, candidates=names or None)
    if plot is not None:
        import matplotlib.pyplot as plt
        ax = plot_auto(args.trace)
        ax.figure.savefig(plot, dpi=110)
        plt.close(ax.figure)
    if args.json:
        print(json.dumps(_jsonable(rows)))
        return 0
    print(format_advice(rows, str(args.trace)))
    return 0


if __name__ == "__main__":  # pragma: no cover  (at the end: every parser above is defined by then)
    sys.exit(main())
