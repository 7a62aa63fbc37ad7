"""Declared parameter constraints and the get/set/clone protocol (scikit-learn's estimator conventions).

A parameterised class stores its keyword-only ``__init__`` arguments unchanged and declares
``_parameter_constraints``, a dict from parameter name to a list of accepted forms. ``validate()``
checks them and raises :class:`~dlbkit.errors.ConfigError` in the single form
"parameter P of B must be ...; got V".
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

from dlbkit.errors import ConfigError, closest

#: the largest magnitude of a balancer parameter (as of any configured number: dlbkit.model.check.HUGE)
MAGNITUDE = 1e30

__all__ = ["Interval", "Options", "Parameterised"]


@dataclass(frozen=True)
class Interval:
    """A number of *kind* (``Integral`` or ``Real``) in [left, right], each end open or closed; always
    finite and of magnitude at most :data:`MAGNITUDE` (an open-ended range stops there), so that a
    balancer's arithmetic stays finite."""

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"  # "both" | "left" | "right" | "neither"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.kind):
            return False
        if isinstance(value, Real) and not (abs(value) <= MAGNITUDE):  # NaN, ±inf and the absurdly large
            return False
        lo_ok = self.left is None or (
            value >= self.left if self.closed in ("both", "left") else value > self.left
        )
        if self._floored:  # "> 0" means at least 1 / MAGNITUDE, as every other number (docs: Limits)
            lo_ok = value >= 1 / MAGNITUDE
        hi_ok = self.right is None or (
            value <= self.right if self.closed in ("both", "right") else value < self.right
        )
        return lo_ok and hi_ok

    @property
    def _floored(self) -> bool:
        """A real that must be > 0: a period of 1e-300 would be 1e300 rounds, a speed of 1e-300 an end
        time beyond the float range."""
        return self.kind is not Integral and self.left == 0 and self.closed in ("right", "neither")

    def __str__(self) -> str:
        noun = "an int" if self.kind is Integral else "a number"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        # an int bound whole (HiGHS's 2147483647, not 2.14748e+09)
        num = lambda v: f"{v:d}" if self.kind is Integral and isinstance(v, int) else f"{v:g}"  # noqa: E731
        lo = "-inf" if self.left is None else num(self.left)
        hi = "inf" if self.right is None else num(self.right)
        return f"{noun} in the range {lb}{lo}, {hi}{rb}" + (f" (at least {1 / MAGNITUDE:g})" if self._floored else "")


@dataclass(frozen=True)
class Options:
    """One of a fixed set of strings."""

    values: frozenset

    def __init__(self, *values: str):
        object.__setattr__(self, "values", frozenset(values))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in sorted(self.values))


def _describe(form: Any) -> str:
    if form is None:
        return "None"
    if form is bool:
        return "a bool"
    if form == "array":
        return "a sequence of numbers"
    return str(form)


def _accepts(form: Any, value: Any) -> bool:
    if form is None:
        return value is None
    if form is bool:
        return isinstance(value, bool)
    if form == "array":
        try:
            return all(isinstance(v, Real) and not isinstance(v, bool) for v in value)
        except TypeError:
            return False
    return form.accepts(value)


class Parameterised:
    """Base for classes configured by keyword parameters (balancers, cost models).

    A class with parameters declares its own keyword-only ``__init__``, which stores them unchanged,
    and their ``_parameter_constraints``; a class without any inherits both from here (no
    parameters, no constraints)."""

    _parameter_constraints: ClassVar[dict[str, list]] = {}

    def __init__(self) -> None:
        """No parameters."""

    @classmethod
    def param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        for p in sig.parameters.values():
            if p.name == "self":
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__} must not take *args or **kwargs")
            names.append(p.name)
        return names

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        sig = inspect.signature(cls.__init__)
        return {n: sig.parameters[n].default for n in cls.param_names()}

    @classmethod
    def check_param_names(cls, params, field: str, owner: str) -> None:
        """Raise ConfigError ``{field}.{name}`` for the first key of *params* that is not a parameter of
        this class (*owner* names the class for the reader, e.g. "'gdem'")."""
        valid = cls.param_names()
        for k in params:
            if k not in valid:
                raise ConfigError(f"{field}.{k}", "<unknown parameter>",
                                  f"a parameter of {owner}: " + (", ".join(valid) or "(it has none)"),
                                  suggest=closest(k, valid))

    def get_params(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.param_names()}

    def set_params(self, **params: Any) -> "Parameterised":
        self.check_param_names(params, "params", repr(getattr(self, "name", "") or type(self).__name__))
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def clone(self) -> "Parameterised":
        """A fresh, unfitted copy with the same parameters (learned state is not copied)."""
        return type(self)(**self.get_params())

    def validate(self) -> None:
        """Raise ConfigError naming the first parameter outside its declared constraints."""
        for name, forms in self._parameter_constraints.items():
            value = getattr(self, name)
            if not any(_accepts(f, value) for f in forms):
                allowed = " or ".join(_describe(f) for f in forms)
                if isinstance(value, Real) and not isinstance(value, bool) and not abs(value) <= MAGNITUDE:
                    allowed += f" (finite, of magnitude at most {MAGNITUDE:.0e}: dlbkit's limit)".replace("e+", "e")
                raise ConfigError(self.param_field(name), value, allowed)

    @classmethod
    def registry_name(cls) -> str:
        return getattr(cls, "name", cls.__name__)

    @classmethod
    def param_field(cls, name: str, index: int | None = None) -> str:
        """How an error names a parameter (or its entry *index*): ``parameter 'name'[index] of
        registry-name``, the same words wherever a parameter is checked."""
        return f"parameter {name!r}{'' if index is None else f'[{index}]'} of {cls.registry_name()}"

    def __repr__(self) -> str:
        defaults = self.param_defaults()
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if v != defaults.get(k)]
        return f"{type(self).__name__}({', '.join(shown)})"
