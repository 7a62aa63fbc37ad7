"""Name → balancer class. ``@register`` adds a class; ``make(name, **params)`` builds one."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError

__all__ = ["register", "get", "make", "names", "REGISTRY"]

REGISTRY: dict[str, type] = {}


def register(cls: type) -> type:
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a registry name")
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise TypeError(f"balancer name {cls.name!r} is taken by {REGISTRY[cls.name].__name__}")
    REGISTRY[cls.name] = cls
    return cls


def names(kind: str | None = None) -> list[str]:
    return sorted(n for n, c in REGISTRY.items() if kind is None or c.kind == kind)


def get(name: str, field: str = "balancer") -> type:
    key = name.lower() if isinstance(name, str) else name
    if key not in REGISTRY:
        raise ConfigError(field, name, "a registered balancer: " + ", ".join(names()))
    return REGISTRY[key]


def make(name: str, params: dict[str, Any] | None = None, field: str = "balancer"):
    """Build and validate the balancer *name* with *params*; unknown parameters are named."""
    cls = get(name, field)
    params = dict(params or {})
    valid = cls.param_names()
    for k in params:
        if k not in valid:
            raise ConfigError(f"{field} {name!r} parameter", k, "one of " + (", ".join(valid) or "(none)"))
    b = cls(**params)
    b.validate()
    return b
