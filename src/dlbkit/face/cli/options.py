"""The flags several commands take, written once: the functions that add a flag (or a pair) to a
command's parser, and the checks of their values, so that a bad value is the same one-line error
whichever command was given it (docs/design.md, "Validation: one path")."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Sequence

from dlbkit.errors import ConfigError, closest

__all__ = ["add_import", "add_target", "add_balancer", "add_candidates", "add_workers", "add_emulate", "add_seed",
           "add_record", "add_progress", "add_json", "add_launch", "start_job", "check_launch_flags",
           "parse_params", "check_balancer_arg", "check_seed",
           "check_count", "emulate_arg", "platform_file", "writable_file", "output_dir", "image_file"]


# --- flags ------------------------------------------------------------------------------------------
def add_import(parser: argparse.ArgumentParser) -> None:
    """``--import MODULE``: a balancer of the user's own, registered when its module is imported, can
    then be named like a shipped one (an experiment file stays data: the code is named on the command
    line)."""
    parser.add_argument("--import", dest="imports", metavar="MODULE", action="append", default=[],
                        help="a Python module or .py file to import first (repeatable), e.g. one whose "
                             "balancers of your own are @register-ed (from dlbkit import register), so that "
                             "their names can be used here")


def add_target(parser: argparse.ArgumentParser, help: str) -> None:
    """``MODULE:FUNCTION``, the user's function the command calls (:func:`~dlbkit.face.cli.loading.load_function`)."""
    parser.add_argument("target", metavar="MODULE:FUNCTION", help=help)


def add_balancer(parser: argparse.ArgumentParser, kind: str, default: str) -> None:
    """``--balancer/-b NAME``, one balancer of *kind* (*default* when not given), and ``--param/-p
    KEY=VALUE``, its parameters (repeatable): checked by :func:`parse_params` and
    :func:`check_balancer_arg`."""
    parser.add_argument("--balancer", "-b", metavar="NAME", default=default,
                        help=f"a {kind} balancer (dlbkit balancers --kind {kind}; default {default})")
    parser.add_argument("--param", "-p", metavar="KEY=VALUE", action="append", default=[],
                        help="a balancer parameter (repeatable); VALUE is read as JSON if it can be (4, 0.5, true)")


def add_candidates(parser: argparse.ArgumentParser, help: str) -> None:
    """``--balancer/-b NAME`` repeatable, each value one name or several comma-separated: the
    balancers a command compares (replay, advise); an empty list when none is given."""
    parser.add_argument("--balancer", "-b", metavar="NAME", action="append", default=[], help=help)


def add_workers(parser: argparse.ArgumentParser, help: str) -> None:
    """``--workers/-P P``, how many workers (None when not given: the command's default)."""
    parser.add_argument("--workers", "-P", type=int, metavar="P", help=help)


def add_emulate(parser: argparse.ArgumentParser, help: str) -> None:
    """``--emulate PLATFORM``: a platform file or speed factors (checked by :func:`emulate_arg`)."""
    parser.add_argument("--emulate", metavar="PLATFORM", help=help)


def add_seed(parser: argparse.ArgumentParser, help: str, default: int | None = 0) -> None:
    """``--seed S`` (checked by :func:`check_seed`); *default* None: the command chooses."""
    parser.add_argument("--seed", type=int, default=default, help=help)


def add_record(parser: argparse.ArgumentParser) -> None:
    """``--record TRACE.json``: where to save a real run's trace (checked by :func:`writable_file`)."""
    parser.add_argument("--record", metavar="TRACE.json", help="save the run's trace (for 'dlbkit replay')")


def add_progress(parser: argparse.ArgumentParser, help: str) -> None:
    """``--progress/--no-progress`` (None when neither: a bar when stderr is a terminal, else a line every
    few seconds: :func:`~dlbkit.runtime.progress.line_mode`); *help* says of what."""
    from dlbkit.runtime.progress import LINE_S
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help=help + f" (default: a bar when stderr is a terminal, else a line every {LINE_S:g} s "
                        "once the command has run that long; --no-progress: nothing)")


def add_launch(parser: argparse.ArgumentParser, job: str) -> None:
    """``--ranks N`` (dlbkit starts ``mpiexec -n N`` on the same command) and where: ``--hosts`` or
    ``--hostfile``, with ``--start-timeout`` (docs/across-machines.md). *job*: what the ranks do."""
    parser.add_argument("--ranks", type=int, metavar="N",
                        help=f"start the MPI job here, mpiexec -n N ({job}); a rank that dies is named in the "
                             "last line")
    parser.add_argument("--hosts", metavar="H1:N1,H2:N2",
                        help="with --ranks: the machines the ranks run on and how many on each (mpiexec -hosts), "
                             "started over ssh; docs/across-machines.md")
    parser.add_argument("--hostfile", metavar="FILE",
                        help="with --ranks: a file of HOST or HOST:N lines, one machine each (mpiexec -f)")
    parser.add_argument("--start-timeout", type=float, metavar="S",
                        help="with --ranks: end the job if a rank has not started within S seconds "
                             "(default 60): a host that cannot be reached is named, not waited for")


