"""Engine options, declared once: one frozen dataclass per simulation engine.

An engine's options are the fields of a subclass of :class:`EngineOptions`, each declared with
:func:`option`: its default, its help text (None: a Python-only keyword, not an experiment file's
``[engine]`` key: an explicit cost array, a progress callback, a recording switch) and its accepted
*form*, in the vocabulary of the balancers' declared parameters (:mod:`dlbkit.params`):
:class:`~dlbkit.params.Interval` (a number in a range), :class:`~dlbkit.params.Options` (one of some
strings), ``bool``, or a function ``(value, field)`` that raises the ConfigError itself. Checks that
need the platform (a master that is one of its nodes, an information model that fits its size) are
the class's :meth:`EngineOptions.check_platform`. From the one declaration follow:

* the experiment schema: :meth:`EngineOptions.help` (key → meaning, what ``dlbkit families`` prints
  and an ``[engine]`` table may set) and :meth:`EngineOptions.check_dict` (the table's values checked,
  with the platform; :meth:`dlbkit.families.registry.Engine.validate` refuses unknown keys first);
* the Python API: the engine function takes ``(platform, workload, balancer, *, seed, options=None,
  **kwargs)`` and turns its keywords into the object in one place, :meth:`EngineOptions.of`;
  :meth:`EngineOptions.names` are the keywords :func:`dlbkit.simulate` passes through
  (``Engine.api_options``).

The form checks say what :mod:`dlbkit.model.check` says (``engine.warmup must be a number in [0, 1);
got 1.5``), so a value is refused in the same words from an experiment file, :func:`dlbkit.simulate`
or a direct call; only a value that differs from the default is checked (defaults pass their own
check: ``tests/families/test_engine_options.py``), so building the object costs a run next to nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral
from typing import Any, ClassVar, Mapping

from dlbkit.errors import ConfigError
from dlbkit.model import check
from dlbkit.params import Interval, Options

__all__ = ["EngineOptions", "option", "Interval", "Options", "check_form"]

_META = "dlbkit.option"


@dataclass(frozen=True)
class _Spec:
    help: str | None  #: None: a Python-only keyword (not an experiment file's key)
    form: Any  #: Interval, Options, bool, a function (value, field) or None (not checked here)


def option(default: Any, help: str | None = None, form: Any = None) -> Any:
    """A field of an :class:`EngineOptions`: *default*, *help* (the meaning an experiment file's
    ``[engine]`` key has; None: a Python-only keyword) and the accepted *form* (module docstring)."""
    return dataclasses.field(default=default, metadata={_META: _Spec(help, form)})


def check_form(form: Any, value: Any, field: str) -> None:
    """Raise the ConfigError naming *field* unless *value* has *form*."""
    if form is None:
        return
    if form is bool:
        if not isinstance(value, bool):
            raise ConfigError(field, value, "true or false")
    elif isinstance(form, Interval):
        if form.kind is Integral:
            check.integer(value, field, lo=form.left, hi=form.right)
        else:
            check.number(value, field, lo=form.left, hi=form.right, lo_open=form.closed in ("right", "neither"),
                         hi_open=form.closed in ("left", "neither"))
    elif isinstance(form, Options):
        check.choice(value, field, form.values)
    else:
        form(value, field)


def _same(value: Any, default: Any) -> bool:
    """*value* is the default (which passes its check): nothing to check."""
    if value is default:
        return True
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # an array compared element-wise
        return False


@dataclass(frozen=True)
class EngineOptions:
    """Base of an engine's options (module docstring). A subclass is a frozen dataclass whose fields are
    :func:`option` s, in the order the engine documents them; it may override :meth:`check_platform`.
    *PATH* names a directly called engine's options in its errors (``engine.mechanism``; ``""`` for an
    engine whose errors name the bare keyword, as the tree engine's do)."""

    PATH: ClassVar[str] = "engine"
    #: per subclass, built on first use: (name, default, form, help) of each field, in order
    _table: ClassVar[tuple] = ()
    _default: ClassVar[Any] = None

    def __post_init__(self) -> None:
        path = self.PATH
        for name, default, form, _ in self.fields():
            if form is not None:
                v = getattr(self, name)
                if not _same(v, default):
                    check_form(form, v, f"{path}.{name}" if path else name)

    # --- the declaration, read -------------------------------------------------------------------
    @classmethod
    def fields(cls) -> tuple:
        """(name, default, form, help) of every option, in declaration order."""
        table = cls.__dict__.get("_table")
        if not table:
            table = tuple((f.name, f.default, f.metadata[_META].form, f.metadata[_META].help)
                          for f in dataclasses.fields(cls))
            cls._table = table
        return table

    @classmethod
    def names(cls) -> list[str]:
        """Every option's keyword (the Python API: what :func:`dlbkit.simulate` passes through)."""
        return [f[0] for f in cls.fields()]

    @classmethod
    def help(cls) -> dict[str, str]:
        """The experiment file's ``[engine]`` keys and their meaning (the Python-only keywords left out)."""
        return {name: text for name, _, _, text in cls.fields() if text is not None}

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {f[0]: f[1] for f in cls.fields()}

    # --- the Python API ----------------------------------------------------------------------------
    @classmethod
    def of(cls, options: Any = None, kwargs: Mapping[str, Any] | None = None, engine: str = "the engine"):
        """The options of one call of an engine: *options* (an instance, or None: the defaults) with the
        call's keyword *kwargs* over it, each checked. A keyword that is no option is a TypeError, as
        for any function (*engine* names the function in it)."""
        if options is not None and not isinstance(options, cls):
            raise ConfigError("options", type(options).__name__, f"a {cls.__name__} (or None: keywords)")
        if not kwargs:
            if options is not None:
                return options
            base = cls.__dict__.get("_default")
            if base is None:
                base = cls()
                cls._default = base
            return base
        known = cls.defaults()
        for k in kwargs:
            if k not in known:
                raise TypeError(f"{engine}() got an unexpected keyword argument {k!r}; its options: "
                                + ", ".join(known))
        return dataclasses.replace(options, **kwargs) if options is not None else cls(**kwargs)

    def changed(self) -> dict[str, Any]:
        """The options that differ from their defaults."""
        return {n: getattr(self, n) for n, d, _, _ in self.fields() if not _same(getattr(self, n), d)}

    # --- the experiment schema ---------------------------------------------------------------------
    @classmethod
    def check_dict(cls, d: Mapping, platform: Any, path: str = "engine") -> None:
        """An ``[engine]`` table's options (its keys known ones) checked as the engine will: each
        value's form, then :meth:`check_platform` of the options with the others at their defaults;
        a ConfigError names ``path.key``."""
        for name, default, form, _ in cls.fields():
            if name in d and form is not None:
                check_form(form, d[name], f"{path}.{name}")
        values = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        made = object.__new__(cls)  # checked above: not again
        for name, default, _, _ in cls.fields():
            object.__setattr__(made, name, values.get(name, default))
        made.check_platform(platform, path)

    def check_platform(self, platform: Any, path: str) -> None:
        """Checks that need the platform (a ConfigError naming ``path.key``); none by default. Called
        for an experiment file and :func:`dlbkit.simulate` (a directly called engine checks them as it
        starts, in its own words)."""

