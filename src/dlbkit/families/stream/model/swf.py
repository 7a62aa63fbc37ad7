"""Job streams read from a Standard Workload Format (SWF) log, the format of the Parallel Workloads
Archive (Feitelson et al., https://www.cs.huji.ac.il/labs/parallel/workload/swf.html, version 2.2;
also read by Batsim, AccaSim and evalys).

An SWF log is text: header comments (lines starting with ``;``, e.g. ``; MaxProcs: 128``), then one
job per line of 18 whitespace-separated numbers, -1 meaning unknown:

 1 job number, 2 submit time (s), 3 wait time, 4 run time (s), 5 allocated processors, 6 average CPU
 time, 7 used memory, 8 requested processors, 9 requested time, 10 requested memory, 11 status
 (1 completed, 0 failed, 5 cancelled, 2-4 partial executions, -1 unknown), 12 user, 13 group,
 14 executable, 15 queue, 16 partition, 17 preceding job, 18 think time.

:func:`read_swf` reads its rows and ``Stream.read`` makes a recorded :class:`~dlbkit.families.stream.model.workload.Stream`
of it. The mapping (a stream's trace rows are (time, origin, demand, width); a task of demand w takes
w / s seconds on one slot of a node of speed s):

* **time**: the submit time, less the first kept job's (so it arrives at 0), divided by *load_scale*
  (2 halves every inter-arrival time: twice the offered load on the same platform);
* **width and demand**: ``width="processors"`` (default): a job of run time r on p processors is p
  tasks of demand r each (on speed-1 slots a task runs as long as the job did; total work r·p);
  ``width="one"``: one task of demand r·p (the same work, placed as a whole). p is the allocated
  processors, or the requested ones when those are unknown. The stream places a job's tasks one by
  one and runs them when their slots are free: the log's gang scheduling (all p at once) is not kept;
* **origin**: an SWF log comes from a machine with one submission queue, so by default every job
  arrives at node 0 (its front end); ``origin`` names another node, or a list of nodes that the
  kept jobs arrive at in turn (job k at ``origin[k % len(origin)]``: round robin);
* **kept**: jobs whose status is in *statuses* (None: any) and whose submit time is in
  [*start*, *end*) of the log's clock; of those, a job whose run time is 0 or unknown, or whose
  processors are unknown, has no work to place and is left out (counted in :class:`SwfLog`).

The header's ``MaxProcs``, ``MaxNodes``, ``MaxJobs``, ``MaxRecords`` and ``UnixStartTime`` are kept in
:class:`SwfLog` (the stream's ``source``); against a platform, :func:`check_width` refuses a job wider
than the platform's slots. Bad input is one ConfigError naming the file, the line and the field.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["read_swf", "SwfLog", "check_width", "FIELDS", "WIDTHS"]

#: the 18 fields of a job line, in order (SWF 2.2)
FIELDS = ("job number", "submit time", "wait time", "run time", "allocated processors", "average CPU time",
          "used memory", "requested processors", "requested time", "requested memory", "status", "user id",
          "group id", "executable number", "queue number", "partition number", "preceding job number",
          "think time")
#: how a job's processors become the stream's tasks (module docstring)
WIDTHS = {"processors": "p tasks of demand run time each", "one": "one task of demand run time × p"}
#: header comments kept, each a number (other header lines are free text)
NUMERIC_HEADER = ("MaxJobs", "MaxRecords", "MaxProcs", "MaxNodes", "UnixStartTime")
_SUBMIT, _RUN, _ALLOC, _REQ, _STATUS = 1, 3, 4, 7, 10


@dataclass(frozen=True)
class SwfLog:
    """Where a stream read by :func:`read_swf` came from: *path*; the header's numbers (None when not
    given); *records*: job lines in the file; *kept*: jobs in the stream; *dropped*: jobs of a kept
    status in the window left out for no work (run time 0 or unknown, processors unknown); *lines*:
    the file line of each of the stream's jobs, in its order (for errors)."""

    path: str
    max_procs: int | None = None
    max_nodes: int | None = None
    max_jobs: int | None = None
    max_records: int | None = None
    unix_start_time: int | None = None
    records: int = 0
    kept: int = 0
    dropped: int = 0
    width: str = "processors"
    lines: tuple = ()


def _where(field: str, path: Path, line: int, col: int | None = None) -> str:
    at = f"{field} {path} line {line}"
    return at if col is None else f"{at} field {col + 1} ({FIELDS[col]})"


def _decode(data: bytes, path: Path, field: str) -> str:
    # check.decode names the line; an SWF error also names the field (the token the bytes are in)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        start = data.rfind(b"\n", 0, e.start) + 1
        line = data.count(b"\n", 0, e.start) + 1
        head = data[start:e.start]
        where = f"{field} {path} line {line}"
        if not head.lstrip().startswith(b";"):
            col = len(head.split())
            col -= 0 if (not head or head[-1:].isspace()) else 1
            where = _where(field, path, line, min(col, len(FIELDS) - 1))
        else:
            where += " (header)"
        raise ConfigError(where, f"bytes {data[e.start:e.end]!r} at byte offset {e.start}", "UTF-8 text") from None


