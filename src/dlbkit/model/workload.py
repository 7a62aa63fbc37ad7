"""Divisible workload: N independent items (a parallel loop), each with a cost in work units.

Items are handed out in chunks of consecutive indices. ``bytes_in`` per item travel with the chunk
to the worker and ``bytes_out`` per item return with its results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..errors import ConfigError
from . import check

__all__ = ["Divisible", "CostModel", "cost_from_dict", "m1_costs"]

DISTS = ("constant", "uniform", "normal", "exponential", "linear", "array")


@dataclass(frozen=True)
class CostModel:
    """How per-item costs are drawn. *dist* is one of constant, uniform, normal (truncated below at
    *floor*), exponential, linear (first→last across the loop, e.g. a triangular loop) or array."""

    dist: str = "constant"
    value: float = 1.0
    low: float = 0.5
    high: float = 1.5
    mean: float = 1.0
    std: float = 0.25
    first: float = 1.0
    last: float = 1.0
    floor: float = 1e-6
    values: tuple = ()

    def draw(self, n: int, rng: np.random.Generator) -> np.ndarray:
        d = self.dist
        if d == "constant":
            return np.full(n, self.value)
        if d == "uniform":
            return rng.uniform(self.low, self.high, n)
        if d == "normal":
            return np.maximum(rng.normal(self.mean, self.std, n), self.floor)
        if d == "exponential":
            return np.maximum(rng.exponential(self.mean, n), self.floor)
        if d == "linear":
            return np.linspace(self.first, self.last, n) if n > 1 else np.array([self.first])
        return np.asarray(self.values, dtype=float)

    @property
    def deterministic(self) -> bool:
        return self.dist in ("constant", "linear", "array")


def cost_from_dict(d: Any, field: str = "workload.cost") -> CostModel:
    if isinstance(d, (int, float)) and not isinstance(d, bool):
        return CostModel("constant", value=check.number(d, field, lo=0.0, lo_open=True))
    if isinstance(d, (list, tuple)):
        vals = [check.number(v, f"{field}[{i}]", lo=0.0, lo_open=True) for i, v in enumerate(d)]
        if not vals:
            raise ConfigError(field, [], "a non-empty list of positive costs")
        return CostModel("array", values=tuple(vals))
    d = check.table(d, field)
    dist = check.choice(check.required(d, "dist", field), f"{field}.dist", DISTS)
    allowed = {"constant": {"value"}, "uniform": {"low", "high"}, "normal": {"mean", "std", "floor"},
               "exponential": {"mean", "floor"}, "linear": {"first", "last"}, "array": {"values"}}[dist]
    check.known_keys(d, field, allowed | {"dist"})
    pos = lambda k, default: check.number(d.get(k, default), f"{field}.{k}", lo=0.0, lo_open=True)  # noqa: E731
    if dist == "constant":
        return CostModel(dist, value=pos("value", 1.0))
    if dist == "uniform":
        low, high = pos("low", 0.5), pos("high", 1.5)
        if high < low:
            raise ConfigError(f"{field}.high", high, f">= low ({low})")
        return CostModel(dist, low=low, high=high)
    if dist == "normal":
        return CostModel(dist, mean=pos("mean", 1.0),
                         std=check.number(d.get("std", 0.25), f"{field}.std", lo=0.0), floor=pos("floor", 1e-6))
    if dist == "exponential":
        return CostModel(dist, mean=pos("mean", 1.0), floor=pos("floor", 1e-6))
    if dist == "linear":
        return CostModel(dist, first=pos("first", 1.0), last=pos("last", 1.0))
    return cost_from_dict(list(check.required(d, "values", field)), f"{field}.values")


@dataclass(frozen=True)
class Divisible:
    """*n_items* independent items with costs from *cost*; *bytes_in*/*bytes_out* per item.

    >>> Divisible(4, CostModel("array", values=(1, 2, 3, 4))).costs(None).sum()
    10.0
    """

    n_items: int
    cost: CostModel = field(default_factory=CostModel)
    bytes_in: float = 0.0
    bytes_out: float = 0.0
    family = "divisible"

    def __post_init__(self):
        check.integer(self.n_items, "workload.items", lo=1)
        check.number(self.bytes_in, "workload.bytes_in", lo=0.0)
        check.number(self.bytes_out, "workload.bytes_out", lo=0.0)
        if self.cost.dist == "array" and len(self.cost.values) != self.n_items:
            raise ConfigError("workload.cost.values", f"{len(self.cost.values)} values",
                              f"one cost per item ({self.n_items})")

    def costs(self, rng: np.random.Generator | None) -> np.ndarray:
        if rng is None:
            rng = np.random.default_rng(0)
        return self.cost.draw(self.n_items, rng)

    @classmethod
    def from_dict(cls, d: Mapping, field: str = "workload") -> "Divisible":
        d = check.table(d, field)
        check.known_keys(d, field, {"kind", "items", "cost", "bytes_in", "bytes_out"})
        kind = d.get("kind", "divisible")
        check.choice(kind, f"{field}.kind", {"divisible"})
        cost = cost_from_dict(d.get("cost", 1.0), f"{field}.cost")
        items = d.get("items", len(cost.values) if cost.dist == "array" else None)
        if items is None:
            raise ConfigError(f"{field}.items", "<missing>", "a positive integer number of items")
        return cls(check.integer(items, f"{field}.items", lo=1), cost,
                   check.number(d.get("bytes_in", 0.0), f"{field}.bytes_in", lo=0.0),
                   check.number(d.get("bytes_out", 0.0), f"{field}.bytes_out", lo=0.0))


def m1_costs(n: int) -> np.ndarray:
    """Item costs of reference models M1/M2 (benchmarks/MODELS.md): 1 + ((7919 k) mod 100) / 10."""
    k = np.arange(n, dtype=np.int64)
    return 1.0 + ((7919 * k) % 100) / 10.0
