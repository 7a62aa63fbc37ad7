"""The ``dlbkit`` command line.

Subcommands::

    dlbkit simulate EXPERIMENT.toml [--out DIR] [--jobs N]   run a sweep; table, CSVs, plots, report
    dlbkit balancers [--json] [--kind KIND]                  the registered balancers
    dlbkit bench m1 --workers P --tasks N [--seed S] [--json] a reference model's makespan and speed
    dlbkit reproduce NAME [--json]                            a document's claims, theirs vs ours

Bad input prints one line, ``dlbkit: error: <message>``, on stderr and exits with status 2 (no
traceback). Ctrl-C exits with status 130; runs already finished stay in results.csv.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import shlex
import sys
import textwrap
import time
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from .errors import ConfigError, DlbkitError

__all__ = ["main", "build_parser"]

KINDS = ("chunking", "placement", "migration", "repartition", "mapping", "adaptive")  # DESIGN.md "Balancers"


class _Parser(argparse.ArgumentParser):
    """argparse with the one-line error format of every other dlbkit error (still exit status 2)."""

    def error(self, message: str):
        self.exit(2, f"dlbkit: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = _Parser(prog="dlbkit", description="Dynamic load balancing on heterogeneous, non-dedicated clusters: "
                                            "simulate, compare, benchmark and reproduce.")
    p.add_argument("--version", action="version", version=f"dlbkit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("simulate", help="run an experiment file: table, results.csv, summary.csv, plots, report",
                       description="Run every balancer × grid point × repetition of an experiment, print the "
                                   "comparison (mean ± 95% CI), and write results.csv, summary.csv, PNG plots "
                                   "and report.html. Rerunning resumes: finished runs are skipped.")
    s.add_argument("experiment", metavar="EXPERIMENT",
                   help="an experiment TOML file, or the name of a shipped one (e.g. 'demo')")
    s.add_argument("--out", metavar="DIR", help="output directory (default: ./out/<experiment name>)")
    s.add_argument("--jobs", "-j", metavar="N", type=int, default=1, help="worker processes (default 1)")
    s.set_defaults(func=_cmd_simulate)

    b = sub.add_parser("balancers", help="list the registered balancers",
                       description="Every registered balancer with its kind, parameters (defaults), "
                                   "taxonomy and source.")
    b.add_argument("--json", action="store_true", help="a JSON list of objects")
    b.add_argument("--kind", metavar="KIND", help="only balancers of this kind: " + ", ".join(KINDS))
    b.set_defaults(func=_cmd_balancers)

    from .sim.bench import MODELS
    bn = sub.add_parser("bench", help="run a reference model (benchmarks/MODELS.md)",
                        description="Run a reference model through the general engine: makespan, events, "
                                    "wall time and events per second.")
    bn.add_argument("model", choices=sorted(MODELS), help="reference model")
    bn.add_argument("--workers", "-P", type=int, required=True, metavar="P", help="number of workers")
    bn.add_argument("--tasks", "-N", type=int, required=True, metavar="N", help="number of tasks")
    bn.add_argument("--seed", type=int, default=0, help="random seed (M1 is deterministic and ignores it)")
    bn.add_argument("--json", action="store_true", help="a JSON object")
    bn.set_defaults(func=_cmd_bench)

    r = sub.add_parser("reproduce", help="check a source document's published claims",
                       description="Print each claim of a reproduction: the document's value, ours, the "
                                   "tolerance and PASS/FAIL. Exit status 0 if all pass, 1 otherwise.")
    r.add_argument("name", metavar="NAME", help="reproduction name (e.g. sanchez2002)")
    r.add_argument("--json", action="store_true", help="a JSON list of objects")
    r.set_defaults(func=_cmd_reproduce)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with *argv* (default ``sys.argv[1:]``); return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors (status 2)
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 2)
    args.argv = argv
    try:
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


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --- simulate ---------------------------------------------------------------------------------------
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
                      + (", ".join(sorted(shipped)) or "none shipped") + ")")


def _cmd_simulate(args) -> int:
    from .experiments import (format_table, load_experiment, run_sweep, save_all, summarise, write_report,
                              write_summary_csv)

    if args.jobs < 1:
        raise ConfigError("--jobs", args.jobs, "an integer >= 1")
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
          f"{exp.repetitions} repetitions), {args.jobs} job(s), output in {out}", flush=True)
    tty = sys.stderr.isatty()

    def progress(done: int, total: int, row: dict) -> None:
        if tty:
            print(f"\r  {done}/{total} runs", end="" if done < total else "\n", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    sweep = run_sweep(exp, out, jobs=args.jobs, progress=progress)
    summary = summarise(sweep.rows)
    write_summary_csv(summary, out / "summary.csv")
    print()
    print(format_table(summary) if summary else "no successful runs")
    images = save_all(out, summary, sweep.traces, jobs=args.jobs)
    command = shlex.join(["dlbkit", *args.argv])
    write_report(out / "report.html", sweep, summary, images, command=command)
    n_png = sum(len(v) for v in images.values())
    print(f"\n{sweep.ran} runs done, {sweep.skipped} reused from an earlier sweep, {len(sweep.failures)} failed; "
          f"{time.perf_counter() - t0:.1f} s")
    print(f"wrote {out / 'results.csv'}, summary.csv, {n_png} PNG plots and report.html in {out}")
    if sweep.failures:
        print(f"\n{len(sweep.failures)} run(s) failed (recorded in results.csv; a rerun retries them):")
        for r in sweep.failures:
            pt = f" [{r['point']}]" if r["point"] else ""
            print(f"  {r['label']}{pt} repetition {r['repetition']}: {r['error']}")
        return 1
    return 0


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


def balancer_info(cls) -> dict:
    """What ``dlbkit balancers --json`` prints for one balancer class."""
    tax = getattr(cls, "taxonomy", None)
    return {"name": cls.name, "kind": cls.kind, "class": f"{cls.__module__}.{cls.__qualname__}",
            "parameters": {k: _jsonable(v) for k, v in cls.param_defaults().items()},
            "taxonomy": tax.as_dict() if tax is not None else {}, "source": cls.source,
            "doc": _summary_line(cls.__doc__)}


def _cmd_balancers(args) -> int:
    from .balancers import registry

    if args.kind is not None and args.kind not in KINDS:
        raise ConfigError("--kind", args.kind, "one of " + ", ".join(KINDS))
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


# --- bench ------------------------------------------------------------------------------------------
def _cmd_bench(args) -> int:
    from .sim.bench import MODELS

    fn = MODELS[args.model]
    kwargs = {"seed": args.seed} if "seed" in inspect.signature(fn).parameters else {}
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
    from .reproduce import run

    claims = [c.as_dict() for c in run(args.name)]
    all_ok = all(bool(c["ok"]) for c in claims)
    if args.json:
        print(json.dumps([{k: _jsonable(c[k]) for k in ("claim", "paper", "ours", "tolerance", "ok")}
                          for c in claims], indent=2, ensure_ascii=False))
        return 0 if all_ok else 1
    header = ["claim", "paper", "ours", "tolerance", "result"]
    rows = [[_one_line(str(c["claim"])), _fmt(c["paper"]), _fmt(c["ours"]), str(c["tolerance"]),
             "PASS" if c["ok"] else "FAIL"] for c in claims]
    print(wrapped_table(header, rows, [52, 26, 26, 26, 6]))
    n_ok = sum(bool(c["ok"]) for c in claims)
    print(f"\n{args.name}: {n_ok} of {len(claims)} claims reproduced within tolerance")
    return 0 if all_ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
