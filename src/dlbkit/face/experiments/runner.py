"""Run an experiment's sweep: optionally in parallel, row by row into results.csv, resumable.

Every finished run is appended to ``results.csv`` (and flushed) the moment it finishes, so an
interrupted or failing sweep keeps everything already done. On a rerun, runs whose row is already
there with status ``ok`` are skipped; failed runs are retried, and the newer row replaces the older
one when the sweep ends. A run's key is (label, grid point, repetition); each row also carries a
fingerprint of the configuration that produced it, and a row whose key matches but whose fingerprint
does not (the experiment file changed) stops the sweep with a ConfigError instead of mixing results,
as do rows of another experiment (by name). Rows of runs the experiment no longer has (a balancer or
a grid value removed) move to results-removed.csv when the sweep ends (nothing finished is lost); a ``[grid]`` written in another key order
(the same points) has results.csv rewritten in the new order first (docs/experiments.md, "Resuming:
what is kept, recomputed and removed").

A run that raises is recorded with ``status = error`` and its message; the sweep goes on.

Where the runs run: in this process (``jobs=1``), in *jobs* local worker processes, or on any
:class:`concurrent.futures.Executor` the caller already has (``executor=``: an
``mpi4py.futures`` executor, a Dask ``Client.get_executor()``, a ``ProcessPoolExecutor`` kept
open). Runs go to the workers in tasks of one run (``batch=1``) or several (``batch=N``, or
``"auto"``: sized by the measured run time and the workers, :mod:`.batching`); each run carries its
own seed, so where and with which others it runs changes nothing in its row but ``wall_s``; only
this process writes results.csv, each run's row as its task comes back.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from dlbkit import families
from dlbkit.families.simulate import simulate
from dlbkit.errors import ConfigError
from dlbkit.model.trace import Trace
from dlbkit.face.own_modules import import_own
from dlbkit.runtime.backends.local import check_workers
from dlbkit.face.experiments.batching import DEFAULT_BATCH, batch_size, check_batch, workers_of
from dlbkit.face.experiments.spec import Experiment, RunSpec, point_key

__all__ = ["Sweep", "run_sweep", "run_experiment", "columns", "read_results", "RESULTS_FILE"]

RESULTS_FILE = "results.csv"
#: where the rows of runs the experiment no longer has go (appended), so that no finished run is lost
#: when a balancer or a grid value is taken out of the file for a while
REMOVED_FILE = "results-removed.csv"
BASE_COLUMNS = ("experiment", "label", "balancer", "params", "point")
RUN_COLUMNS = ("repetition", "seed", "status", "error", "wall_s", "fingerprint")


def metric_columns(family=None) -> tuple[str, ...]:
    """The metric columns of results.csv for an experiment of *family* (:func:`dlbkit.families.metrics_table`);
    None: every metric a registered family has (to tell a header's metric columns from its grid keys)."""
    return tuple(families.metrics_table(family))


Progress = Callable[[int, int, dict], None]


def columns(experiment: Experiment) -> list[str]:
    """The header of results.csv: run identity, one column per grid key, run status, then metrics."""
    return [*BASE_COLUMNS, *experiment.grid_keys, *RUN_COLUMNS, *metric_columns(experiment.family)]


@dataclass
class Sweep:
    """The outcome of :func:`run_sweep`.

    *rows*: the latest row of every run of the experiment that has one, in the experiment's order
    (typed: numbers as numbers); *traces*: the Trace of repetition 0
    per (label, grid point text).
    *ran* runs were executed now, *skipped* were already in results.csv; *removed* rows of runs the
    experiment no longer has were moved from it to *removed_to* (:data:`REMOVED_FILE`, appended).
    """

    experiment: Experiment
    out_dir: Path
    rows: list[dict]
    traces: dict[tuple[str, str], Trace] = field(default_factory=dict)
    ran: int = 0
    skipped: int = 0
    wall_s: float = 0.0
    removed: int = 0
    removed_to: Path | None = None

    @property
    def failures(self) -> list[dict]:
        return [r for r in self.rows if r["status"] != "ok"]

    @property
    def ok_rows(self) -> list[dict]:
        return [r for r in self.rows if r["status"] == "ok"]

    @property
    def results_path(self) -> Path:
        return self.out_dir / RESULTS_FILE


def run_experiment(experiment: Experiment | str | Path, out: str | Path | None = None, *,
                   executor: Executor | None = None, jobs: int = 1, progress: Progress | None = None,
                   keep_traces: bool = True, batch: int | str = DEFAULT_BATCH) -> Sweep:
    """Run the sweep of *experiment* (an :class:`Experiment` or the path of its TOML file) into *out*
    (default ``out/<experiment name>``), as :func:`run_sweep` does; return the :class:`Sweep`.

    *executor*: any :class:`concurrent.futures.Executor` that can pickle a run and its outcome
    (``mpi4py.futures.MPIPoolExecutor`` or the executor of ``MPICommExecutor``, a Dask
    ``Client.get_executor()``, a ``ProcessPoolExecutor``); every run is submitted to it and the
    caller keeps it (it is not shut down). Its workers must import the same dlbkit. Same seeds, the
    same rows as a local sweep (all but ``wall_s``); resumable; a run whose task fails is recorded.
    Without *executor*, *jobs* local processes as in ``dlbkit simulate --jobs``.

    *batch*: runs per task sent to *executor* (or to the *jobs* processes): ``1``, one run per task;
    an integer N, N runs per task; ``"auto"`` (the default), about 0.1 s of measured work per task
    but at most half of the remaining runs over the workers (factoring), one run per task for runs
    of 0.1 s or more (:mod:`dlbkit.face.experiments.batching`). Rows are the same whatever the batch.

    It writes results.csv; :func:`dlbkit.face.experiments.write_outputs` then writes summary.csv, the
    figures and report.html, as ``dlbkit simulate`` does (not called here: the report's modules import
    ``dlbkit``, which imports this one).
    """
    if not isinstance(experiment, Experiment):
        from dlbkit.face.experiments.spec import load_experiment

        if not isinstance(experiment, (str, Path)):
            raise ConfigError("experiment", type(experiment).__name__, "an Experiment or the path of an "
                              "experiment TOML file")
        experiment = load_experiment(experiment)
    if out is None:
        out = Path("out") / experiment.name
    return run_sweep(experiment, out, jobs=jobs, executor=executor, progress=progress, keep_traces=keep_traces,
                     batch=batch)


def run_sweep(experiment: Experiment, out_dir: str | Path, *, jobs: int = 1, executor: Executor | None = None,
              progress: Progress | None = None, keep_traces: bool = True,
              run_progress: Callable[[int, int], None] | None = None, batch: int | str = DEFAULT_BATCH) -> Sweep:
    """Run every run of *experiment* that results.csv in *out_dir* does not already hold.

    *jobs* > 1 runs that many worker processes; *executor* (with *jobs* 1) submits every run to a
    :class:`concurrent.futures.Executor` the caller owns (see :func:`run_experiment`); *batch*: runs
    per task for either (``1``, an integer, or ``"auto"``; see :func:`run_experiment`).
    *progress(done, total, row)* is called after each run (a task of several runs: once per run).
    *run_progress(done, total)* goes to the engine (:func:`dlbkit.simulate`'s ``progress``) when
    exactly one run is to be done in this process: the work done inside that run.
    Raise ConfigError if *out_dir* holds results of a different configuration or experiment; drop
    the rows of runs *experiment* no longer has. KeyboardInterrupt
    propagates after the pool is shut down (an *executor*'s pending runs cancelled); rows written
    so far stay in results.csv.
    """
    check_workers(jobs, "jobs", more="an executor (mpi4py.futures, Dask)")  # >= 1, processes this machine can start
    batch = check_batch(batch)
    if executor is not None:
        if not isinstance(executor, Executor):
            raise ConfigError("executor", type(executor).__name__, "a concurrent.futures.Executor (e.g. "
                              "mpi4py.futures.MPIPoolExecutor, a Dask Client.get_executor()) or None")
        if jobs != 1:
            raise ConfigError("jobs", jobs, "1 (the default) with an executor: its workers run the runs")
    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError("--out", str(out_dir), f"a directory that can be created ({e.strerror})") from None
    path = out_dir / RESULTS_FILE
    cols = columns(experiment)
    specs = experiment.expand()
    existing, latest, todo = _earlier(path, experiment, specs, cols)
    skipped = len(specs) - len(todo)
    traces: dict[tuple[str, str], Trace] = {}
    retried = any(s.key in existing for s in todo)
    # runs the experiment no longer has (a balancer or a grid value removed): their rows move to
    # REMOVED_FILE, so that results.csv, like the summary and the plots, holds the current experiment
    # alone and no finished run is lost
    stale = existing.keys() - {s.key for s in specs}

    with _Appender(path, cols) as out:
        def finish(spec: RunSpec, values: dict, trace: Trace | None, done: int) -> None:
            row = _row(experiment, spec, values)
            out.write(row)
            latest[spec.key] = row
            if trace is not None and spec.repetition == 0 and keep_traces:
                traces[(spec.label, spec.point_text)] = trace
            if progress is not None:
                progress(done, len(todo), row)

        if executor is not None:
            _run_on(executor, todo, finish, keep_traces, batch)
        elif jobs == 1 or len(todo) <= 1:
            inside = run_progress if len(todo) == 1 else None
            for k, s in enumerate(todo, 1):
                values, trace = _execute(s, keep_traces and s.repetition == 0, inside)
                finish(s, values, trace, k)
        else:
            _run_pool(todo, jobs, finish, keep_traces, batch)

    removed_to = None
    if retried or stale or existing.duplicates or existing.broken:
        removed_to = _compact(path, {(lbl, pt, str(r)) for lbl, pt, r in stale})
    if keep_traces:  # repetition 0 done in an earlier sweep: replay it (same seed, same trace)
        again = [s for s in specs if s.repetition == 0 and (s.label, s.point_text) not in traces
                 and latest.get(s.key, {}).get("status") == "ok"]
        for s, trace in _replayed(again, executor):
            if trace is not None:
                traces[(s.label, s.point_text)] = trace
    rows = [latest[s.key] for s in specs if s.key in latest]
    order = [(s.label, s.point_text) for s in specs if s.repetition == 0]
    traces = {k: traces[k] for k in order if k in traces}  # experiment order, not completion order
    return Sweep(experiment, out_dir, rows, traces, len(todo), skipped, time.perf_counter() - t0, len(stale),
                 removed_to)


def _earlier(path: Path, experiment: Experiment, specs: list[RunSpec], cols: list[str]) -> tuple[_Existing, dict, list]:
    """What results.csv at *path* already holds for *specs*: (its rows by key, the rows of *specs*
    found there, the specs to run: missing or failed). Raise ConfigError, leaving the file as it was,
    if it holds another experiment's rows or a row of a run from a different configuration. A file
    of the grid's keys in another order is put in their order (:func:`_regrid`) once it passed."""
    out_dir = path.parent
    regridded = _regrid(path, cols)
    try:
        existing = read_results(regridded or path, cols)
        others = sorted({r["experiment"] for r in existing.values()} - {experiment.name})
        if others:  # another experiment's results: never mixed in, never removed as this one's stale runs
            raise ConfigError(f"--out {out_dir}", f"results.csv with rows of experiment {others[0]!r}",
                              f"a fresh directory or one holding results of experiment {experiment.name!r} "
                              "(use another --out, or remove results.csv)")
        latest: dict[tuple, dict] = {}
        todo: list[RunSpec] = []
        for s in specs:
            row = existing.get(s.key)
            if row is not None and row["fingerprint"] != s.fingerprint:
                raise ConfigError(f"--out {out_dir}", f"results.csv row {s.label!r} {s.point_text} repetition "
                                  f"{s.repetition} from a different configuration",
                                  "a fresh directory or one holding results of this same experiment "
                                  "(use another --out, or remove results.csv)")
            if row is not None:
                latest[s.key] = row
            if row is None or row["status"] != "ok":
                todo.append(s)
    except BaseException:
        if regridded is not None:
            regridded.unlink(missing_ok=True)
        raise
    if regridded is not None:
        os.replace(regridded, path)
    return existing, latest, todo


def _run_pool(todo: list[RunSpec], jobs: int, finish, keep_traces: bool, batch: int | str = 1) -> None:
    """Run *todo* on *jobs* processes; write each row as it finishes (and keep repetition 0's trace)."""
    pool = ProcessPoolExecutor(max_workers=jobs)
    try:
        _run_on(pool, todo, finish, keep_traces, batch)
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


#: tasks in flight per worker under ``batch="auto"``: two, so that a worker finishing one task has the
#: next already waiting (the round trip hidden) while the sizes of the later ones wait for more
#: measurements
IN_FLIGHT_PER_WORKER = 2


def _run_on(executor: Executor, todo: list[RunSpec], finish, keep_traces: bool, batch: int | str = 1) -> None:
    """Send the runs of *todo* to *executor*, *batch* runs per task; call *finish* for each run as its
    task completes (one call per run, in the task's order).

    ``batch`` 1 or N: every task submitted at once, in *todo*'s order, N runs each (the last fewer).
    ``"auto"``: at most :data:`IN_FLIGHT_PER_WORKER` tasks per worker in flight, each sized when it is
    sent by :func:`.batching.batch_size` from the runs measured so far; one run per task, all at
    once, if the executor cannot say how many workers it has. A task of one run is :func:`_run_task`,
    of several :func:`_run_batch`, which records a run that raises as its error row and goes on.

    A task that fails outside them (a worker process or rank died, a Dask worker was lost, the
    executor refused the task) becomes an error row for each of its runs, like a run that raised; on
    any other exception (KeyboardInterrupt) the tasks not started are cancelled and it propagates.
    """
    workers = workers_of(executor) if batch == "auto" else None
    if batch == "auto" and workers is None:
        batch = 1
    window = IN_FLIGHT_PER_WORKER * workers if batch == "auto" else math.inf
    pending: dict[Future, list[RunSpec]] = {}
    done_count = 0
    sent = 0
    measured_s, measured_n = 0.0, 0

    def record(s: RunSpec, values: dict, trace: Trace | None) -> None:
        nonlocal done_count, measured_s, measured_n
        done_count += 1
        if values["wall_s"] > 0:  # a lost task's rows say 0: nothing measured
            measured_s, measured_n = measured_s + values["wall_s"], measured_n + 1
        finish(s, values, trace, done_count)

    def send() -> None:
        nonlocal sent
        while sent < len(todo) and len(pending) < window:
            if batch == "auto":
                n = batch_size(len(todo) - sent, workers, measured_s / measured_n if measured_n else None)
            else:
                n = batch
            specs = todo[sent:sent + n]
            sent += len(specs)
            try:
                pending[_submit_runs(executor, specs, keep_traces)] = specs
            except Exception as e:  # e.g. an executor shut down, a pool broken: the runs fail, not the sweep
                for s in specs:
                    record(s, _failed(e, 0.0), None)

    try:
        send()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                specs = pending.pop(fut)
                try:
                    outcome = fut.result()
                    outcomes = [outcome] if len(specs) == 1 else outcome
                except Exception as e:  # the worker died (BrokenProcessPool, a lost Dask worker, ...)
                    outcomes = [(_failed(e, 0.0), None)] * len(specs)
                for s, (values, trace) in zip(specs, outcomes):
                    record(s, values, trace)
            send()
    except BaseException:
        for fut in pending:
            fut.cancel()
        raise


def _submit_runs(executor: Executor, specs: list[RunSpec], keep_traces: bool) -> Future:
    """One task for *specs*: :func:`_submit` of the run if it is alone, else :func:`_run_batch` of them
    (with a token of its own, as :func:`_submit`). Repetition 0 brings its trace back if *keep_traces*."""
    if len(specs) == 1:
        return _submit(executor, specs[0], keep_traces and specs[0].repetition == 0)
    runs = [(s, keep_traces and s.repetition == 0) for s in specs]
    return executor.submit(_run_batch, runs, uuid.uuid4().hex)


def _run_batch(runs: list[tuple[RunSpec, bool]], _submission: str) -> list[tuple[dict, Trace | None]]:
    """Several runs as one executor task: :func:`_execute` of each (spec, keep_trace) in turn, one
    outcome per run. A run that raises, even outside the simulation, is its error row and the batch
    goes on, so one failing run loses none of the others."""
    out = []
    for spec, keep_trace in runs:
        t0 = time.perf_counter()
        try:
            out.append(_execute(spec, keep_trace))
        except Exception as e:
            out.append((_failed(e, time.perf_counter() - t0), None))
    return out


def _submit(executor: Executor, spec: RunSpec, keep_trace: bool) -> Future:
    # A fresh token per submission: an executor that memoises by its arguments (Dask's tasks are
    # "pure" by default, keyed by a hash of the function and arguments) would otherwise hand a
    # retried run its earlier attempt's failure.
    return executor.submit(_run_task, spec, keep_trace, uuid.uuid4().hex)


def _run_task(spec: RunSpec, keep_trace: bool, _submission: str) -> tuple[dict, Trace | None]:
    """:func:`_execute` as one executor task (*_submission* only makes each task distinct)."""
    return _execute(spec, keep_trace)


def _replayed(specs: list[RunSpec], executor: Executor | None):
    """(spec, trace) for each of *specs* run again with its trace kept: here, or on *executor*."""
    if executor is None or not specs:
        for s in specs:
            yield s, _execute(s, True)[1]
        return
    futures = [_submit(executor, s, True) for s in specs]
    try:
        for s, fut in zip(specs, futures):
            try:
                yield s, fut.result()[1]
            except Exception:  # the replay is for the plots only: a lost task draws no trace
                yield s, None
    finally:
        for fut in futures:
            fut.cancel()


def _execute(spec: RunSpec, keep_trace: bool, progress=None) -> tuple[dict, Trace | None]:
    """Simulate one run; never raises for a failing run (the error becomes the row's status).
    With *keep_trace* also return the Trace. *progress*: the engine's ``progress(done, total)``."""
    t0 = time.perf_counter()
    try:
        if spec.family_module is not None:  # see RunSpec.family_module: before the family is looked up
            import_own(spec.family_module, spec.family_module_file)
        if spec.module is not None:  # see RunSpec.module
            import_own(spec.module, spec.module_file)
        takes = families.of(spec.workload).engine_named(spec.engine_name).api_options
        extra = {} if progress is None or "progress" not in takes else {"progress": progress}
        result = simulate(spec.platform, spec.workload, spec.balancer, params=spec.params, seed=spec.seed,
                          engine_name=spec.engine_name, **spec.engine, **extra)
    except Exception as e:
        return _failed(e, time.perf_counter() - t0), None
    values = {"status": "ok", "error": "", "wall_s": time.perf_counter() - t0}
    values.update({m: float(result.metrics.get(m, math.nan)) for m in metric_columns(families.get(result.trace.family))})
    if not keep_trace:
        return values, None
    return values, result.trace


def _failed(e: BaseException, wall: float) -> dict:
    msg = " ".join(f"{type(e).__name__}: {e}".split())
    return {"status": "error", "error": msg, "wall_s": wall, **{m: math.nan for m in metric_columns()}}


def _row(experiment: Experiment, spec: RunSpec, values: dict) -> dict:
    row: dict[str, Any] = {"experiment": experiment.name, "label": spec.label, "balancer": spec.balancer,
                           "params": json.dumps(spec.params, sort_keys=True), "point": spec.point_text}
    row.update(dict(spec.point))
    row.update({"repetition": spec.repetition, "seed": spec.seed, "fingerprint": spec.fingerprint})
    row.update(values)
    return row


# --- results.csv ---------------------------------------------------------------------------------
class _Existing(dict):
    """key -> latest typed row; ``duplicates`` is True if some key occurs more than once, ``broken``
    if some row is incomplete (a write cut short)."""

    duplicates = False
    broken = False


_INT_COLUMNS = {"repetition", "seed"}


def read_results(path: str | Path, cols: list[str] | None = None) -> _Existing:
    """Rows of a results.csv by key (label, point, repetition), the latest row per key, typed.

    With *cols*, raise ConfigError if the file's header differs (it was written by another
    experiment). Incomplete rows (a write cut short) are ignored, so those runs run again.
    """
    path = Path(path)
    out = _Existing()
    if not path.is_file():
        return out
    with path.open(newline="") as fh:
        text = fh.read()
    whole = _whole_records(text)
    if whole < len(text):  # a row cut short: it parsed as a complete row when only digits were cut
        out.broken = True
    reader = csv.DictReader(io.StringIO(text[:whole], newline=""))
    header = reader.fieldnames or []
    if cols is not None and header and list(header) != list(cols):
        raise ConfigError(f"--out {path.parent}", f"results.csv with columns {','.join(header)}",
                          "a fresh directory or one holding results of this same experiment, whose "
                          f"columns are {','.join(cols)} (use another --out, or remove results.csv)")
    metrics = metric_columns()
    grid_keys = [c for c in header if c not in (*BASE_COLUMNS, *RUN_COLUMNS, *metrics)]
    for raw in reader:
        if None in raw or any(v is None for v in raw.values()):
            out.broken = True
            continue
        try:
            row = _typed(raw, grid_keys, ("wall_s", *metrics))
        except ValueError:
            out.broken = True
            continue
        key = (row["label"], row["point"], row["repetition"])
        if key in out:
            out.duplicates = True
        out[key] = row
    return out


def _typed(raw: dict, grid_keys: list[str], floats: tuple[str, ...]) -> dict:
    row: dict[str, Any] = dict(raw)
    for c in _INT_COLUMNS:
        row[c] = int(raw[c])
    for c in floats:
        if c in raw:
            row[c] = float(raw[c]) if raw[c] != "" else math.nan
    for c in grid_keys:
        row[c] = json.loads(raw[c])
    return row


def _cell(col: str, v: Any, grid: bool) -> str:
    if grid:
        return json.dumps(v)
    if isinstance(v, float):
        return repr(v)
    return str(v)


class _Appender:
    """Appends rows to results.csv, writing the header for a new file; flushes after every row."""

    def __init__(self, path: Path, cols: list[str]):
        self.path, self.cols = path, cols
        self.grid = set(cols) - {*BASE_COLUMNS, *RUN_COLUMNS, *metric_columns()}

    def __enter__(self) -> "_Appender":
        if self.path.is_file():
            with self.path.open("r+b") as fh:  # a write cut short: drop its part row (read_results ignored
                data = fh.read()                # it), else the next row continued it, or its open quote
                whole = _whole_records(data)    # swallowed every row written after it
                if whole < len(data):
                    fh.truncate(whole)
        new = not self.path.is_file() or self.path.stat().st_size == 0
        self.fh = self.path.open("a", newline="")
        self.writer = csv.writer(self.fh)
        if new:
            self.writer.writerow(self.cols)
            self.fh.flush()
        return self

    def write(self, row: dict) -> None:
        self.writer.writerow([_cell(c, row.get(c, ""), c in self.grid) for c in self.cols])
        self.fh.flush()

    def __exit__(self, *exc) -> None:
        self.fh.close()


def _whole_records(data: str | bytes) -> int:
    """Where the last whole record of CSV *data* ends: just past its last newline outside a quoted
    field (0 if none). A row is written whole with its newline, so what follows is a write cut short:
    a row whose last number lost digits, or a quoted field left open (a point's JSON, an error)."""
    nl, quote = ("\n", '"') if isinstance(data, str) else (b"\n", b'"')
    end = len(data)
    while (i := data.rfind(nl, 0, end)) >= 0:
        if data.count(quote, 0, i) % 2 == 0:  # quotes are paired (a doubled one twice) before it
            return i + 1
        end = i
    return 0


def _regrid(path: Path, cols: list[str]) -> Path | None:
    """If results.csv at *path* has *cols* but for the order of the grid's keys (the ``[grid]`` table
    written in another order: the same points), write a copy of it beside it in *cols*' order, each
    row's point text in that order too, so that its rows are found by their runs' keys, and return
    the copy's path (the caller puts it in place); else None. Any other header is left for
    :func:`read_results` to refuse; a row cut short is left out (its run runs again)."""
    if not path.is_file():
        return None
    with path.open(newline="") as fh:
        text = fh.read()
    records = list(csv.reader(io.StringIO(text[:_whole_records(text)], newline="")))
    if not records or records[0] == cols:
        return None
    header, n = records[0], len(BASE_COLUMNS)
    keys = cols[n:len(cols) - len(RUN_COLUMNS) - len(metric_columns())]
    if (len(header) != len(cols) or header[:n] != cols[:n] or header[n + len(keys):] != cols[n + len(keys):]
            or sorted(header[n:n + len(keys)]) != sorted(keys)):
        return None
    moved = [header.index(c) for c in cols]
    i_point, i_keys = header.index("point"), [header.index(k) for k in keys]
    body = []
    for rec in records[1:]:
        if len(rec) != len(header):
            continue
        try:
            rec[i_point] = point_key(tuple((k, json.loads(rec[i])) for k, i in zip(keys, i_keys)))
        except ValueError:
            continue
        body.append([rec[i] for i in moved])
    copy = path.with_suffix(".csv.regrid")
    with copy.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        w.writerows(body)
    return copy


def _compact(path: Path, drop: set[tuple[str, str, str]] = frozenset()) -> Path | None:
    """Rewrite results.csv keeping only the latest row per key, dropping incomplete rows, and moving
    the latest row of each (label, point, repetition) text in *drop* to :data:`REMOVED_FILE` beside it
    (appended; return its path, or None if none moved). The moved rows are written first and
    results.csv is replaced atomically (a temp file, then rename): a kill in between leaves a row in
    both files, never in neither."""
    with path.open(newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            return None
        i_label, i_point, i_rep = header.index("label"), header.index("point"), header.index("repetition")
        keep: dict[tuple, list[str]] = {}
        for rec in reader:
            if len(rec) != len(header):
                continue
            key = (rec[i_label], rec[i_point], rec[i_rep])
            keep.pop(key, None)  # the later row wins and moves to the end
            keep[key] = rec
    moved = [rec for key, rec in keep.items() if key in drop]
    aside = _set_aside(path.parent, header, moved) if moved else None
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rec for key, rec in keep.items() if key not in drop)
    os.replace(tmp, path)
    return aside


def _set_aside(out_dir: Path, header: list[str], records: list[list[str]]) -> Path:
    """Append *records* to :data:`REMOVED_FILE` in *out_dir*, or, if that file has other columns (an
    earlier grid), to the first ``results-removed-K.csv`` that is missing or has these, leaving out a
    row the file already holds as it is; return it."""
    stem, suffix = REMOVED_FILE.rsplit(".", 1)
    for k in itertools.count():
        aside = out_dir / (REMOVED_FILE if k == 0 else f"{stem}-{k}.{suffix}")
        if not aside.exists():
            with aside.open("w", newline="") as fh:
                csv.writer(fh).writerows([header, *records])
            return aside
        with aside.open(newline="") as fh:
            reader = csv.reader(fh)
            if next(reader, None) == header:
                there = {tuple(rec) for rec in reader}
                break
    with aside.open("a", newline="") as fh:
        # a row already there (a kill after it was set aside but before results.csv lost it) is not
        # written twice
        csv.writer(fh).writerows(rec for rec in records if tuple(rec) not in there)
    return aside