def _header(line: str, k: int, path: Path, field: str, out: dict) -> None:
    key, sep, value = line.lstrip(";").partition(":")
    key = key.strip()
    if not sep or key not in NUMERIC_HEADER:
        return  # free text (Computer, Note, Queues, ...) is kept by no one
    v = value.strip()
    try:
        n = int(v)
    except ValueError:
        raise ConfigError(f"{field} {path} line {k} (header {key})", v, "an integer") from None
    if n < 0:
        raise ConfigError(f"{field} {path} line {k} (header {key})", v, "an integer >= 0")
    out[key] = n


def _scan(rows: Sequence[str], lines: Sequence[int], path: Path, field: str) -> None:
    """Find the first bad job line and raise for it (the slow path: run only when numpy refused)."""
    for text, k in zip(rows, lines):
        toks = text.split()
        if len(toks) != len(FIELDS):
            raise ConfigError(_where(field, path, k), f"{len(toks)} fields", f"{len(FIELDS)} whitespace-separated "
                              "fields (SWF 2.2: job number, submit time, ..., think time)")
        for j, t in enumerate(toks):
            try:
                x = float(t)
            except ValueError:
                x = None
            if x is None or not np.isfinite(x):
                raise ConfigError(_where(field, path, k, j), t, "a finite number (-1: unknown)")


def _parse(text: str, path: Path, field: str) -> tuple[np.ndarray, np.ndarray, dict]:
    """The job lines as an (n, 18) float array, their file line numbers and the header's numbers."""
    header: dict = {}
    rows, lines = [], []
    for k, raw in enumerate(text.split("\n"), 1):
        s = raw.strip()
        if not s:
            continue
        if s[0] == ";":
            _header(s, k, path, field, header)
        else:
            rows.append(s)
            lines.append(k)
    if not rows:
        return np.empty((0, len(FIELDS))), np.empty(0, dtype=np.int64), header
    try:  # numpy's C reader: a 100 000-job log in a tenth of a second
        a = np.loadtxt(io.StringIO("\n".join(rows)), dtype=float, ndmin=2, comments=None)
    except ValueError:
        a = None
    if a is None or a.shape[1] != len(FIELDS) or not np.isfinite(a).all():
        _scan(rows, lines, path, field)
        # every token is a number Python reads and numpy's reader did not (e.g. 1_000): Python's floats
        a = np.array([[float(t) for t in r.split()] for r in rows])
    return a, np.asarray(lines, dtype=np.int64), header


def _first_bad(bad: np.ndarray, a: np.ndarray, lines: np.ndarray, col: int, path: Path, field: str, allowed: str):
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ConfigError(_where(field, path, int(lines[i]), col), f"{a[i, col]:g}", allowed)


def _check_columns(a: np.ndarray, lines: np.ndarray, path: Path, field: str) -> None:
    """The fields the stream uses: known where required, -1 or >= 0 otherwise, processors integers."""
    _first_bad(a[:, _SUBMIT] < 0, a, lines, _SUBMIT, path, field, "a submit time >= 0 s (it gives the arrival)")
    for col, what in ((_RUN, "a run time >= 0 s, or -1 (unknown)"),
                      (_ALLOC, "a count of processors >= 0, or -1 (unknown)"),
                      (_REQ, "a count of processors >= 0, or -1 (unknown)")):
        x = a[:, col]
        _first_bad((x < 0) & (x != -1), a, lines, col, path, field, what)
    for col in (_ALLOC, _REQ):
        _first_bad(a[:, col] != np.floor(a[:, col]), a, lines, col, path, field, "an integer count of processors")
        # beyond 2^53 a float holds no exact integer (and int64 overflows): no machine has that many
        _first_bad(a[:, col] > 2.0 ** 53, a, lines, col, path, field, "a count of processors at most 2^53")


def _keywords(statuses, start, end, load_scale, width, origin, f: str):
    if statuses is not None:
        if isinstance(statuses, (int, np.integer)) and not isinstance(statuses, bool):
            statuses = (statuses,)
        if isinstance(statuses, (str, bytes)) or not isinstance(statuses, (Sequence, np.ndarray)) or not len(statuses):
            raise ConfigError(f"{f}.statuses", statuses, "a non-empty list of SWF statuses (1 completed, 0 failed, "
                              "5 cancelled, 2-4 partial, -1 unknown), or None: any")
        statuses = tuple(check.integer(s, f"{f}.statuses[{k}]", lo=-1) for k, s in enumerate(statuses))
    lo = 0.0 if start is None else check.number(start, f"{f}.start", lo=0.0)
    hi = np.inf if end is None else check.number(end, f"{f}.end", lo=0.0)
    if not hi > lo:
        raise ConfigError(f"{f}.end", end, f"a submit time after start ({lo:g} s)")
    scale = check.number(load_scale, f"{f}.load_scale", lo=0.0, lo_open=True)
    check.choice(width, f"{f}.width", WIDTHS)
    many = isinstance(origin, (list, tuple))
    origins = list(origin) if many else [origin]
    if not origins:
        raise ConfigError(f"{f}.origin", origin, "a node (an index or a name), or a non-empty list of nodes")
    for k, o in enumerate(origins):
        name = f"{f}.origin[{k}]" if many else f"{f}.origin"
        if isinstance(o, str):
            if not o:
                raise ConfigError(name, o, "a node index or a node's name")
        else:
            origins[k] = check.integer(o, name, lo=0)
    return statuses, lo, hi, scale, origins


