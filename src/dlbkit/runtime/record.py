"""Recorded runs: a :class:`~dlbkit.model.trace.Trace` saved to, and loaded from, a JSON file.

``RunResult.save(path)`` (or ``dlbkit.run_map(..., record=path)``, ``dlbkit run --record``) writes a
real run's trace; :func:`dlbkit.face.replay.replay` (``dlbkit replay TRACE.json``) loads it and
runs the simulator on the recorded loads to try other balancers. A simulated run's trace saves the
same way (it lacks only the measured item costs a replay needs). A path ending in ``.gz`` is
gzip-compressed.

Format (version 1), one JSON object; times are seconds since the run's origin::

    {
      "format": "dlbkit-trace",        # always this string
      "version": 1,                    # the format version (FORMAT_VERSION)
      "dlbkit": "0.1.0",               # the dlbkit version that wrote the file (information only)
      "source": "local",               # "sim" or the runtime backend ("local", "mpi", "dask")
      "backend": "local",              # the runtime backend (null for a simulation)
      "mechanism": "self-scheduling",  # how work was handed out
      "balancer": {"name": "awf-c", "params": {...}},   # the balancer and its parameters
      "seed": null,                    # the run's seed, if the engine recorded it
      "n_workers": 4,
      "worker_nodes": [0, 1, 2, 3],    # the platform node of each worker
      "workers": [                     # per worker: speed factor (1.0 unless emulated) and the
        {"speed": 1.0,                 # realised availability as pieces: level levels[k] from
         "availability": {"times": [0.0], "levels": [1.0]}},   # times[k] on, up to the run's end
        ...],
      "chunks": {"worker": [...], "first": [...], "count": [...],          # one entry per chunk:
                 "t_ask": [...], "t_start": [...], "t_end": [...],         # asked for / started /
                 "round": [...]},                                          # ended; round or -1
      "rounds": {"round": [...], "worker": [...], ...},  # round mechanism only (else empty lists)
      "item_cost": [...],              # measured seconds per item on the recording machine,
                                       # before emulation's stretch (null for a simulation)
      "faults": [{"worker": 2, "first": 40, "count": 8, "time": 0.31}, ...],  # chunks lost
      "totals": {"messages": 812, "bytes": 0.0, "events": 1218, "end_time": 1.02,
                 "total_work": 2.71, "max_item": 0.004},
      "meta": {...}                    # any other information the engine recorded
    }

The messages' timings are in the chunk rows: a worker asked for a chunk at ``t_ask`` (its previous
chunk's end, or when it became ready), the chunk arrived and started at ``t_start``, and ended at
``t_end``; ``t_start - t_ask`` is one request's round trip through the master.

:func:`load_trace` checks everything it reads and raises :class:`~dlbkit.errors.ConfigError` naming
the file and the field (e.g. ``run.json: chunks.t_end``) for a file that is not a valid trace.

What is a family's own (its series checked, what its older recordings lack rebuilt, the mechanisms its
recordings named before they named their family) the family declares: a :class:`Recording` in its
``Family.recording``, which the family registry puts in :data:`RECORDINGS` when the family registers. The table
is here, below the families, so that every reader of a recording (:func:`load_trace`, whoever calls it) gets
the same Trace; like the balancer registry it is complete when first read (:mod:`dlbkit.plugins`).
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model.availability import Piecewise, Recorded
from dlbkit.model.trace import Trace
from dlbkit.plugins import Registry

__all__ = ["save_trace", "load_trace", "trace_to_dict", "trace_from_dict", "Recording", "RECORDINGS", "Checker",
           "FORMAT", "FORMAT_VERSION"]

FORMAT = "dlbkit-trace"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Recording:
    """How a family's recordings are read (its ``Family.recording``).

    *legacy_mechanisms*: the mechanisms its recordings named before recordings named their family (a file
    without a ``family`` field and with one of them is the family's); *legacy_default* True: the family of such
    a file whose mechanism no family declares (the loops': dlbkit recorded nothing else then). *restore*
    ``(trace, d, ck)`` returns the Trace read from the file's object *d* with the family's own fields checked
    (errors through *ck*, a :class:`Checker`, which names the file and the field) and what its older recordings
    lack rebuilt. *check* ``(d, ck, n_nodes, source)`` checks the family's own fields of *d* before the trace is
    built from them (a hand-edited file is then one error naming the field, not numpy's on a ragged array)."""

    legacy_mechanisms: tuple[str, ...] = ()
    legacy_default: bool = False
    restore: Callable[[Trace, dict, Checker], Trace] | None = None
    check: Callable[[dict, Checker, int, str], None] | None = None


#: family name → how its recordings are read; filled by the family registry from each ``Family.recording``,
#: complete when first read
RECORDINGS: dict[str, Recording] = Registry("dlbkit.families")

#: meta keys stored in their own fields of the file (everything else goes to "meta")
_OWN_META = ("item_cost", "faults", "balancer_params", "backend", "mechanism")
_INT_CHUNK = ("worker", "first", "count", "round")
#: the file's chunk columns (format version 1: its words, kept so that older recordings load) and the
#: Trace's interval attribute each one holds
_FILE_COLUMNS = {"worker": "node", "first": "first", "count": "count", "t_ask": "t_ask", "t_start": "t_start",
                 "t_end": "t_end", "round": "round_of"}
#: the file's round columns (the Trace's ROUND_COLUMNS, with the file's word for the node)
_FILE_ROUND_COLUMNS = ("round", "worker", "count", "t_send", "send_time", "calc_time", "exe_time")


# --- writing --------------------------------------------------------------------------------------
def _plain(v: Any) -> Any:
    """*v* as plain JSON values (numpy scalars and arrays, tuples; non-finite floats as strings)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return _plain(v.tolist())
    return repr(v)


def _availability_pieces(a: Any, until: float) -> dict[str, list[float]]:
    """A realised availability's pieces covering [0, until] (a constant is one piece)."""
    if isinstance(a, Piecewise):
        return a.to_dict(until)
    if isinstance(a, Recorded):
        return {"times": list(a.times), "levels": list(a.levels)}
    if hasattr(a, "realise"):
        return _availability_pieces(a.realise(None), until)
    raise ConfigError("trace.availability", a, "realised availabilities (Piecewise)")


def trace_to_dict(trace: Trace) -> dict:
    """The file's JSON object for *trace* (see the module docstring)."""
    # the package's version, read without importing the face layer (the package is always loaded
    # before any of its modules, so it is there)
    version = getattr(sys.modules.get(__name__.split(".")[0]), "__version__", None)
    meta = dict(trace.meta)
    until = max([float(trace.end_time)] + [float(t) for t in trace.t_end])
    speeds = list(trace.speeds) or [1.0] * trace.n_nodes
    avail = list(trace.availability) or [None] * trace.n_nodes
    workers = [{"speed": float(s),
                "availability": _availability_pieces(a, until) if a is not None else {"times": [0.0], "levels": [1.0]}}
               for s, a in zip(speeds, avail)]
    n = trace.n_intervals
    round_of = list(trace.round_of) if len(trace.round_of) == n else [-1] * n
    chunks = {c: [int(x) for x in (round_of if c == "round" else getattr(trace, a))] if c in _INT_CHUNK
              else [float(x) for x in getattr(trace, a)] for c, a in _FILE_COLUMNS.items()}
    rounds = {k: _plain(list(v)) for k, v in zip(_FILE_ROUND_COLUMNS, zip(*trace.rounds))} if trace.rounds \
        else {k: [] for k in _FILE_ROUND_COLUMNS}
    costs = meta.get("item_cost")
    faults = [{"worker": int(w), "first": int(f), "count": int(c), "time": float(t)}
              for w, f, c, t in meta.get("faults", [])]
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "dlbkit": version,
        "source": trace.source,
        "family": trace.family,
        "backend": meta.get("backend"),
        "mechanism": meta.get("mechanism"),
        "balancer": {"name": trace.balancer, "params": _plain(meta.get("balancer_params", {}))},
        "seed": _plain(trace.seed),
        "n_workers": int(trace.n_nodes),
        "worker_nodes": [int(x) for x in trace.node_of],
        "workers": workers,
        "chunks": chunks,
        "rounds": rounds,
        "item_cost": None if costs is None else [float(x) for x in costs],
        "faults": faults,
        "totals": {"messages": int(trace.messages), "bytes": float(trace.bytes), "events": int(trace.events),
                   "end_time": float(trace.end_time), "total_work": float(trace.total_work),
                   "max_item": float(trace.max_item), "info_messages": _plain(float(trace.info_messages)),
                   "info_bytes": _plain(float(trace.info_bytes)), "info_age_mean": _plain(float(trace.info_age_mean))},
        "series": {k: _plain(v) for k, v in trace.series.items()},
        "transfers": _plain(trace.transfers),
        "meta": _plain({k: v for k, v in meta.items() if k not in _OWN_META}),
    }


def save_trace(trace: Trace, path: str | Path) -> Path:
    """Write *trace* to *path* as JSON (gzip-compressed if the name ends in ``.gz``); return the path."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError("record path", str(path), "a file name (a directory of that name exists)")
    if not path.parent.is_dir():
        raise ConfigError("record path", str(path), "a file in an existing directory")
    text = json.dumps(trace_to_dict(trace), separators=(",", ":"), allow_nan=False)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text + "\n", encoding="utf-8")
    return path


# --- reading --------------------------------------------------------------------------------------
class Checker:
    """Field checks that name the file and the field in every error (a family's ``Recording.restore`` checks its
    own fields with them)."""

    def __init__(self, where: str):
        self.where = where

    def fail(self, field: str, value: Any, allowed: str):
        if isinstance(value, (list, dict)) and len(repr(value)) > 60:
            value = f"<{type(value).__name__} of {len(value)}>"
        raise ConfigError(f"{self.where}{field}", value, allowed)

    def get(self, d: dict, key: str, field: str) -> Any:
        if key not in d:
            self.fail(field, "<missing>", "present")
        return d[key]

    def table(self, v: Any, field: str) -> dict:
        if not isinstance(v, dict):
            self.fail(field, v, "a JSON object")
        return v

    def integer(self, v: Any, field: str, lo: int | None = None, hi: int | None = None) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f" in [{lo}, {hi}]" if lo is not None and hi is not None else f" >= {lo}" if lo is not None else ""
            self.fail(field, v, f"an integer{rng}")
        return v

    def number(self, v: Any, field: str, lo: float | None = None, lo_open: bool = False,
               hi: float | None = None) -> float:
        ok = not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
        if ok and lo is not None:
            ok = v > lo if lo_open else v >= lo
        if ok and hi is not None:
            ok = v <= hi
        if not ok:
            bounds = ([f"> {lo:g}" if lo_open else f">= {lo:g}"] if lo is not None else []) + \
                     ([f"<= {hi:g}"] if hi is not None else [])
            self.fail(field, v, "a finite number" + (" " + " and ".join(bounds) if bounds else ""))
        return float(v)

    def array(self, v: Any, field: str, length: int | None = None) -> list:
        if not isinstance(v, list) or (length is not None and len(v) != length):
            self.fail(field, v if not isinstance(v, list) else f"<list of {len(v)}>",
                      "a list" + (f" of {length} values" if length is not None else ""))
        return v


def _header(d: dict, ck: Checker):
    """The format and version checked; the worker count and each worker's platform node."""
    fmt = ck.get(d, "format", "format")
    if fmt != FORMAT:
        ck.fail("format", fmt, f"{FORMAT!r} (a file written by dlbkit's record/save)")
    version = ck.get(d, "version", "version")
    if version != FORMAT_VERSION:
        ck.fail("version", version, f"{FORMAT_VERSION} (the version this dlbkit reads)")
    P = ck.integer(ck.get(d, "n_workers", "n_workers"), "n_workers", lo=1)
    nodes = ck.array(d.get("worker_nodes", list(range(P))), "worker_nodes", P)
    nodes = [ck.integer(x, f"worker_nodes[{i}]", lo=0) for i, x in enumerate(nodes)]
    return P, nodes


def _workers(d: dict, ck: Checker, P: int):
    """Each worker's speed and its recorded availability, realised."""
    workers = ck.array(ck.get(d, "workers", "workers"), "workers", P)
    speeds, avail = [], []
    for i, w in enumerate(workers):
        f = f"workers[{i}]"
        w = ck.table(w, f)
        speeds.append(ck.number(ck.get(w, "speed", f"{f}.speed"), f"{f}.speed", lo=0.0, lo_open=True))
        a = ck.table(ck.get(w, "availability", f"{f}.availability"), f"{f}.availability")
        times = ck.array(ck.get(a, "times", f"{f}.availability.times"), f"{f}.availability.times")
        levels = ck.array(ck.get(a, "levels", f"{f}.availability.levels"), f"{f}.availability.levels", len(times))
        if not times:
            ck.fail(f"{f}.availability.times", times, "a non-empty list starting at 0")
        for k, t in enumerate(times):
            ck.number(t, f"{f}.availability.times[{k}]", lo=0.0)
            if k == 0 and t != 0:
                ck.fail(f"{f}.availability.times[0]", t, "0 (an availability starts at time 0)")
            if k and t <= times[k - 1]:
                ck.fail(f"{f}.availability.times[{k}]", t, f"greater than times[{k - 1}] = {times[k - 1]}")
        for k, x in enumerate(levels):
            ck.number(x, f"{f}.availability.levels[{k}]", lo=0.0, lo_open=True, hi=1.0)
        avail.append(Recorded(tuple(float(t) for t in times), tuple(float(x) for x in levels)).realise())
    return speeds, avail


def _item_costs(d: dict, ck: Checker):
    """The measured cost of every item, or None (a simulated trace)."""
    costs = d.get("item_cost")
    if costs is not None:
        costs = [ck.number(c, f"item_cost[{i}]", lo=0.0) for i, c in enumerate(ck.array(costs, "item_cost"))]
    return costs


def _chunks(d: dict, ck: Checker, P: int, costs):
    """The chunks' columns (worker, first, count, times, round), checked, and their count."""
    chunks = ck.table(ck.get(d, "chunks", "chunks"), "chunks")
    cols: dict[str, list] = {}
    n = None
    for c in _FILE_COLUMNS:
        f = f"chunks.{c}"
        col = ck.array(ck.get(chunks, c, f), f, n)
        n = len(col)
        if c == "worker":
            cols[c] = [ck.integer(x, f"{f}[{k}]", lo=0, hi=P - 1) for k, x in enumerate(col)]
        elif c in ("first", "count"):
            cols[c] = [ck.integer(x, f"{f}[{k}]", lo=0 if c == "first" else 1) for k, x in enumerate(col)]
        elif c == "round":
            cols[c] = [ck.integer(x, f"{f}[{k}]", lo=-1) for k, x in enumerate(col)]
        else:
            cols[c] = [ck.number(x, f"{f}[{k}]") for k, x in enumerate(col)]
    for k in range(n or 0):
        if cols["t_end"][k] < cols["t_start"][k]:
            ck.fail(f"chunks.t_end[{k}]", cols["t_end"][k], f">= chunks.t_start[{k}] = {cols['t_start'][k]}")
        if costs is not None and cols["first"][k] + cols["count"][k] > len(costs):
            ck.fail(f"chunks.count[{k}]", cols["count"][k],
                    f"within the {len(costs)} items of item_cost (first = {cols['first'][k]})")
    return cols, n


def _rounds(d: dict, ck: Checker):
    """The rounds of a rounds-mechanism run, as tuples of the file's round columns."""
    rounds_d = ck.table(d.get("rounds", {}), "rounds")
    rounds: list[tuple] = []
    if any(rounds_d.get(k) for k in _FILE_ROUND_COLUMNS):
        rcols = []
        m = None
        for k in _FILE_ROUND_COLUMNS:
            col = ck.array(ck.get(rounds_d, k, f"rounds.{k}"), f"rounds.{k}", m)
            m = len(col)
            rcols.append([ck.number(x, f"rounds.{k}[{j}]") for j, x in enumerate(col)])
        rounds = [tuple(int(v) if k in ("round", "worker", "count") else v for k, v in zip(_FILE_ROUND_COLUMNS, row))
                  for row in zip(*rcols)]
    return rounds


def _balancer(d: dict, ck: Checker):
    """The balancer's name and parameters."""
    bal = ck.table(ck.get(d, "balancer", "balancer"), "balancer")
    name = ck.get(bal, "name", "balancer.name")
    if not isinstance(name, str):
        ck.fail("balancer.name", name, "a string")
    params = ck.table(bal.get("params", {}), "balancer.params")
    return name, params


def _faults(d: dict, ck: Checker, P: int):
    """The faults: (worker, first, count, time) of each."""
    faults = []
    for i, x in enumerate(ck.array(d.get("faults", []), "faults")):
        x = ck.table(x, f"faults[{i}]")
        faults.append((ck.integer(ck.get(x, "worker", f"faults[{i}].worker"), f"faults[{i}].worker", lo=0, hi=P - 1),
                       ck.integer(ck.get(x, "first", f"faults[{i}].first"), f"faults[{i}].first", lo=0),
                       ck.integer(ck.get(x, "count", f"faults[{i}].count"), f"faults[{i}].count", lo=1),
                       ck.number(ck.get(x, "time", f"faults[{i}].time"), f"faults[{i}].time")))
    return faults


def _totals(d: dict, ck: Checker, cols: dict, costs):
    """The run's totals (messages, bytes, events, end time, work) and the raw table."""
    totals = ck.table(d.get("totals", {}), "totals")
    t_end = cols["t_end"]
    tot = {
        "messages": ck.integer(totals.get("messages", 0), "totals.messages", lo=0),
        "bytes": ck.number(totals.get("bytes", 0.0), "totals.bytes", lo=0.0),
        "events": ck.integer(totals.get("events", 0), "totals.events", lo=0),
        "end_time": ck.number(totals.get("end_time", max(t_end, default=0.0)), "totals.end_time"),
        "total_work": ck.number(totals.get("total_work", sum(costs) if costs else 0.0), "totals.total_work", lo=0.0),
        "max_item": ck.number(totals.get("max_item", max(costs, default=0.0) if costs else 0.0),
                              "totals.max_item", lo=0.0),
    }
    return tot, totals


def trace_from_dict(d: Any, where: str = "") -> Trace:
    """Rebuild a Trace from the file's JSON object; *where* prefixes field names in errors."""
    ck = Checker(f"{where}: " if where else "")
    d = ck.table(d, "trace")
    P, nodes = _header(d, ck)
    speeds, avail = _workers(d, ck, P)
    costs = _item_costs(d, ck)
    cols, n = _chunks(d, ck, P, costs)
    rounds = _rounds(d, ck)
    name, params = _balancer(d, ck)
    faults = _faults(d, ck, P)
    tot, totals = _totals(d, ck, cols, costs)
    source = d.get("source", "sim")
    if not isinstance(source, str):
        ck.fail("source", source, "a string")
    seed = d.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        ck.fail("seed", seed, "an integer or null")

    meta = dict(ck.table(d.get("meta", {}), "meta"))
    for key in ("backend", "mechanism"):
        v = d.get(key)
        if v is not None:
            if not isinstance(v, str):
                ck.fail(key, v, "a string or null")
            meta[key] = v
    _check_meta(meta, ck, P, n or 0)
    meta["balancer_params"] = dict(params)
    meta["faults"] = faults
    if costs is not None:
        meta["item_cost"] = costs

    family = d["family"] if "family" in d else _legacy_family(d.get("mechanism"))
    if not isinstance(family, str):
        ck.fail("family", family, "a workload family's name")
    rules = RECORDINGS.get(family)
    if rules is not None and rules.check is not None:
        rules.check(d, ck, P, source)
    series_d = ck.table(d.get("series", {}), "series")
    for k, v in series_d.items():
        ck.array(v, f"series.{k}")
    series = {k: np.asarray(_non_finite(v)) for k, v in series_d.items()}
    transfers = [tuple(float(x) if j == 1 else int(x) for j, x in enumerate(row))
                 for row in ck.array(d.get("transfers", []), "transfers")]
    info = {k: _number_or_nan(totals.get(k, "nan"), f"totals.{k}", ck) for k in
            ("info_messages", "info_bytes", "info_age_mean")}
    trace = Trace(P, nodes, balancer=name, seed=seed, source=source, family=family, series=series,
                 transfers=transfers, **info,
                 node=cols["worker"], first=cols["first"], count=cols["count"], t_ask=cols["t_ask"],
                 t_start=cols["t_start"], t_end=cols["t_end"], round_of=cols["round"], rounds=rounds,
                 messages=tot["messages"], bytes=tot["bytes"], events=tot["events"], end_time=tot["end_time"],
                 speeds=speeds, availability=avail, total_work=tot["total_work"], max_item=tot["max_item"],
                 meta=meta)
    return rules.restore(trace, d, ck) if rules is not None and rules.restore is not None else trace


def _legacy_family(mechanism: Any) -> str | None:
    """The family of a file written before traces named their family: the one that declares its *mechanism*
    (``Recording.legacy_mechanisms``), else the one declared for the rest (``legacy_default``)."""
    for name, rules in RECORDINGS.items():
        if mechanism in rules.legacy_mechanisms:
            return name
    return next((name for name, rules in RECORDINGS.items() if rules.legacy_default), None)


#: numbers a recording's meta may hold that replays and metrics read ("nan" and "inf" as written)
_META_NUMBERS = ("queue_mean", "convergence_time", "busy_time", "tasks_moved", "info_freshness", "lower_bound")


def _check_meta(meta: dict, ck: Checker, P: int, n_chunks: int) -> None:
    """The meta fields that replay, advise and the metrics read, checked as the rest of the file is (a
    hand-edited recording is then one line naming the field, not a TypeError deep in a replay)."""
    for key in _META_NUMBERS:
        if key in meta:
            _number_or_nan(meta[key], f"meta.{key}", ck)
    if "warmup_job" in meta:
        ck.integer(meta["warmup_job"], "meta.warmup_job", lo=0)
    if meta.get("slots") is not None:
        for i, x in enumerate(ck.array(meta["slots"], "meta.slots", P)):
            ck.integer(x, f"meta.slots[{i}]", lo=1)
    if meta.get("info_params") is not None:
        ck.table(meta["info_params"], "meta.info_params")
    for k, step in enumerate(ck.array(meta["time_steps"], "meta.time_steps") if meta.get("time_steps") else ()):
        f = f"meta.time_steps[{k}]"
        step = ck.table(step, f)
        for key in ("start", "end"):
            ck.number(ck.get(step, key, f"{f}.{key}"), f"{f}.{key}", lo=0.0)
        for key in ("first", "items"):
            ck.integer(ck.get(step, key, f"{f}.{key}"), f"{f}.{key}", lo=0)
        for key in ("chunks", "rounds", "transfers"):
            if key == "chunks" or key in step:
                pair = ck.array(ck.get(step, key, f"{f}.{key}"), f"{f}.{key}", 2)
                lo, hi = (ck.integer(x, f"{f}.{key}[{j}]", lo=0) for j, x in enumerate(pair))
                if hi < lo or (key == "chunks" and hi > n_chunks):
                    ck.fail(f"{f}.{key}", pair, "[lo, hi] with lo <= hi" + (f" <= {n_chunks} (the chunks)"
                                                                             if key == "chunks" else ""))


def _non_finite(v: Any) -> Any:
    """*v* with the strings "nan", "inf" and "-inf" (how :func:`_plain` writes non-finite floats) as
    floats again, so that a series such as a stream's ``view_age`` loads as numbers, not text."""
    if isinstance(v, list):
        return [_non_finite(x) for x in v]
    return float(v) if v in ("nan", "inf", "-inf") else v


def _number_or_nan(v: Any, field: str, ck) -> float:
    """A number of the file, "nan" (how non-finite numbers are written) allowed."""
    if v == "nan":
        return math.nan  # the one NaN object the metrics use, so that a loaded run's metrics compare equal
    if v == "inf":
        return math.inf
    return ck.number(v, field)


def load_trace(path: str | Path) -> Trace:
    """Read a trace written by :func:`save_trace`; a bad file raises ConfigError naming the field."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError("trace file", str(path), "an existing trace JSON file (written by --record / save)")
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                d = json.load(fh)
        else:
            with path.open(encoding="utf-8") as fh:
                d = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError, OSError, EOFError) as e:
        raise ConfigError(f"trace file {path}", _one_line(str(e)), "valid JSON written by dlbkit") from None
    return trace_from_dict(d, where=str(path))


def _one_line(s: str) -> str:
    return " ".join(s.split())
