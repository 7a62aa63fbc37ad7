"""The ``dlbkit`` command line.

Subcommands (one module each, named for the command; the flags several take in
:mod:`dlbkit.face.cli.options`)::

    dlbkit simulate EXPERIMENT.toml [--out DIR] [--jobs N] [--batch N|auto]   run a sweep; table, CSVs, plots, report
    mpiexec -n N dlbkit simulate EXPERIMENT.toml --executor mpi   the same sweep's runs on N-1 MPI ranks
    dlbkit balancers [--json] [--kind KIND]                  the registered balancers
    dlbkit families [--json] [--import MODULE]                the workload families, their engines and kinds
    dlbkit bench m1|m2 --workers P --tasks N [--seed S] [--json] a reference model's makespan and speed
    dlbkit bench supermarket --servers N --load RHO --choices D --jobs J [--seed S] [--replace] [--json]
    dlbkit reproduce NAME [--json]                            a document's claims, theirs vs ours
    dlbkit run MODULE:FUNCTION --items N [--balancer B] ...   a real parallel loop: FUNCTION(i) for each item
    dlbkit replay TRACE.json [--balancer B ...] [--json]      a recorded run in the simulator, other balancers
    dlbkit cluster MODULE:FUNCTION --jobs N [--rate R] ...     a stream of real jobs on a decentralised Cluster
    dlbkit schedule GRAPH (--nodes M | --platform P.toml) [--balancer B] ...   a task graph mapped and timed
    dlbkit advise RUN.json [--balancer B ...] [--json]         the chunking balancers ranked for a recorded loop
    dlbkit describe FILE [--json]                             what dlbkit reads from a workload or platform file

Bad input prints one line, ``dlbkit: error: <message>``, on stderr and exits with status 2 (no
traceback). Ctrl-C exits with status 130; runs already finished stay in results.csv.

Each command module imports its engine inside its functions, so that ``import dlbkit`` and ``dlbkit
--help`` import none (tests/test_import_cost.py).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from dlbkit.errors import DlbkitError
from dlbkit.face.cli import (advise, balancers, bench, cluster, describe, families, replay, reproduce, run, schedule,
                             simulate)
from dlbkit.face.cli.loading import load_module
from dlbkit.face.cli.output import one_line
from dlbkit.face.cli.parser import Parser, add_command

# what callers import from dlbkit.face.cli (tests, docs), importable from here as when the CLI was one module
from dlbkit.face.cli.balancers import KINDS, balancer_info, balancer_kinds, plain_text
from dlbkit.face.cli.bars import RunBar, SweepBar
from dlbkit.face.cli.loading import load_function
from dlbkit.face.cli.options import check_balancer_arg, check_seed, parse_params
from dlbkit.face.cli.output import balancer_label, wrapped_table
from dlbkit.face.cli.simulate import find_experiment, master_role, shipped_experiments

__all__ = ["main", "build_parser"]

#: each command's module (its HELP, DESCRIPTION, arguments and command), in the order ``dlbkit --help`` lists them
COMMANDS = {"simulate": simulate, "balancers": balancers, "families": families, "bench": bench, "reproduce": reproduce,
            "run": run, "replay": replay, "cluster": cluster, "schedule": schedule, "advise": advise,
            "describe": describe}


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The ``dlbkit`` parser and its commands. *lazy*: each command's arguments are added when that
    command is parsed, not here (:func:`main`: ``dlbkit --help`` and a command import only what
    they use; the help printed is the same)."""
    from dlbkit import __version__

    p = Parser(prog="dlbkit", description="Dynamic load balancing on heterogeneous, non-dedicated clusters: "
                                           "simulate, compare, benchmark and reproduce.")
    p.add_argument("--version", action="version", version=f"dlbkit {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name, module in COMMANDS.items():
        add_command(sub, name, module.arguments, lazy, help=module.HELP, description=module.DESCRIPTION)
    return p


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
    launched = _check_in(args.command)
    try:
        for name in getattr(args, "imports", None) or ():  # before any name is resolved
            load_module(name, "--import")
        return int(args.func(args) or 0)
    except DlbkitError as e:
        print(f"dlbkit: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        out = getattr(args, "out_dir", None)
        kept = f"; finished runs are kept in {out / 'results.csv'} (rerun the same command to resume)" if out else ""
        print(f"\ndlbkit: interrupted{kept}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dlbkit balancers | head`
        return 0
    finally:
        if launched:  # this rank left its command on its own: it did not die
            from dlbkit.runtime import status
            status.done()


def _check_in(command: str) -> bool:
    """A rank of a job that ``dlbkit run``, ``cluster`` or ``simulate --ranks`` started: tell the launcher
    this rank started (it bounds the start, :mod:`dlbkit.runtime.launch`). Whether it is one."""
    if not os.environ.get("DLBKIT_STATUS_DIR"):  # status.ENV, read before the runtime is imported
        return False
    from dlbkit.face.cli.ranks import env_rank
    from dlbkit.runtime import status

    status.open_for(env_rank(), watched=False)  # the run holds the FIFO (status.open_for says why)
    status.doing("running dlbkit %s", command)
    return status.ON


def _files_only_plots() -> None:
    """The CLI only writes plot files: choose matplotlib's Agg backend here (importing
    :mod:`dlbkit.plots` never chooses one) and for the worker processes of a sweep."""
    os.environ["MPLBACKEND"] = "Agg"
    if "matplotlib" in sys.modules:
        sys.modules["matplotlib"].use("Agg")