def start_job(args) -> int:
    """Start the MPI job of ``--ranks`` on the same command (:mod:`dlbkit.runtime.launch`); its exit
    status. The caller has run :func:`check_launch_flags` first, before its own checks."""
    import importlib.util
    import sys

    from dlbkit.runtime.launch import START_S, find_mpiexec, launch, without_ranks

    if importlib.util.find_spec("mpi4py") is None:
        raise ConfigError("--ranks", args.ranks, "used with mpi4py installed (pip install 'dlbkit[mpi]')")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise ConfigError("--ranks", args.ranks, "used with an mpiexec next to this Python or on PATH "
                          "(pip install mpich)")
    sys.stdout.flush()
    timeout = START_S if args.start_timeout is None else args.start_timeout
    return launch(mpiexec, args.ranks, without_ranks(args.argv), hosts=args.hosts, hostfile=args.hostfile,
                  start_timeout=timeout)


def check_launch_flags(args) -> None:
    """The flags of :func:`add_launch` checked: ``--ranks`` in range and not under an ``mpiexec``,
    ``--hosts`` or ``--hostfile`` (not both) readable, ``--start-timeout`` > 0; none of the three
    without ``--ranks`` (under your own ``mpiexec`` the machines are its ``-hosts``)."""
    import math
    import os

    from dlbkit.runtime.launch import MAX_RANKS, parse_hosts, read_hostfile

    if args.ranks is None:
        for flag, value in (("--hosts", args.hosts), ("--hostfile", args.hostfile),
                            ("--start-timeout", args.start_timeout)):
            if value is not None:
                raise ConfigError(flag, value, "used with --ranks N (dlbkit starts the MPI job), or given to "
                                  "your own mpiexec as -hosts / -f")
        return
    if not 2 <= args.ranks <= MAX_RANKS:
        raise ConfigError("--ranks", args.ranks, f"an integer from 2 to {MAX_RANKS} (rank 0 coordinates, the "
                          "others compute)")
    if any(v in os.environ for v in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")):
        raise ConfigError("--ranks", args.ranks, "omitted when mpiexec already started this command")
    if args.hosts is not None and args.hostfile is not None:
        raise ConfigError("--hostfile", args.hostfile, "omitted with --hosts (one list of machines)")
    if args.hosts is not None:
        parse_hosts(args.hosts)
    if args.hostfile is not None:
        read_hostfile(args.hostfile)
    if args.start_timeout is not None and not (math.isfinite(args.start_timeout) and args.start_timeout > 0):
        raise ConfigError("--start-timeout", args.start_timeout, "a finite number of seconds > 0")


def add_json(parser: argparse.ArgumentParser, help: str) -> None:
    """``--json``: print JSON (*help* says its shape) instead of text."""
    parser.add_argument("--json", action="store_true", help=help)


# --- checks -----------------------------------------------------------------------------------------
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
    from dlbkit.balancers.registry import REGISTRY, kind_hint, names, other_kind, resolve

    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    cls = REGISTRY.get(name.lower())
    if cls is None or cls.kind not in kinds or cls.name in exclude:
        fits = [n for k in kinds for n in names(k) if n not in exclude]
        raise ConfigError("--balancer", name, kind_hint(kinds) + (f" other than {', '.join(exclude)}" if exclude
                                                                  else "") + ": " + ", ".join(fits)
                          + other_kind(name, kinds),
                          suggest=None if cls is not None else closest(name, fits))
    if params is not None:
        valid = cls.param_names()
        for k in params:
            if k not in valid:
                raise ConfigError("--param", k, f"a parameter of {cls.name}: " + (", ".join(valid) or "(it has none)"),
                                  suggest=closest(k, valid))
        resolve(cls.name, params, kind=kinds, field="--balancer")


def check_seed(seed: int | None) -> int | None:
    """``--seed`` checked alike by every command that takes one (None: the command's default)."""
    if seed is not None and seed < 0:
        raise ConfigError("--seed", seed, "an integer >= 0")
    return seed


def check_count(value: int | None, flag: str) -> None:
    """A count of nodes, workers or jobs given with *flag*: at least 1 (None: not given)."""
    if value is not None and value < 1:
        raise ConfigError(flag, value, "an integer >= 1")


def emulate_arg(value: str | None):
    """``--emulate``: None, the speed factors checked (a list), or a platform file checked (its path)."""
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
    return platform_file(value, "--emulate")


def platform_file(path: str, flag: str) -> str:
    """*path* checked as a platform file now, so that a bad field names the flag and the file as an
    experiment's error names its file (``--emulate p.toml: nodes[1].speed must be ...``)."""
    from dlbkit.model.platform import Platform

    if not path.lower().endswith(".ntp"):  # a thesis network file (schedule --platform): its own reader, any case
        try:
            Platform.read(path)
        except ConfigError as e:
            named = str(Path(path))
            if e.field == "file" or e.field.startswith(("TOML syntax", named, f"file {named}")):  # these name the file
                raise
            raise ConfigError(f"{flag} {path}: {e.field}", e.value, e.allowed) from None
    return path


def writable_file(path: str | None, flag: str) -> Path | None:
    """A file the command will write (None: not asked for): not a directory, in an existing one."""
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        raise ConfigError(flag, path, "a file name (a directory of that name exists)")
    if not p.parent.is_dir():
        raise ConfigError(flag, path, "a file in an existing directory")
    return p


def output_dir(path: str | None, flag: str = "--out") -> Path | None:
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


def image_file(path: str | None, flag: str) -> Path | None:
    """A file to draw a figure in: in an existing directory, named with a format matplotlib writes
    (checked before the work, which a bad name would otherwise end in a traceback)."""
    p = writable_file(path, flag)
    if p is not None:
        from matplotlib.backend_bases import FigureCanvasBase

        formats = sorted(FigureCanvasBase.get_supported_filetypes())
        if p.suffix[1:].lower() not in formats:
            raise ConfigError(flag, path, "a file name ending in an image format: ." + ", .".join(formats))
    return p
