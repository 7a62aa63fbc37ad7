"""Divisible workload: N independent items (a parallel loop), each with a cost in work units.

Items are handed out in chunks of consecutive indices. ``bytes_in`` per item travel with the chunk
to the worker and ``bytes_out`` per item return with its results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from dlbkit.errors import ConfigError
from dlbkit.model import check

__all__ = ["Divisible", "CostModel", "cost_from_dict", "m1_costs", "MAX_ITEMS"]

DISTS = ("constant", "uniform", "normal", "exponential", "linear", "array")

#: the largest number of items of a divisible loop: the simulator draws one cost per item (8 bytes
#: each, so 800 MB at the limit), and a real loop of more items is better written as chunks of items
MAX_ITEMS = 10**8

_REQUIRED = object()
#: each distribution's fields and their defaults (_REQUIRED: no default, the user must state it)
DIST_FIELDS: dict[str, dict[str, Any]] = {
    "constant": {"value": 1.0},
    "uniform": {"low": _REQUIRED, "high": _REQUIRED},
    "normal": {"mean": 1.0, "std": 0.25, "floor": 1e-6},
    "exponential": {"mean": 1.0, "floor": 1e-6},
    "linear": {"first": 1.0, "last": 1.0},
    "array": {"values": _REQUIRED},
}
_FIELD = "workload.cost"


@dataclass(frozen=True)
class CostModel:
    """How per-item costs are drawn (work units per item). *dist* is one of

    * ``constant``: *value* (default 1);
    * ``uniform``: in [*low*, *high*], both required;
    * ``normal``: *mean* (default 1), *std* (default 0.25), truncated below at *floor* (default 1e-6);
    * ``exponential``: *mean* (default 1), floored at *floor*;
    * ``linear``: *first* → *last* across the loop (defaults 1; e.g. a triangular loop);
    * ``array``: the given *values*, one per item.

    A field of another distribution is an error, as in an experiment file. Costs are > 0 (``std``
    may be 0). Raise :exc:`~dlbkit.errors.ConfigError` naming ``workload.cost.<field>`` otherwise.

    >>> CostModel("uniform", low=0.5, high=1.5).high
    1.5
    """

    dist: str = "constant"
    value: float | None = None
    low: float | None = None
    high: float | None = None
    mean: float | None = None
    std: float | None = None
    first: float | None = None
    last: float | None = None
    floor: float | None = None
    values: tuple | None = None

    def __post_init__(self):
        dist = check.choice(self.dist, f"{_FIELD}.dist", DISTS)
        own = DIST_FIELDS[dist]
        for k in ("value", "low", "high", "mean", "std", "first", "last", "floor", "values"):
            v = getattr(self, k)
            if k not in own:
                if v is not None:
                    raise ConfigError(f"{_FIELD}.{k}", v, f"absent for dist {dist!r} (its fields: "
                                      + (", ".join(own) + ")"))
                continue
            if v is None:
                if own[k] is _REQUIRED:
                    raise ConfigError(f"{_FIELD}.{k}", "<missing>", f"given for dist {dist!r} (no default: "
                                      + ("the range of the costs" if dist == "uniform" else "the costs")
                                      + " must be stated)")
                v = own[k]
            if k == "values":
                v = _values(v)
            else:
                v = check.number(v, f"{_FIELD}.{k}", lo=0.0, lo_open=(k != "std"))
            object.__setattr__(self, k, v)
        if dist == "uniform" and self.high < self.low:
            raise ConfigError(f"{_FIELD}.high", self.high, f">= low ({self.low})")

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


def _values(v: Any) -> tuple:
    f = f"{_FIELD}.values"
    if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__len__") or not hasattr(v, "__iter__"):
        raise ConfigError(f, v, "a non-empty list of positive costs")
    if len(v) == 0:
        raise ConfigError(f, [], "a non-empty list of positive costs")
    if len(v) > MAX_ITEMS:
        raise ConfigError(f, f"{len(v)} values", f"at most {MAX_ITEMS:,} costs (dlbkit's limit on items)")
    return tuple(check.number(x, f"{f}[{i}]", lo=0.0, lo_open=True) for i, x in enumerate(v))


def cost_from_dict(d: Any, field: str = "workload.cost") -> CostModel:
    """A :class:`CostModel` from an experiment's ``cost``: a number (constant), a list (array) or a
    table with ``dist`` and that distribution's fields; every value is checked by the constructor."""
    with check.renamed(_FIELD, field):
        if isinstance(d, (int, float)) and not isinstance(d, bool):
            with check.renamed(f"{_FIELD}.value", _FIELD):
                return CostModel("constant", value=d)
        if isinstance(d, (list, tuple)):
            with check.renamed(f"{_FIELD}.values", _FIELD):
                return CostModel("array", values=tuple(d))
        d = check.table(d, _FIELD)
        dist = check.choice(check.required(d, "dist", _FIELD), f"{_FIELD}.dist", DISTS)
        check.known_keys(d, _FIELD, set(DIST_FIELDS[dist]) | {"dist"})
        if dist == "array" and not isinstance(check.required(d, "values", _FIELD), list):
            raise ConfigError(f"{_FIELD}.values", d["values"], "a non-empty list of positive costs")
        return CostModel(**d)


def _as_cost(cost: Any) -> CostModel:
    """*cost* as a CostModel: one already, or what an experiment file's ``cost`` may be (a number, a
    list of costs, a table)."""
    if isinstance(cost, CostModel):
        return cost
    if isinstance(cost, (int, float, list, tuple, Mapping)) and not isinstance(cost, bool):
        return cost_from_dict(dict(cost) if isinstance(cost, Mapping) else cost)
    raise ConfigError(_FIELD, cost, "a CostModel, a positive number (a constant cost), a list of costs or a "
                      "table with dist")


@dataclass(frozen=True)
class Divisible:
    """*n_items* independent items with costs from *cost* (a :class:`CostModel`, or as in an
    experiment file: a number, a list, a table); *bytes_in*/*bytes_out* per item.

    *n_items* is at most :data:`MAX_ITEMS`.

    >>> float(Divisible(4, CostModel("array", values=(1, 2, 3, 4))).costs(None).sum())
    10.0
    """

    n_items: int
    cost: CostModel = field(default_factory=CostModel)
    bytes_in: float = 0.0
    bytes_out: float = 0.0
    family = "divisible"

    def __post_init__(self):
        check.size(self.n_items, "workload.items", MAX_ITEMS, "memory: the simulator holds one cost per item")
        object.__setattr__(self, "cost", _as_cost(self.cost))
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
        with check.renamed("workload", field):
            return cls(items, cost, d.get("bytes_in", 0.0), d.get("bytes_out", 0.0))


def m1_costs(n: int) -> np.ndarray:
    """Item costs of reference models M1/M2 (docs/reference-models.md): 1 + ((7919 k) mod 100) / 10."""
    k = np.arange(n, dtype=np.int64)
    return 1.0 + ((7919 * k) % 100) / 10.0