def read_swf(path: str | Path, *, statuses: Sequence[int] | int | None = (1,), start: float | None = None,
             end: float | None = None, load_scale: float = 1.0, width: str = "processors", origin: Any = 0,
             max_width: int = 100_000, field: str = "workload") -> tuple[tuple, SwfLog]:
    """The trace rows (time, origin, demand, width) of the SWF log at *path* and its :class:`SwfLog`
    (module docstring for the mapping); :meth:`Stream.read <dlbkit.families.stream.model.workload.Stream.read>`
    makes the stream of them.

    *statuses*: the SWF statuses kept (default ``(1,)``: completed jobs; None: every job); *start*,
    *end*: the window of submit times kept, in seconds of the log's clock (end excluded; None: open);
    *load_scale*: > 0, divides every arrival time (> 1: more load); *width*: ``"processors"`` (a job
    is one task per processor) or ``"one"`` (one task of all its work); *origin*: the node every job
    arrives at (an index or a name; default 0), or a list of nodes taken in turn; *max_width*: the
    most tasks of a job (the stream's limit). Errors name ``{field}.swf {path} line {k} field {j}
    ({name})`` (a keyword: ``{field}.{keyword}``).
    """
    f = field
    statuses, lo, hi, scale, origins = _keywords(statuses, start, end, load_scale, width, origin, f)
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ConfigError(f"{f}.swf", str(p), f"a readable SWF log ({e.strerror})") from None
    a, lines, header = _parse(_decode(data, p, f"{f}.swf"), p, f"{f}.swf")
    _check_columns(a, lines, p, f"{f}.swf")
    submit, run, status = a[:, _SUBMIT], a[:, _RUN], a[:, _STATUS]
    procs = np.where(a[:, _ALLOC] > 0, a[:, _ALLOC], a[:, _REQ])  # the requested ones when not known
    keep = (submit >= lo) & (submit < hi)
    if statuses is not None:
        keep &= np.isin(status, statuses)
    chosen = int(keep.sum())
    keep &= (run > 0) & (procs > 0)  # no work to place: zero or unknown run time, unknown processors
    if not keep.any():
        what = "any status" if statuses is None else "status in " + ", ".join(map(str, statuses))
        window = "" if start is None and end is None else f", submitted in [{lo:g}, {hi:g}) s"
        raise ConfigError(f"{f}.swf {p}", f"0 of {len(a)} jobs kept", f"a log with at least one job of {what}"
                          f"{window} and a known run time > 0 and processors (the filter keeps none)")
    idx = np.flatnonzero(keep)
    idx = idx[np.argsort(submit[idx], kind="stable")]  # SWF lines are sorted by submit time; a log that is not is
    t = (submit[idx] - submit[idx[0]]) / scale
    p_k, r_k = procs[idx].astype(np.int64), run[idx]
    if width == "processors":
        wide = p_k > max_width
        if wide.any():
            i = int(idx[np.flatnonzero(wide)[0]])
            col = _ALLOC if a[i, _ALLOC] > 0 else _REQ
            raise ConfigError(_where(f"{f}.swf", p, int(lines[i]), col), int(procs[i]),
                              f"at most {max_width:,} processors with width 'processors' (dlbkit's limit on tasks "
                              "of one job; width = 'one' makes it one task)")
        w_k, d_k = p_k, r_k
    else:
        w_k, d_k = np.ones(len(idx), dtype=np.int64), r_k * p_k
    n = len(idx)
    orig = origins * (n // len(origins)) + origins[:n % len(origins)]
    trace = tuple(zip(t.tolist(), orig, d_k.tolist(), w_k.tolist()))
    log = SwfLog(str(p), header.get("MaxProcs"), header.get("MaxNodes"), header.get("MaxJobs"),
                 header.get("MaxRecords"), header.get("UnixStartTime"), records=len(a), kept=n,
                 dropped=chosen - n, width=width, lines=tuple(lines[idx].tolist()))
    return trace, log


def check_width(stream, slots: int) -> None:
    """A job of an SWF stream wider than the platform's *slots* (its nodes' cores in all) is refused,
    naming its line: its tasks could never all run at once, as they did on the logged machine."""
    log = getattr(stream, "source", None)
    if not isinstance(log, SwfLog) or stream.trace is None:
        return
    widths = np.fromiter((r[3] for r in stream.trace), dtype=np.int64, count=len(stream.trace))
    wide = np.flatnonzero(widths > slots)
    if len(wide):
        k = int(wide[0])
        more = f" (the log's MaxProcs is {log.max_procs})" if log.max_procs is not None else ""
        raise ConfigError(f"workload.swf {log.path} line {log.lines[k]} (processors)", int(widths[k]),
                          f"at most the platform's {slots} slots (its nodes' cores){more}")
