"""The job-stream workload: independent jobs arriving over time at every node, each placed by the node
it arrives at (003, Nezha: "the newly arrived task may come from any of the n servers").

A :class:`Stream` says when jobs arrive, where (their *origin* node), how many tasks each has (its
*width*: 1 for a single task, k for a parallel batch whose tasks are placed together) and how much
work each task is (its *demand*, in work units: a node of speed s at availability a serves it in
demand / (s · a) seconds). Arrivals are either

* **Poisson** per origin: node j's jobs arrive at rate ``rates[j]`` jobs per second (one number: the
  same rate at every node), optionally scaled by *bursts* ("rush hours", 003 §3.3.1: a factor on every
  rate between two times), until ``jobs`` jobs have arrived; or
* **recorded**: a list of (time, origin, demand, width) rows (:func:`read_arrivals_csv` reads a CSV
  file of them), sorted by time; an origin is a node index or a platform node's name.

A stream may also start on busy nodes: *initial* gives the tasks already in each node's system at
time 0 (background work of other users, 003 §6.3.2.2's "load index 4 4 6 4 …", or Observation 3.6's
start "with some over-loaded queues"), each of work drawn from *initial_demand*. They are served like
any task but belong to no job (no response time).

The servers are the platform's nodes (speed, cores = slots, availability over time): the workload
knows nothing of them until :meth:`Stream.check_fit`, which checks the rates and origins against a
platform. :meth:`Stream.arrivals` draws the arrivals as arrays (vectorised: a Poisson merge of the
per-origin streams is one Poisson stream of the total rate whose origins are drawn in proportion to
the rates; bursts are a time change of it).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.families.stream.model.swf import SwfLog, read_swf
from dlbkit.model import check

__all__ = ["Stream", "Demand", "Burst", "Arrivals", "stream_from_dict", "read_arrivals_csv", "DEMANDS", "MAX_JOBS",
           "MAX_WIDTH", "MAX_TASKS"]

#: the most jobs of a stream and tasks of a job (dlbkit's limits: arrivals are drawn as arrays up front)
MAX_JOBS = 50_000_000
MAX_WIDTH = 100_000
#: the most tasks of a stream in all (its jobs' tasks and the initial ones): as many as jobs of one task
MAX_TASKS = MAX_JOBS
#: demand distributions: name -> what its parameters mean
DEMANDS = {"exponential": "mean", "deterministic": "mean", "lognormal": "mean and sigma (of the log)",
           "recorded": "values, drawn uniformly with replacement"}


@dataclass(frozen=True)
class Demand:
    """The work of one task (work units; a node of speed s serves it in demand / s seconds at full
    availability): *kind* ``exponential`` (mean *mean*, the supermarket model's service), ``deterministic``
    (*mean*), ``lognormal`` (mean *mean*, log-standard deviation *sigma*) or ``recorded`` (*values*,
    drawn uniformly with replacement)."""

    kind: str = "exponential"
    mean: float = 1.0
    sigma: float = 1.0
    values: tuple = ()

    def __post_init__(self):
        check.choice(self.kind, "demand.kind", DEMANDS)
        object.__setattr__(self, "mean", check.number(self.mean, "demand.mean", lo=0.0, lo_open=True))
        object.__setattr__(self, "sigma", check.number(self.sigma, "demand.sigma", lo=0.0, hi=10.0))
        if self.kind == "recorded":
            if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Sequence) or not self.values:
                raise ConfigError("demand.values", self.values, "a non-empty list of demands (kind 'recorded')")
            vals = tuple(check.number(v, f"demand.values[{k}]", lo=0.0, lo_open=True) for k, v in enumerate(self.values))
            object.__setattr__(self, "values", vals)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if self.kind == "exponential":
            return rng.exponential(self.mean, size)
        if self.kind == "deterministic":
            return np.full(size, self.mean)
        if self.kind == "lognormal":  # E[exp(N(mu, s²))] = exp(mu + s²/2) = mean
            return rng.lognormal(math.log(self.mean) - self.sigma ** 2 / 2, self.sigma, size)
        return np.asarray(self.values)[rng.integers(len(self.values), size=size)]


@dataclass(frozen=True)
class Burst:
    """Between *start* and *end* (seconds) every origin's rate is multiplied by *factor* (> 0; 003's
    "rush hours"). Bursts of a stream may not overlap."""

    start: float
    end: float
    factor: float

    def __post_init__(self):
        check.number(self.start, "bursts.start", lo=0.0)
        check.number(self.end, "bursts.end", lo=0.0)
        if not self.end > self.start:
            raise ConfigError("bursts.end", self.end, f"a time after the burst's start ({self.start})")
        check.number(self.factor, "bursts.factor", lo=0.0, lo_open=True)


@dataclass(frozen=True)
class Arrivals:
    """The drawn arrivals of a run (arrays over jobs, in time order): ``time``, ``origin`` (node
    index), ``width`` (tasks), ``first`` (the index of the job's first task; task ids are
    contiguous per job) and ``demand`` (over tasks)."""

    time: np.ndarray
    origin: np.ndarray
    width: np.ndarray
    first: np.ndarray
    demand: np.ndarray

    @property
    def n_jobs(self) -> int:
        return len(self.time)

    @property
    def n_tasks(self) -> int:
        return len(self.demand)


@dataclass(frozen=True)
class Stream:
    """Jobs arriving at every node over time (module docstring).

    *rates*: jobs per second per origin node (a number: every node; a list: one per platform node,
    each > 0, or 0 for a node where no job arrives; at least one > 0); *jobs*: how many arrive in all
    (Poisson arrivals); *width*: tasks per job (a parallel batch when > 1); *demand*: a
    :class:`Demand`; *bursts*: :class:`Burst` windows; *trace*: recorded rows (time, origin, demand,
    width) instead of Poisson arrivals (then *rates* and *jobs* are not given); *initial*: tasks in
    each node's system at time 0 (one count per platform node, empty: none), each of work drawn from
    *initial_demand* (a :class:`Demand`); *name*: for reports; *source*: where a recorded trace came
    from (set by :meth:`read`: the SWF log's header and lines).

    Raise :exc:`~dlbkit.errors.ConfigError` naming the field (``workload.rates[2]``,
    ``workload.trace[5].time``) for a bad value.
    """

    rates: Any = None
    jobs: int | None = None
    width: int = 1
    demand: Demand = field(default_factory=Demand)
    bursts: tuple = ()
    trace: tuple | None = None
    name: str = "stream"
    initial: tuple = ()
    initial_demand: Demand = field(default_factory=Demand)
    #: where a recorded trace came from (an :class:`~dlbkit.families.stream.model.swf.SwfLog`), or None
    source: Any = None

    @classmethod
    def read(cls, path: str | Path, *, name: str | None = None, initial: Sequence[int] = (),
             initial_demand: Demand | None = None, field: str = "workload", **filters) -> "Stream":
        """A recorded stream of the Standard Workload Format log at *path* (the Parallel Workloads
        Archive's format): *filters* are :func:`~dlbkit.families.stream.model.swf.read_swf`'s keywords
        (``statuses=(1,)``, ``start``, ``end``, ``load_scale=1.0``, ``width="processors"`` or ``"one"``,
        ``origin=0``: that module documents the mapping); *name*: for reports (default the file's stem);
        *initial*, *initial_demand*: as the constructor's."""
        trace, log = read_swf(path, max_width=MAX_WIDTH, field=field, **filters)
        return cls(trace=trace, name=Path(path).stem if name is None else name, initial=initial, source=log,
                   initial_demand=Demand() if initial_demand is None else initial_demand)

    def __post_init__(self):
        f = "workload"
        if self.trace is not None:
            if self.rates is not None or self.jobs is not None:
                raise ConfigError(f"{f}.rates", self.rates, "absent with a recorded trace (the trace gives the arrivals)")
            object.__setattr__(self, "trace", _check_trace(self.trace, f"{f}.trace"))
        else:
            if self.rates is None:
                raise ConfigError(f"{f}.rates", "<missing>", "jobs per second per node (a number > 0, or a list)")
            if isinstance(self.rates, (list, tuple, np.ndarray)):
                if not len(self.rates):
                    raise ConfigError(f"{f}.rates", list(self.rates), "a non-empty list, one rate per node")
                r = tuple(check.number(x, f"{f}.rates[{k}]", lo=0.0) for k, x in enumerate(self.rates))
                if not any(x > 0 for x in r):
                    raise ConfigError(f"{f}.rates", list(r), "rates with at least one > 0")
                object.__setattr__(self, "rates", r)
            else:
                object.__setattr__(self, "rates", check.number(self.rates, f"{f}.rates", lo=0.0, lo_open=True))
            if self.jobs is None:
                raise ConfigError(f"{f}.jobs", "<missing>", "the number of jobs that arrive (an integer >= 1)")
            check.size(self.jobs, f"{f}.jobs", MAX_JOBS, "arrivals are drawn up front")
        check.size(self.width, f"{f}.width", MAX_WIDTH, "tasks of one job")
        if not isinstance(self.demand, Demand):
            raise ConfigError(f"{f}.demand", self.demand, "a Demand")
        bursts = tuple(self.bursts)
        for k, b in enumerate(bursts):
            if not isinstance(b, Burst):
                raise ConfigError(f"{f}.bursts[{k}]", b, "a Burst(start, end, factor)")
        bursts = tuple(sorted(bursts, key=lambda b: b.start))
        for a, b in zip(bursts, bursts[1:]):
            if b.start < a.end:
                raise ConfigError(f"{f}.bursts", f"[{a.start}, {a.end}] and [{b.start}, {b.end}]", "windows that do not overlap")
        if bursts and self.trace is not None:
            raise ConfigError(f"{f}.bursts", "given", "absent with a recorded trace")
        object.__setattr__(self, "bursts", bursts)
        if not isinstance(self.name, str):
            raise ConfigError(f"{f}.name", self.name, "a string")
        if isinstance(self.initial, (str, bytes)) or not isinstance(self.initial, (Sequence, np.ndarray)):
            raise ConfigError(f"{f}.initial", self.initial, "a list of task counts, one per platform node")
        init = tuple(check.integer(x, f"{f}.initial[{k}]", lo=0, hi=MAX_WIDTH) for k, x in enumerate(self.initial))
        object.__setattr__(self, "initial", init)
        # each bound alone leaves their product open: 50 M jobs of 100 000 tasks drew 5·10¹² demands
        tasks = (sum(r[3] for r in self.trace) if self.trace is not None else self.jobs * self.width) + sum(init)
        if tasks > MAX_TASKS:
            what = f"{f}.trace widths" if self.trace is not None else f"{f}.jobs × {f}.width"
            raise ConfigError(what + (f" + {f}.initial" if init else ""), f"{tasks:,} tasks",
                              f"at most {MAX_TASKS:,} tasks in all (dlbkit's limit: every task's demand is drawn up "
                              "front and the engine keeps state per task)")
        if not isinstance(self.initial_demand, Demand):
            raise ConfigError(f"{f}.initial_demand", self.initial_demand, "a Demand")

    # --- against a platform ----------------------------------------------------------------------------
    def rate_vector(self, n_nodes: int) -> np.ndarray:
        """Jobs per second at each of *n_nodes* origins (Poisson arrivals)."""
        if isinstance(self.rates, tuple):
            return np.asarray(self.rates, dtype=float)
        return np.full(n_nodes, float(self.rates))

    def check_fit(self, names: Sequence[str]) -> None:
        """The rates and the trace's origins fit a platform whose nodes are *names* (raise ConfigError)."""
        n = len(names)
        if self.initial and len(self.initial) != n:
            raise ConfigError("workload.initial", f"{len(self.initial)} counts", f"one count per platform node ({n})")
        if isinstance(self.rates, tuple) and len(self.rates) != n:
            raise ConfigError("workload.rates", f"{len(self.rates)} rates", f"one rate per platform node ({n})")
        if self.trace is not None:
            index = {nm: i for i, nm in enumerate(names)}
            for k, row in enumerate(self.trace):
                o = row[1]
                if (isinstance(o, str) and o not in index) or (not isinstance(o, str) and not 0 <= o < n):
                    # an SWF stream's origins are its origin keyword's, not rows a user wrote
                    where = "workload.origin" if isinstance(self.source, SwfLog) else f"workload.trace[{k}].origin"
                    raise ConfigError(where, o, "a node of the platform: an index below "
                                      f"{n} or one of " + ", ".join(names[:8]) + (", …" if n > 8 else ""))

    def arrivals(self, names: Sequence[str], rng: np.random.Generator) -> Arrivals:
        """The jobs of one run on a platform whose nodes are *names*, drawn from *rng*."""
        self.check_fit(names)
        if self.trace is not None:
            index = {nm: i for i, nm in enumerate(names)}
            t = np.array([r[0] for r in self.trace], dtype=float)
            origin = np.array([index[r[1]] if isinstance(r[1], str) else r[1] for r in self.trace], dtype=np.int64)
            width = np.array([r[3] for r in self.trace], dtype=np.int64)
            per_task = np.repeat(np.array([r[2] for r in self.trace], dtype=float), width)
            first = np.concatenate(([0], np.cumsum(width)[:-1])).astype(np.int64)
            return Arrivals(t, origin, width, first, per_task)
        lam = self.rate_vector(len(names))
        total = float(lam.sum())
        J = int(self.jobs)
        u = np.cumsum(rng.exponential(1.0 / total, J))  # arrival times at the base rate
        t = _time_change(u, self.bursts) if self.bursts else u
        origin = rng.choice(len(lam), size=J, p=lam / total) if len(lam) > 1 else np.zeros(J, dtype=np.int64)
        width = np.full(J, int(self.width), dtype=np.int64)
        first = np.arange(J, dtype=np.int64) * int(self.width)
        return Arrivals(t, origin.astype(np.int64), width, first, self.demand.draw(rng, J * int(self.width)))

    def initial_tasks(self, n_nodes: int, rng: np.random.Generator) -> tuple[list[int], list[float]]:
        """The tasks in the nodes' systems at time 0: (node of each, work of each), node by node; drawn
        from *rng* after :meth:`arrivals` (a stream without *initial* draws nothing, so its runs are
        unchanged)."""
        if not self.initial or not sum(self.initial):
            return [], []
        nodes = [j for j, c in enumerate(self.initial) for _ in range(c)]
        return nodes, self.initial_demand.draw(rng, len(nodes)).tolist()

    def offered_work_rate(self, n_nodes: int) -> float:
        """Mean work arriving per second at the base rates (work units/s), for a load factor."""
        if self.trace is not None:
            return math.nan
        mean = float(np.mean(self.demand.values)) if self.demand.kind == "recorded" else self.demand.mean
        return float(self.rate_vector(n_nodes).sum()) * self.width * mean


def _time_change(u: np.ndarray, bursts: Sequence[Burst]) -> np.ndarray:
    """Arrival times at the base rate *u* mapped to real time under the burst factors (the
    cumulative intensity Λ(t) = ∫ factor is piecewise linear; t = Λ⁻¹(u))."""
    ts, cum = [0.0], [0.0]
    for b in bursts:
        cum.append(cum[-1] + (b.start - ts[-1]))
        ts.append(b.start)
        cum.append(cum[-1] + (b.end - b.start) * b.factor)
        ts.append(b.end)
    ts_a, cum_a = np.asarray(ts), np.asarray(cum)
    out = np.interp(u, cum_a, ts_a)
    after = u > cum_a[-1]
    out[after] = ts_a[-1] + (u[after] - cum_a[-1])
    return out


def _check_trace(rows, f: str) -> tuple:
    if isinstance(rows, (str, bytes)) or not isinstance(rows, Sequence) or not rows:
        raise ConfigError(f, rows if isinstance(rows, (str, bytes)) else type(rows).__name__,
                          "a non-empty list of (time, origin, demand, width) rows")
    if len(rows) > MAX_JOBS:
        raise ConfigError(f, f"{len(rows)} rows", f"at most {MAX_JOBS:,} rows (dlbkit's limit)")
    fast = _checked_columns(rows)
    return fast if fast is not None else _check_trace_rows(rows, f)


def _check_trace_rows(rows, f: str) -> tuple:
    """The rows checked one by one: the first bad one named."""
    out = []
    last = 0.0
    for k, row in enumerate(rows):
        p = f"{f}[{k}]"
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence) or len(row) not in (3, 4):
            raise ConfigError(p, row, "a row (time, origin, demand[, width])")
        t = check.number(row[0], f"{p}.time", lo=0.0)
        if t < last:
            raise ConfigError(f"{p}.time", row[0], f"a time not before the previous row's ({last:g}): rows sorted by time")
        last = t
        o = row[1]
        if not isinstance(o, str):
            o = check.integer(o, f"{p}.origin", lo=0)
        elif not o:
            raise ConfigError(f"{p}.origin", o, "a node index or a node's name")
        d = check.number(row[2], f"{p}.demand", lo=0.0, lo_open=True)
        w = check.size(row[3] if len(row) == 4 else 1, f"{p}.width", MAX_WIDTH, "tasks of one job")
        out.append((t, o, d, w))
    return tuple(out)


def _checked_columns(rows) -> tuple | None:
    """The rows checked as columns, when each is a 4-tuple of plain ints and floats (as an SWF log's or a CSV
    file's are): the same tuples and the same acceptance as the row-by-row checks below, which cost ~10 µs a
    row in ``check``'s isinstance tests against the numbers ABCs (1 s for 100 000 jobs). None for anything
    else, and for rows that fail a check: the row-by-row pass then names the first bad one."""
    if not all(type(r) is tuple and len(r) == 4 for r in rows):
        return None
    ts, os_, ds, ws = zip(*rows)
    real, whole = {float, int}, {int}
    if not (set(map(type, ts)) <= real and set(map(type, ds)) <= real and set(map(type, os_)) <= whole
            and set(map(type, ws)) <= whole):
        return None
    try:
        t, d = np.array(ts, dtype=float), np.array(ds, dtype=float)
        o, w = np.array(os_, dtype=np.int64), np.array(ws, dtype=np.int64)
    except OverflowError:  # an int beyond float or int64: the row's own check names it
        return None
    ok = (np.isfinite(t).all() and (t >= 0).all() and (t <= check.HUGE).all() and (np.diff(t) >= 0).all()
          and np.isfinite(d).all() and (d >= check.TINY).all() and (d <= check.HUGE).all()
          and (o >= 0).all() and (w >= 1).all() and (w <= MAX_WIDTH).all())
    if not ok:
        return None
    return tuple(zip(t.tolist(), os_, d.tolist(), ws))


def read_arrivals_csv(path: str | Path) -> tuple:
    """Rows (time, origin, demand, width) of a CSV file with a header naming those columns (width
    optional; an origin that is not an integer is a node's name). Checked by :class:`Stream`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError("workload.trace", str(path), f"a readable CSV file ({e.strerror})") from None
    text = check.decode(data, path)
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    need = ["time", "origin", "demand"]
    if header[:3] != need or header[3:] not in ([], ["width"]):
        raise ConfigError(f"workload.trace header of {path}", ",".join(header), "time,origin,demand[,width]")
    rows = []
    for k, r in enumerate(reader, 2):
        if not r:
            continue
        try:
            vals = [float(r[0]), int(r[1]) if r[1].strip().lstrip("-").isdigit() else r[1].strip(), float(r[2])]
            if len(r) > 3:
                vals.append(int(r[3]))
        except (ValueError, IndexError):
            raise ConfigError(f"workload.trace {path} line {k}", ",".join(r), "time,origin,demand[,width] numbers") from None
        rows.append(tuple(vals))
    if not rows:  # else the Stream said only "got 'tuple'", without the file
        raise ConfigError(f"workload.trace {path}", "its header and no row", "a header and at least one row "
                          "time,origin,demand[,width]")
    return tuple(rows)


def stream_from_dict(table: Mapping, path: str = "workload", base_dir: Path | None = None) -> Stream:
    """A :class:`Stream` from an experiment's ``[workload]`` table (``kind = "stream"``): ``rates``,
    ``jobs``, ``width``, ``demand = {kind, mean, sigma, values}``, ``bursts = [[start, end, factor], …]``,
    ``initial = [counts]`` and ``initial_demand = {…}``, or ``trace`` (a CSV file name, relative to *base_dir*, or a list of rows),
    or ``swf`` (a Standard Workload Format log, relative to *base_dir*) with ``statuses``, ``start``, ``end``,
    ``load_scale``, ``origin`` and ``width = "processors" | "one"`` (:func:`~dlbkit.families.stream.model.swf.read_swf`).
    Errors name ``path.field``."""
    d = check.table(table, path)
    check.known_keys(d, path, {"kind", "rates", "jobs", "width", "demand", "bursts", "trace", "name", "initial",
                               "initial_demand", *SWF_KEYS})
    demands = {}
    for key in ("demand", "initial_demand"):
        dem = check.table(d.get(key, {}), f"{path}.{key}")
        check.known_keys(dem, f"{path}.{key}", {"kind", "mean", "sigma", "values"})
        with check.renamed("demand", f"{path}.{key}"):
            demands[key] = Demand(dem.get("kind", "exponential"), dem.get("mean", 1.0), dem.get("sigma", 1.0),
                                  tuple(dem.get("values", ())))
    demand = demands["demand"]
    raw_b = d.get("bursts", [])
    if not isinstance(raw_b, list):
        raise ConfigError(f"{path}.bursts", raw_b, "a list of [start, end, factor] triples")
    bursts = []
    for k, b in enumerate(raw_b):
        if not isinstance(b, (list, tuple)) or len(b) != 3:
            raise ConfigError(f"{path}.bursts[{k}]", b, "[start, end, factor]")
        with check.renamed("bursts", f"{path}.bursts[{k}]"):
            bursts.append(Burst(*b))
    if "swf" in d:
        return _swf_from_dict(d, path, base_dir, demands["initial_demand"])
    for k in SWF_KEYS:
        if k in d:
            raise ConfigError(f"{path}.{k}", d[k], "absent without swf (a filter of an SWF log's jobs)")
    trace = d.get("trace")
    if isinstance(trace, str):
        p = Path(trace)
        trace = read_arrivals_csv(p if p.is_absolute() or base_dir is None else base_dir / p)
    with check.renamed("workload", path):
        return Stream(rates=d.get("rates"), jobs=d.get("jobs"), width=d.get("width", 1), demand=demand,
                      bursts=tuple(bursts), trace=trace, name=d.get("name", "stream"),
                      initial=d.get("initial", ()), initial_demand=demands["initial_demand"])


#: the [workload] keys of a stream read from an SWF log (besides swf itself and width, name, initial)
SWF_KEYS = ("swf", "statuses", "start", "end", "load_scale", "origin")


def _swf_from_dict(d: Mapping, path: str, base_dir: Path | None, initial_demand: Demand) -> Stream:
    """``swf = "log.swf"`` and its filter keywords (a Poisson stream's or a trace's keys are refused)."""
    for k in ("rates", "jobs", "trace", "bursts", "demand"):
        if k in d:
            raise ConfigError(f"{path}.{k}", d[k], "absent with swf (the log gives the jobs, their times and work)")
    f = d["swf"]
    if not isinstance(f, str) or not f:
        raise ConfigError(f"{path}.swf", f, "the file name of an SWF log (relative to the experiment's folder)")
    p = Path(f)
    kw = {k: d[k] for k in ("statuses", "start", "end", "load_scale", "width", "origin") if k in d}
    if "statuses" in kw and isinstance(kw["statuses"], str) and kw["statuses"] == "any":
        kw["statuses"] = None  # TOML has no null: "any" keeps every status
    with check.renamed("workload", path):  # the constructor's fields (name, initial) under the table's path
        return Stream.read(p if p.is_absolute() or base_dir is None else base_dir / p, field=path,
                           name=d.get("name"), initial=d.get("initial", ()), initial_demand=initial_demand, **kw)
