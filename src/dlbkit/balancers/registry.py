"""Name → balancer class. ``@register`` adds a class; ``make(name, **params)`` builds one."""

from __future__ import annotations

from typing import Any, Mapping

from dlbkit.errors import ConfigError, closest
from dlbkit.plugins import Registry

__all__ = ["register", "get", "make", "names", "resolve", "kind_hint", "other_kind", "REGISTRY"]

#: name → balancer class; the family packages fill it (found on first read, :mod:`dlbkit.plugins`)
REGISTRY: dict[str, type] = Registry("dlbkit.families", hook="discover_balancers")


def register(cls: type) -> type:
    """Add *cls* to :data:`REGISTRY` under ``cls.name`` and return it (a class decorator).

    A class is known by its module and qualified name: a class of the same module and qualified
    name as the one registered replaces it, and the registry keeps the latest. That is a notebook
    cell or a script run again, or a module reloaded, where the edited class is meant to win. A
    class of another name or module may not take a registered name (``TypeError``). Two classes
    of one name and one registry name in one module, such as two cells that both define
    ``class Mine``, cannot be told from one cell run twice, so the second replaces the first too.
    """
    if not cls.name:
        raise TypeError(f"{cls.__name__} needs a registry name")
    if not isinstance(cls.name, str) or cls.name != cls.name.lower():
        # names are looked up lower-cased (get, resolve): a capital would register a name no lookup finds
        raise TypeError(f"{cls.__name__}'s registry name {cls.name!r} must be lower case "
                        f"(names are looked up case-insensitively)")
    if not cls.__module__.startswith("dlbkit."):
        REGISTRY.discover()  # the user's class meets the built-in ones first, whatever was imported before
    known = REGISTRY.raw_get(cls.name)
    # the same class defined again (a notebook cell or a script run twice, a module reloaded) replaces
    # itself; another class may not take a name
    same = known is not None and (known.__module__, known.__qualname__) == (cls.__module__, cls.__qualname__)
    if known is not None and known is not cls and not same:
        raise TypeError(f"balancer name {cls.name!r} is taken by {known.__name__}")
    REGISTRY[cls.name] = cls
    return cls


def names(kind: str | None = None) -> list[str]:
    return sorted(n for n, c in REGISTRY.items() if kind is None or c.kind == kind)


def get(name: str, field: str = "balancer") -> type:
    key = name.lower() if isinstance(name, str) else name
    if key not in REGISTRY:
        raise ConfigError(field, name, "a registered balancer: " + ", ".join(names()), suggest=closest(name, names()))
    return REGISTRY[key]


def make(name: str, params: dict[str, Any] | None = None, field: str = "balancer"):
    """Build and validate the balancer *name* with *params*; unknown parameters are named."""
    cls = get(name, field)
    if params is not None and not isinstance(params, Mapping):
        raise ConfigError("params", params, "a dict of parameter names to values, or None")
    params = dict(params or {})
    cls.check_param_names(params, "params", repr(cls.name))
    b = cls(**params)
    b.validate()
    return b


def kind_hint(kinds: tuple[str, ...]) -> str:
    """What a field that takes balancers of *kinds* says it takes, e.g. "a chunking balancer (dlbkit
    balancers --kind chunking)": each kind as its balancers name it (``Balancer.kind_noun``, else "a <kind>
    balancer"), with the listing of them when some are registered."""
    out = []
    for k in kinds:
        of_kind = [cls for cls in REGISTRY.values() if cls.kind == k]
        noun = next((cls.kind_noun for cls in of_kind if cls.kind_noun), f"a {k} balancer")
        out.append(f"{noun} (dlbkit balancers --kind {k})" if of_kind else noun)
    return " or ".join(out)


