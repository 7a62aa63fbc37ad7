"""Field checks for configuration read from TOML or passed from Python.

Each check names the field by its path (``nodes[2].speed``) so the error tells the user where to look.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any, Iterator, Mapping

from dlbkit.errors import ConfigError, closest
from dlbkit.params import MAGNITUDE

__all__ = ["number", "integer", "size", "table", "choice", "closest", "known_keys", "required", "renamed", "decode", "HUGE",
           "TINY"]

#: The largest magnitude of any number a configuration gives (speeds, costs, times, bytes, ...), and
#: the smallest strictly positive one. Far beyond any real platform or workload (an exascale machine
#: is 1e18 flop/s), and small enough that sums and products of a simulation's quantities stay finite:
#: a cost of 1e30 on a node of speed 1e-30 at availability 1e-30 still takes a finite 1e90 s, and a
#: billion of them sum to 1e99, far below the float limit of 1.8e308 (docs/experiments.md, "Limits").
HUGE = MAGNITUDE  # 1e30, the same limit as balancer parameters (dlbkit.params)
TINY = 1 / MAGNITUDE


def required(d: Mapping, key: str, path: str) -> Any:
    if key not in d:
        raise ConfigError(_join(path, key), "<missing>", "given (the field is required)")
    return d[key]


def number(value: Any, field: str, *, lo: float | None = None, hi: float | None = None,
           lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in the stated range, of magnitude at most :data:`HUGE` (and, when it must
    be > 0, at least :data:`TINY`); returns it as float."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ConfigError(field, value, _range_text("a finite number", lo, hi, lo_open, hi_open))
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float
        finite = False
    if not finite:
        raise ConfigError(field, value, _range_text("a finite number", lo, hi, lo_open, hi_open))
    bad = (lo is not None and (value <= lo if lo_open else value < lo)) or (
        hi is not None and (value >= hi if hi_open else value > hi))
    if bad:
        raise ConfigError(field, value, _range_text("a number", lo, hi, lo_open, hi_open))
    if abs(value) > HUGE or (lo == 0 and lo_open and value < TINY):
        low = _e(TINY) if lo == 0 and lo_open else _e(-HUGE) if lo is None else f"{lo:g}"
        high = _e(HUGE) if hi is None else f"{hi:g}"
        raise ConfigError(field, value, f"a number in [{low}, {high}] (dlbkit's limits on magnitudes: "
                                        f"{_e(TINY)} to {_e(HUGE)})")
    return float(value)


def integer(value: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ConfigError(field, value, _range_text("an integer", lo, hi, False, False))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(field, value, _range_text("an integer", lo, hi, False, False))
    return int(value)


def size(value: Any, field: str, limit: int, what: str) -> int:
    """A positive integer *value* of at most *limit* (a size bounded before any work: *what* says what
    the limit guards, e.g. "memory of the item costs")."""
    n = integer(value, field, lo=1)
    if n > limit:
        raise ConfigError(field, value, f"an integer in [1, {limit:,}] (dlbkit's limit, {what})")
    return n


def table(value: Any, field: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise ConfigError(field, value, "a table (key = value pairs)")
    return value


def choice(value: Any, field: str, allowed) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ConfigError(field, value, "one of " + ", ".join(repr(a) for a in sorted(allowed)),
                          suggest=closest(value, allowed))
    return value


def known_keys(d: Mapping, path: str, allowed) -> None:
    for k in d:
        if k not in allowed:
            raise ConfigError(_join(path, k), "<unknown field>",
                              "absent; known fields here are " + ", ".join(sorted(allowed)),
                              suggest=closest(k, allowed))


@contextmanager
def within(where: str) -> Iterator[None]:
    """Re-raise a ConfigError as ``{where} ({its field})``: a part's error (a balancer's parameter, a
    grid value) named under what holds it, its own words kept in the parentheses."""
    try:
        yield
    except ConfigError as e:
        raise ConfigError(f"{where} ({e.field})", e.value, e.allowed) from None


@contextmanager
def renamed(old: str, new: str) -> Iterator[None]:
    """Re-raise a ConfigError whose field starts with *old* with *new* in its place: a constructor
    names its fields as a Python caller sees them (``workload.cost.high``), a loader as the file does
    (``grid.workload.cost.high``, ``nodes[2].availability.level``)."""
    try:
        yield
    except ConfigError as e:
        f = e.field
        if old != new and (f == old or f.startswith((old + ".", old + "["))):
            raise ConfigError(new + f[len(old):], e.value, e.allowed) from None
        raise


def decode(data: bytes, path: Any) -> str:
    """*data* read from file *path* as UTF-8 text; bytes that are not UTF-8 are a ConfigError naming
    the file, the byte offset (and line) and the bytes."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"file {path}", f"bytes {data[e.start:e.end]!r} at byte offset {e.start} (line {line})",
                          "UTF-8 text") from None


def _e(x: float) -> str:
    """A power of ten as 1e30 (not 1e+30)."""
    return f"{x:.0e}".replace("e+", "e").replace("e-0", "e-").replace("e0", "e")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _range_text(noun: str, lo, hi, lo_open, hi_open) -> str:
    if lo is None and hi is None:
        return noun
    if hi is None:
        return f"{noun} {'>' if lo_open else '>='} {lo:g}"
    if lo is None:
        return f"{noun} {'<' if hi_open else '<='} {hi:g}"
    return f"{noun} in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
