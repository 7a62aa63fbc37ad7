"""Field checks for configuration read from TOML or passed from Python.

Each check names the field by its path (``nodes[2].speed``) so the error tells the user where to look.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Mapping

from ..errors import ConfigError

__all__ = ["number", "integer", "table", "choice", "known_keys", "required"]


def required(d: Mapping, key: str, path: str) -> Any:
    if key not in d:
        raise ConfigError(_join(path, key), "<missing>", "given (the field is required)")
    return d[key]


def number(value: Any, field: str, *, lo: float | None = None, hi: float | None = None,
           lo_open: bool = False, hi_open: bool = False) -> float:
    """A finite real number in the stated range; returns it as float."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ConfigError(field, value, _range_text("a finite number", lo, hi, lo_open, hi_open))
    bad = (lo is not None and (value <= lo if lo_open else value < lo)) or (
        hi is not None and (value >= hi if hi_open else value > hi))
    if bad:
        raise ConfigError(field, value, _range_text("a number", lo, hi, lo_open, hi_open))
    return float(value)


def integer(value: Any, field: str, *, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ConfigError(field, value, _range_text("an integer", lo, hi, False, False))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise ConfigError(field, value, _range_text("an integer", lo, hi, False, False))
    return int(value)


def table(value: Any, field: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise ConfigError(field, value, "a table (key = value pairs)")
    return value


def choice(value: Any, field: str, allowed) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ConfigError(field, value, "one of " + ", ".join(repr(a) for a in sorted(allowed)))
    return value


def known_keys(d: Mapping, path: str, allowed) -> None:
    for k in d:
        if k not in allowed:
            raise ConfigError(_join(path, k), "<unknown field>",
                              "absent; known fields here are " + ", ".join(sorted(allowed)))


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