def resolve(balancer: Any, params: dict[str, Any] | None = None, *, kind: str | tuple[str, ...] | None = None,
            allow_none: bool = False, field: str = "balancer"):
    """The one way a name or an object becomes a validated balancer, for every engine and the API.

    *balancer* is a registered name (built with *params*) or a balancer object (cloned with *params*
    when given, so the caller's object is never changed; validated either way). With *kind*, the
    result must be of that kind. With *allow_none*, None or ``"none"`` mean "no balancing" and give
    None (then *params* must be empty). *kind* may be a tuple of kinds (any of them). Anything else
    raises :class:`~dlbkit.errors.ConfigError` naming *field*.
    """
    from dlbkit.balancers.base import Balancer  # base imports nothing from here; the import is local to keep it so
    if params is not None and not isinstance(params, Mapping):
        raise ConfigError("params", params, "a dict of parameter names to values, or None")
    kinds = (kind,) if isinstance(kind, str) else tuple(kind or ())
    hint = kind_hint(kinds) if kinds else "a registered balancer name or a Balancer object"
    if balancer is None or (allow_none and isinstance(balancer, str) and balancer.lower() == "none"):
        if not allow_none:
            raise ConfigError(field, balancer, hint)
        if params:
            raise ConfigError("params", dict(params), f"none when {field} is None or 'none' (no balancing)")
        return None
    if isinstance(balancer, str):
        cls = REGISTRY.get(balancer.lower())
        if kinds and (cls is None or cls.kind not in kinds):  # a typo and a wrong kind: one message, what fits
            fits = [n for k in kinds for n in names(k)] + (["none"] if allow_none else [])
            # a balancer of another kind is named for what it is, not "corrected" to a near name that fits
            raise ConfigError(field, balancer, _kind_choices(hint, kinds, allow_none, balancer),
                              suggest=None if cls is not None else closest(balancer, fits))
        b = make(balancer, dict(params or {}), field)
    elif isinstance(balancer, Balancer):
        b = balancer.clone().set_params(**dict(params)) if params else balancer
        b.validate()
    elif isinstance(balancer, type) and issubclass(balancer, Balancer):
        if kinds and balancer.kind not in kinds:  # the class would not do as an object either: what fits
            raise ConfigError(field, balancer, _kind_choices(hint, kinds, allow_none, balancer))
        if not balancer.name:  # a base class (ChunkingBalancer): neither a name nor an instance of it works
            raise ConfigError(field, balancer, f"{hint}: a registered subclass's name or an instance of it, "
                              f"not the base class {balancer.__name__}")
        # the class for an object: say what to pass instead
        raise ConfigError(field, balancer, f"{hint}: its name ({balancer.name!r}) or an instance "
                          f"({balancer.__name__}()), not the class")
    else:
        raise ConfigError(field, balancer, hint + (", or None" if allow_none else ""))
    if kinds and b.kind not in kinds:
        raise ConfigError(field, b.name, _kind_choices(hint, kinds, allow_none, b))
    return b


def _kind_choices(hint: str, kinds: tuple[str, ...], allow_none: bool, given: Any = None) -> str:
    """What a *field* of these *kinds* allows: the hint and every registered name of those kinds, and
    what the balancer named *given* is, if it is one of another kind."""
    return (hint + ": " + ", ".join([n for k in kinds for n in names(k)] + (["none"] if allow_none else []))
            + other_kind(given, kinds))


def other_kind(given: Any, kinds: tuple[str, ...]) -> str:
    """``"; 'pd' is an online mapping balancer (…): it places …"`` for a balancer of a kind not in
    *kinds* (a user who knows the name but not where it runs), else ``""``. *given*: a registered name,
    or a balancer class or object (its own kind, registered or not)."""
    if isinstance(given, str):
        cls = REGISTRY.get(given.lower())
    else:
        cls = given if isinstance(given, type) else type(given)
        if not getattr(cls, "kind", "") or not getattr(cls, "name", ""):
            return ""
    if cls is None or cls.kind in kinds:
        return ""
    return f"; {cls.name!r} is {kind_hint((cls.kind,))}" + (f": {cls.kind_use}" if cls.kind_use else "")
