"""Availability: the share of a node's CPU that the job gets over time on a non-dedicated machine.

An availability is piecewise constant with levels in (0, 1]. A *spec* (Constant, Step, Pulse, Markov,
Recorded) is plain configuration; ``spec.realise(rng)`` gives a :class:`Piecewise` function of time,
which answers the two questions engines ask exactly (no sampling): how much capacity lies between two
times, and when a given amount of work started at ``t0`` finishes.
"""

from __future__ import annotations

import csv
import io
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["Piecewise", "Constant", "Step", "Pulse", "Markov", "Recorded", "availability_from_dict",
           "as_availability", "SPECS", "MAX_SEGMENTS"]

#: the most changes of level one realised availability may make in a simulated run (dlbkit's limit;
#: a real run's emulation has none: :meth:`Piecewise.unbounded`). A lazily extended
#: availability (a repeating Pulse, a Markov on/off load) grows by one segment per change of level,
#: so its count is (the run's length) / (its time scale): a Markov load of 0.1 s sojourns over a
#: 10^6 s run would be 10^7 segments, 240 MB of arrays for one node (a gigabyte as Python lists). The
#: run stops with a ConfigError naming the spec's time scale instead. The shipped runs stay far below
#: it (the most any reaches is in docs/experiments.md, "Limits"); at this count a node's segments take
#: about 24 MB and a Markov node's are drawn in about a second.
MAX_SEGMENTS = 1_000_000


