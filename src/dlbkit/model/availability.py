"""Availability: the share of a node's CPU that the job gets over time on a non-dedicated machine.

An availability is piecewise constant with levels in (0, 1]. A *spec* (Constant, Step, Pulse, Markov,
Recorded) is plain configuration; ``spec.realise(rng)`` gives a :class:`Piecewise` function of time,
which answers the two questions engines ask exactly (no sampling): how much capacity lies between two
times, and when a given amount of work started at ``t0`` finishes.
"""

from __future__ import annotations

import csv
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..errors import ConfigError
from . import check

__all__ = ["Piecewise", "Constant", "Step", "Pulse", "Markov", "Recorded", "availability_from_dict"]


class Piecewise:
    """A piecewise-constant availability a(t) for t >= 0, possibly extended lazily from a generator.

    ``times[k]`` starts segment k with level ``levels[k]``; ``cum[k]`` is the integral of a from 0 to
    ``times[k]``. The last known segment lasts until the generator yields the next one, or forever.
    """

    __slots__ = ("times", "levels", "cum", "_more", "constant")

    def __init__(self, segments: Iterable[tuple[float, float]]):
        """*segments*: (start time, level) pairs; a list is taken whole, an iterator lazily."""
        finite = isinstance(segments, (list, tuple))
        self.times: list[float] = []
        self.levels: list[float] = []
        self.cum: list[float] = []
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
            self.cum.append(self.cum[-1] + self.levels[-1] * (t - self.times[-1]))
        else:
            self.cum.append(0.0)
        self.times.append(float(t))
        self.levels.append(float(a))
        return True

    def _cover_time(self, t: float) -> None:
        while self._more is not None and self.times[-1] <= t:
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
        while self._more is not None and self.cum[-1] <= target:
            self._pull()
        k = bisect_right(self.cum, target) - 1
        # a segment of the same cumulative start (zero length) cannot exist: times strictly increase
        return self.times[k] + (target - self.cum[k]) / self.levels[k]

    def segments_until(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Breakpoints and levels covering [0, t] (for plots and bounds)."""
        self._cover_time(t)
        k = bisect_right(self.times, t)
        return np.asarray(self.times[:k]), np.asarray(self.levels[:k])


def _realised(times: tuple, levels: tuple) -> Piecewise:
    return Piecewise(list(zip(times, levels)))


def _level(value, field: str) -> float:
    return check.number(value, field, lo=0.0, hi=1.0, lo_open=True)


@dataclass(frozen=True)
class Constant:
    """The node gives the job a fixed share *level* of its CPU."""

    level: float = 1.0

    def realise(self, rng: np.random.Generator | None = None) -> Piecewise:
        return Piecewise([(0.0, self.level)])


@dataclass(frozen=True)
class Step:
    """Level *before* until time *at*, then *level* for ever (a user starts a long job)."""

    at: float
    level: float
    before: float = 1.0

    def realise(self, rng: np.random.Generator | None = None) -> Piecewise:
        if self.at == 0:
            return Piecewise([(0.0, self.level)])
        return Piecewise([(0.0, self.before), (self.at, self.level)])


@dataclass(frozen=True)
class Pulse:
    """Level *level* during [start, start + duration), *base* otherwise; repeats every *period* if given."""

    start: float
    duration: float
    level: float
    base: float = 1.0
    period: float | None = None

    def realise(self, rng: np.random.Generator | None = None) -> Piecewise:
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
        return Piecewise(gen())


@dataclass(frozen=True)
class Markov:
    """Two-state on/off Markov background load: exponential sojourns with means *mean_free* (level
    *high*) and *mean_busy* (level *low*). Seeded: the trajectory comes from the run's Generator."""

    mean_free: float
    mean_busy: float
    low: float
    high: float = 1.0
    start_busy: bool = False

    def realise(self, rng: np.random.Generator | None = None) -> Piecewise:
        if rng is None:
            raise ValueError("a Markov availability needs a random Generator")

        def gen():
            t, busy = 0.0, self.start_busy
            while True:
                yield (t, self.low if busy else self.high)
                t += float(rng.exponential(self.mean_busy if busy else self.mean_free))
                busy = not busy
        return Piecewise(gen())


@dataclass(frozen=True)
class Recorded:
    """A measured availability trace: level ``levels[k]`` from ``times[k]`` on (times[0] must be 0)."""

    times: tuple[float, ...]
    levels: tuple[float, ...]
    source: str = field(default="", compare=False)

    def realise(self, rng: np.random.Generator | None = None) -> Piecewise:
        return Piecewise(list(zip(self.times, self.levels)))


def _read_trace_file(path: Path, field: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if not path.is_file():
        raise ConfigError(field, str(path), "an existing CSV file with columns time,level")
    times, levels = [], []
    with path.open(newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh), 1):
            if not row or row[0].strip().startswith("#"):
                continue
            try:
                t, a = float(row[0]), float(row[1])
            except (ValueError, IndexError):
                if lineno == 1:
                    continue  # a header line
                raise ConfigError(f"{field} line {lineno}", ",".join(row), "two numbers: time,level")
            times.append(t)
            levels.append(a)
    return tuple(times), tuple(levels)


KINDS = ("constant", "step", "pulse", "markov", "trace")


def availability_from_dict(d, field: str, base_dir: Path | None = None):
    """Build and validate an availability spec from a TOML table (or a bare number = constant)."""
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return Constant(_level(d, field))
    d = check.table(d, field)
    kind = check.choice(check.required(d, "kind", field), f"{field}.kind", KINDS)
    f = lambda k: f"{field}.{k}"  # noqa: E731
    if kind == "constant":
        check.known_keys(d, field, {"kind", "level"})
        return Constant(_level(d.get("level", 1.0), f("level")))
    if kind == "step":
        check.known_keys(d, field, {"kind", "at", "level", "before"})
        return Step(check.number(check.required(d, "at", field), f("at"), lo=0.0),
                    _level(check.required(d, "level", field), f("level")),
                    _level(d.get("before", 1.0), f("before")))
    if kind == "pulse":
        check.known_keys(d, field, {"kind", "start", "duration", "level", "base", "period"})
        duration = check.number(check.required(d, "duration", field), f("duration"), lo=0.0, lo_open=True)
        period = d.get("period")
        if period is not None:
            period = check.number(period, f("period"), lo=duration, lo_open=True)
        return Pulse(check.number(check.required(d, "start", field), f("start"), lo=0.0), duration,
                     _level(check.required(d, "level", field), f("level")),
                     _level(d.get("base", 1.0), f("base")), period)
    if kind == "markov":
        check.known_keys(d, field, {"kind", "mean_free", "mean_busy", "low", "high", "start_busy"})
        return Markov(check.number(check.required(d, "mean_free", field), f("mean_free"), lo=0.0, lo_open=True),
                      check.number(check.required(d, "mean_busy", field), f("mean_busy"), lo=0.0, lo_open=True),
                      _level(check.required(d, "low", field), f("low")),
                      _level(d.get("high", 1.0), f("high")),
                      bool(d.get("start_busy", False)))
    # trace: inline arrays or a CSV file
    check.known_keys(d, field, {"kind", "file", "times", "levels"})
    if "file" in d:
        p = Path(d["file"])
        if base_dir is not None and not p.is_absolute():
            p = base_dir / p
        times, levels = _read_trace_file(p, f("file"))
        source = str(p)
    else:
        times = tuple(check.required(d, "times", field))
        levels = tuple(check.required(d, "levels", field))
        source = ""
    if not times or len(times) != len(levels):
        raise ConfigError(f("times"), len(times), f"a non-empty list as long as levels ({len(levels)})")
    for i, t in enumerate(times):
        check.number(t, f"{field}.times[{i}]", lo=0.0)
        if i == 0 and t != 0:
            raise ConfigError(f"{field}.times[0]", t, "0 (a trace starts at time 0)")
        if i and t <= times[i - 1]:
            raise ConfigError(f"{field}.times[{i}]", t, f"greater than times[{i - 1}] = {times[i - 1]}")
    for i, a in enumerate(levels):
        _level(a, f"{field}.levels[{i}]")
    return Recorded(tuple(float(t) for t in times), tuple(float(a) for a in levels), source)