class Piecewise:
    """A piecewise-constant availability a(t) for t >= 0, possibly extended lazily from a generator.

    ``times[k]`` starts segment k with level ``levels[k]``; ``cum[k]`` is the integral of a from 0 to
    ``times[k]``. The last known segment lasts until the generator yields the next one, or forever.
    The three are read-only ``array.array('d')`` columns (24 B a segment; Python lists of floats took
    about 100 B, BENCHMARKS.md, and the lookups bisect them as they are): they index, bisect, slice
    and iterate like lists and give the same floats, but an array never equals a list and ``json``
    does not take one, so compare ``list(pw.times)`` or ``pw.times.tolist()``, and take
    :meth:`to_dict` for plain lists. Changing them breaks the function (``cum`` is derived).
    """

    __slots__ = ("times", "levels", "cum", "_more", "constant", "scale")

    def __init__(self, segments: Iterable[tuple[float, float]], scale: tuple[str, object, str] | None = None):
        """*segments*: (start time, level) pairs; a list is taken whole, an iterator lazily.
        *scale*: (field, value, what it is) of the time scale that sets how fast a lazy one grows,
        named by the ConfigError raised past :data:`MAX_SEGMENTS` segments (only a lazy one is bounded:
        a list, such as a recorded trace, is taken whole whatever its length)."""
        finite = isinstance(segments, (list, tuple))
        self.scale = None if finite else scale or ("availability", "<its time scale>", "a time scale")
        self.times = array("d")
        self.levels = array("d")
        self.cum = array("d")
        self._more: Iterator[tuple[float, float]] | None = iter(segments)
        self._pull()
        if not self.times or self.times[0] != 0.0:
            raise ValueError("an availability must start at t = 0")
        self._pull()
        while finite and self._pull():
            pass
        #: the level if a(t) is one constant for all t, else None (the engines' fast path)
        self.constant: float | None = self.levels[0] if self._more is None and len(self.levels) == 1 else None

    def __reduce__(self):
        # The generator of a lazily extended function cannot be pickled: a pickle keeps the part
        # realised so far. Engines realise past every time they integrate to, so a finished run's
        # trace pickles without losing anything it used.
        return (_realised, (tuple(self.times), tuple(self.levels)))

    def _pull(self) -> bool:
        """Append the next segment from the generator; False once it is exhausted."""
        if self._more is None:
            return False
        try:
            t, a = next(self._more)
        except StopIteration:
            self._more = None
            return False
        if self.times:
            if t <= self.times[-1]:
                raise ValueError("availability segments must start at increasing times")
            if len(self.times) > MAX_SEGMENTS and self.scale is not None:
                self._too_many()
            self.cum.append(self.cum[-1] + self.levels[-1] * (t - self.times[-1]))
        else:
            self.cum.append(0.0)
        self.times.append(float(t))
        self.levels.append(float(a))
        return True

    def unbounded(self) -> "Piecewise":
        """This availability, with no limit on how far it extends (a real run's emulation: the clock
        paces it, and a long-lived ``dlbkit.Cluster`` must not fail for having run long). Returns self."""
        self.scale = None
        return self

    def _too_many(self):
        field, value, what = self.scale
        raise ConfigError(field, value, f"{what} long enough for at most {MAX_SEGMENTS:,} changes of level in a "
                          f"run (dlbkit's limit, reached at simulated time {self.times[-1]:.6g} s: use a coarser "
                          "time scale or a shorter run)")

    def _cover_time(self, t: float) -> None:
        """Extend until the last known segment starts after *t*."""
        while self._more is not None and self.times[-1] <= t:
            self._pull()

    def _cover_cum(self, target: float) -> None:
        """Extend until the last known segment starts after the capacity reaches *target*."""
        while self._more is not None and self.cum[-1] <= target:
            self._pull()

    def level(self, t: float) -> float:
        self._cover_time(t)
        return self.levels[bisect_right(self.times, t) - 1]

    def capacity(self, t: float) -> float:
        """Integral of a from 0 to t."""
        if self.constant is not None:
            return self.constant * t
        self._cover_time(t)
        k = bisect_right(self.times, t) - 1
        return self.cum[k] + self.levels[k] * (t - self.times[k])

    def finish(self, t0: float, amount: float) -> float:
        """The time t1 >= t0 at which the integral of a over [t0, t1] equals *amount* (exactly)."""
        if self.constant is not None:
            return t0 + amount / self.constant
        target = self.capacity(t0) + amount
        self._cover_cum(target)
        k = bisect_right(self.cum, target) - 1
        # a segment of the same cumulative start (zero length) cannot exist: times strictly increase
        return self.times[k] + (target - self.cum[k]) / self.levels[k]

    def to_dict(self, until: float | None = None) -> dict[str, list[float]]:
        """The segments as plain lists, ``{"times": [...], "levels": [...]}`` (``json.dumps`` takes it;
        ``cum`` follows from them): those realised so far, or those covering [0, *until*], extending
        a lazy one that far. ``Piecewise(list(zip(d["times"], d["levels"])))`` gives the function back
        (a lazy one: as far as it was realised)."""
        if until is None:
            return {"times": self.times.tolist(), "levels": self.levels.tolist()}
        self._cover_time(until)
        k = bisect_right(self.times, until)
        return {"times": self.times[:k].tolist(), "levels": self.levels[:k].tolist()}

    def segments_until(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Breakpoints and levels covering [0, t] (for plots and bounds)."""
        self._cover_time(t)
        k = bisect_right(self.times, t)
        return np.asarray(self.times[:k]), np.asarray(self.levels[:k])


def _realised(times: tuple, levels: tuple) -> Piecewise:
    return Piecewise(list(zip(times, levels)))


_FIELD = "availability"


def _level(value, field: str) -> float:
    return check.number(value, field, lo=0.0, hi=1.0, lo_open=True)


def _set(obj, name: str, value) -> None:
    object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class Constant:
    """The node gives the job a fixed share *level* of its CPU, in (0, 1]."""

    level: float = 1.0

    def __post_init__(self):
        _set(self, "level", _level(self.level, f"{_FIELD}.level"))

    def realise(self, rng: np.random.Generator | None = None, field: str = _FIELD) -> Piecewise:
        return Piecewise([(0.0, self.level)])

    def lowest(self) -> float:
        """The lowest level a realisation takes."""
        return self.level


@dataclass(frozen=True)
class Step:
    """Level *before* until time *at* (s, >= 0), then *level* for ever (a user starts a long job);
    levels in (0, 1]."""

    at: float
    level: float
    before: float = 1.0

    def __post_init__(self):
        _set(self, "at", check.number(self.at, f"{_FIELD}.at", lo=0.0))
        _set(self, "level", _level(self.level, f"{_FIELD}.level"))
        _set(self, "before", _level(self.before, f"{_FIELD}.before"))

    def realise(self, rng: np.random.Generator | None = None, field: str = _FIELD) -> Piecewise:
        if self.at == 0:
            return Piecewise([(0.0, self.level)])
        return Piecewise([(0.0, self.before), (self.at, self.level)])

    def lowest(self) -> float:
        """The lowest level a realisation takes (*before* only if it lasts a while)."""
        return self.level if self.at == 0 else min(self.before, self.level)


@dataclass(frozen=True)
class Pulse:
    """Level *level* during [start, start + duration), *base* otherwise; repeats every *period* if
    given. Times in seconds: *start* >= 0, *duration* > 0, *period* > *duration* (a pulse ends before
    the next begins); levels in (0, 1]."""

    start: float
    duration: float
    level: float
    base: float = 1.0
    period: float | None = None

    def __post_init__(self):
        _set(self, "start", check.number(self.start, f"{_FIELD}.start", lo=0.0))
        _set(self, "duration", check.number(self.duration, f"{_FIELD}.duration", lo=0.0, lo_open=True))
        _set(self, "level", _level(self.level, f"{_FIELD}.level"))
        _set(self, "base", _level(self.base, f"{_FIELD}.base"))
        if self.period is not None:
            try:
                period = check.number(self.period, f"{_FIELD}.period", lo=self.duration, lo_open=True)
            except ConfigError as e:
                raise ConfigError(e.field, e.value, f"a number > {self.duration:g}, the pulse's duration (a pulse "
                                  "ends before the next one begins)") from None
            _set(self, "period", period)

    def realise(self, rng: np.random.Generator | None = None, field: str = _FIELD) -> Piecewise:
        def gen():
            yield (0.0, self.base if self.start > 0 else self.level)
            t = self.start
            first = True
            while True:
                if not (first and t == 0):
                    yield (t, self.level)
                yield (t + self.duration, self.base)
                if self.period is None:
                    return
                t += self.period
                first = False
        return Piecewise(gen(), (f"{field}.period", self.period, "a period"))

    def lowest(self) -> float:
        """The lowest level a realisation takes (both levels come, whatever *start*)."""
        return min(self.level, self.base)


@dataclass(frozen=True)
class Markov:
    """Two-state on/off Markov background load: exponential sojourns with means *mean_free* (level
    *high*) and *mean_busy* (level *low*), in seconds (> 0); levels in (0, 1]. Seeded: the trajectory
    comes from the run's Generator."""

    mean_free: float
    mean_busy: float
    low: float
    high: float = 1.0
    start_busy: bool = False

    def __post_init__(self):
        _set(self, "mean_free", check.number(self.mean_free, f"{_FIELD}.mean_free", lo=0.0, lo_open=True))
        _set(self, "mean_busy", check.number(self.mean_busy, f"{_FIELD}.mean_busy", lo=0.0, lo_open=True))
        _set(self, "low", _level(self.low, f"{_FIELD}.low"))
        _set(self, "high", _level(self.high, f"{_FIELD}.high"))
        if not isinstance(self.start_busy, bool):
            raise ConfigError(f"{_FIELD}.start_busy", self.start_busy, "true or false")

    def realise(self, rng: np.random.Generator | None = None, field: str = _FIELD) -> Piecewise:
        if rng is None:
            raise ValueError("a Markov availability needs a random Generator")
        return _MarkovPiecewise(self, rng, field)

    def lowest(self) -> float:
        """The lowest level a realisation takes (a sojourn is finite: both states come)."""
        return min(self.low, self.high)


@dataclass(frozen=True)
class Recorded:
    """A measured availability trace: level ``levels[k]`` (in (0, 1]) from ``times[k]`` on (seconds,
    increasing; times[0] must be 0)."""

    times: tuple[float, ...]
    levels: tuple[float, ...]
    source: str = field(default="", compare=False)

    def __post_init__(self):
        times, levels = self.times, self.levels
        for name, v in (("times", times), ("levels", levels)):
            if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__len__") or not hasattr(v, "__iter__"):
                raise ConfigError(f"{_FIELD}.{name}", v, "a list of numbers")
        where = f" (in {self.source})" if self.source else ""
        if not len(times):
            raise ConfigError(f"{_FIELD}.times", "an empty trace" + where,
                              "at least one time,level pair (the level from time 0 on)")
        if len(times) != len(levels):
            raise ConfigError(f"{_FIELD}.levels", f"{len(levels)} levels",
                              f"one level per time ({len(times)} times)")
        ts = tuple(check.number(t, f"{_FIELD}.times[{i}]", lo=0.0) for i, t in enumerate(times))
        for i, t in enumerate(ts):
            if i == 0 and t != 0:
                raise ConfigError(f"{_FIELD}.times[0]", times[0], "0 (a trace starts at time 0)")
            if i and t <= ts[i - 1]:
                raise ConfigError(f"{_FIELD}.times[{i}]", times[i], f"greater than times[{i - 1}] = {times[i - 1]}")
        _set(self, "times", ts)
        _set(self, "levels", tuple(_level(a, f"{_FIELD}.levels[{i}]") for i, a in enumerate(levels)))

    def realise(self, rng: np.random.Generator | None = None, field: str = _FIELD) -> Piecewise:
        return Piecewise(list(zip(self.times, self.levels)))

    def lowest(self) -> float:
        """The lowest level a realisation takes."""
        return min(self.levels)


SPECS = (Constant, Step, Pulse, Markov, Recorded)


class _MarkovPiecewise(Piecewise):
    """A Markov on/off trajectory, extended on demand: sojourn k is ``mean · e_k`` with e_k the k-th
    standard exponential drawn from the run's Generator, the means alternating (busy: *mean_busy*,
    free: *mean_free*), exactly as ``rng.exponential(mean)`` one sojourn at a time.

    A short extension (the usual one: an event a little past the known end) draws sojourn by sojourn.
    A long one draws :data:`_BLOCK` standard exponentials at once, finds with numpy how many of them
    the extension needs (the same float operations, in the same order, as one at a time), then rewinds
    the bit generator and draws exactly that many again: the Generator is left where the sojourn-by-
    sojourn draws would leave it, so a Generator shared by several nodes, or by anything else, gives
    the same numbers to the same consumers as before (tests/face/experiments/test_run_budget.py holds the sojourn-by-
    sojourn reference and compares)."""

    __slots__ = ("_rng", "_means", "_lv", "_busy")

    def __init__(self, spec: "Markov", rng: np.random.Generator, field: str):
        mf, mb = spec.mean_free, spec.mean_busy
        # name the shorter sojourn: shortening a cycle is what multiplies its segments
        scale = ((f"{field}.mean_free", mf, "a mean sojourn") if mf <= mb
                 else (f"{field}.mean_busy", mb, "a mean sojourn"))
        self._rng = rng
        self._means = (mf, mb)  # indexed by busy
        self._lv = (spec.high, spec.low)
        self._busy = spec.start_busy  # the state of the last known segment
        super().__init__([(0.0, spec.low if spec.start_busy else spec.high)])
        self.scale = scale
        self._more = _ENDLESS  # never exhausted (only tested against None; no reference cycle)
        self.constant = None
        self._step()

    def _step(self) -> None:
        """One sojourn more (the last segment ends, the other state begins)."""
        if len(self.times) > MAX_SEGMENTS and self.scale is not None:
            self._too_many()
        busy = self._busy
        t = self.times[-1] + float(self._rng.exponential(self._means[busy]))
        self.cum.append(self.cum[-1] + self.levels[-1] * (t - self.times[-1]))
        self.times.append(t)
        self._busy = busy = not busy
        self.levels.append(self._lv[busy])

    def _extend(self, bound: float, by_cum: bool) -> None:
        """Extend until the last segment's start (its capacity with *by_cum*) passes *bound*."""
        last = self.cum if by_cum else self.times
        for _ in range(_SHORT):
            if last[-1] > bound:
                return
            self._step()
        bg = self._rng.bit_generator
        while last[-1] <= bound:
            # MAX_SEGMENTS changes of level: one segment more than that
            room = MAX_SEGMENTS + 1 - len(self.times) if self.scale is not None else _BLOCK
            if room <= 0:
                self._too_many()
            n = min(_BLOCK, room)
            state = bg.state
            e = self._rng.standard_exponential(n)
            busy0 = self._busy
            scales = np.empty(n)
            scales[0::2] = self._means[busy0]
            scales[1::2] = self._means[not busy0]
            lv = np.empty(n + 1)
            lv[0] = self.levels[-1]
            lv[1::2] = self._lv[not busy0]
            lv[2::2] = self._lv[busy0]
            times = np.add.accumulate(np.concatenate(([self.times[-1]], scales * e)))
            cum = np.add.accumulate(np.concatenate(([self.cum[-1]], lv[:-1] * (times[1:] - times[:-1]))))
            past = np.flatnonzero((cum if by_cum else times)[1:] > bound)
            k = int(past[0]) + 1 if len(past) else n
            if k < n:  # rewind and draw exactly the k the extension used
                bg.state = state
                self._rng.standard_exponential(k)
            self.times.frombytes(times[1:k + 1].tobytes())  # float64 to float64: the same bits
            self.cum.frombytes(cum[1:k + 1].tobytes())
            self.levels.frombytes(lv[1:k + 1].tobytes())
            if k % 2:
                self._busy = not busy0

    def _cover_time(self, t: float) -> None:
        if self.times[-1] <= t:
            self._extend(t, False)

    def _cover_cum(self, target: float) -> None:
        if self.cum[-1] <= target:
            self._extend(target, True)


#: sojourns a Markov availability draws one by one before it draws in blocks, and a block's size
_SHORT = 16
_BLOCK = 65_536
_ENDLESS = object()


def _read_trace_file(path: Path, field: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The (times, levels) of a CSV file ``time,level`` (a header line and ``#`` comments allowed)."""
    if not path.is_file():
        raise ConfigError(field, str(path), "an existing CSV file with columns time,level")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise ConfigError(field, str(path), f"a readable CSV file ({e.strerror})") from None
    try:
        text = check.decode(data, path)
    except ConfigError as e:
        raise ConfigError(f"{field} ({path})", e.value, e.allowed) from None
    times, levels = [], []
    for lineno, row in enumerate(csv.reader(io.StringIO(text, newline="")), 1):
        if not row or not "".join(row).strip() or row[0].strip().startswith("#"):
            continue
        try:
            t, a = float(row[0]), float(row[1])
        except (ValueError, IndexError):
            if lineno == 1:
                continue  # a header line
            raise ConfigError(f"{field} line {lineno}", ",".join(row), "two numbers: time,level") from None
        times.append(t)
        levels.append(a)
    if not times:
        raise ConfigError(field, str(path), "a CSV file with at least one time,level line (the file has none)")
    return tuple(times), tuple(levels)


KINDS = ("constant", "step", "pulse", "markov", "trace")


def availability_from_dict(d, field: str, base_dir: Path | None = None):
    """Build an availability spec from a TOML table (or a bare number = constant); its constructor
    checks the values, naming them under *field*."""
    with check.renamed(_FIELD, field):
        if isinstance(d, (int, float)) and not isinstance(d, bool):
            with check.renamed(f"{_FIELD}.level", _FIELD):
                return Constant(d)
        d = check.table(d, _FIELD)
        kind = check.choice(check.required(d, "kind", _FIELD), f"{_FIELD}.kind", KINDS)
        keys = {"constant": {"level"}, "step": {"at", "level", "before"},
                "pulse": {"start", "duration", "level", "base", "period"},
                "markov": {"mean_free", "mean_busy", "low", "high", "start_busy"},
                "trace": {"file", "times", "levels"}}[kind]
        check.known_keys(d, _FIELD, keys | {"kind"})
        kw = {k: v for k, v in d.items() if k != "kind"}
        if kind == "constant":
            return Constant(**kw)
        for k in {"step": ("at", "level"), "pulse": ("start", "duration", "level"),
                  "markov": ("mean_free", "mean_busy", "low")}.get(kind, ()):
            check.required(d, k, _FIELD)
        if kind == "step":
            return Step(**kw)
        if kind == "pulse":
            return Pulse(**kw)
        if kind == "markov":
            return Markov(**kw)
    # trace: inline arrays or a CSV file
    if "file" in d:
        f = d["file"]
        if not isinstance(f, str) or not f:
            raise ConfigError(f"{field}.file", f, "the path of a CSV file with columns time,level")
        p = Path(f)
        if base_dir is not None and not p.is_absolute():
            p = base_dir / p
        times, levels = _read_trace_file(p, f"{field}.file")
        try:
            return Recorded(times, levels, str(p))
        except ConfigError as e:  # name the file and the entry: "... file trace.csv, levels[3]"
            entry = e.field[len(_FIELD) + 1:] if e.field.startswith(_FIELD + ".") else e.field
            raise ConfigError(f"{field}.file {p}, {entry}", e.value, e.allowed) from None
    with check.renamed(_FIELD, field):
        for k in ("times", "levels"):
            v = check.required(d, k, _FIELD)
            if not isinstance(v, list):
                raise ConfigError(f"{_FIELD}.{k}", v, "a list of numbers")
        return Recorded(tuple(d["times"]), tuple(d["levels"]))


def as_availability(a, field: str = "availability"):
    """*a* as an availability spec: a spec already, a bare level (a Constant) or a table as in a
    platform file."""
    if isinstance(a, SPECS):
        return a
    if isinstance(a, (int, float, Mapping)) and not isinstance(a, bool):
        return availability_from_dict(dict(a) if isinstance(a, Mapping) else a, field)
    raise ConfigError(field, a, "a level in (0, 1], an availability (Constant, Step, Pulse, Markov, Recorded) "
                      "or a table with kind")
