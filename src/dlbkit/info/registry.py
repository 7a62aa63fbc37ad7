"""Name → information model class; :func:`resolve` turns a name, a table or an object into a model."""

from __future__ import annotations

from typing import Any, Mapping

from dlbkit.errors import ConfigError, closest
from dlbkit.model import check

__all__ = ["register", "names", "resolve", "resolve_for", "INFO_MODELS"]

INFO_MODELS: dict[str, type] = {}


def register(cls: type) -> type:
    if not cls.name or cls.name in INFO_MODELS:
        raise TypeError(f"information model {cls.__name__} needs a new registry name (got {cls.name!r})")
    INFO_MODELS[cls.name] = cls
    return cls


def names() -> list[str]:
    return list(INFO_MODELS)


def resolve(spec: Any, field: str = "info"):
    """An information model from *spec*: None (exact), a registered name, a table ``{"model": name,
    **params}`` (an experiment's ``[info]``), or a model object (validated). A ConfigError names *field*."""
    from dlbkit.info.base import InfoModel
    if spec is None:
        spec = "exact"
    if isinstance(spec, InfoModel):
        spec.validate()
        return spec
    if isinstance(spec, str):
        spec = {"model": spec}
    if not isinstance(spec, Mapping):
        raise ConfigError(field, spec, "an information model name (" + ", ".join(INFO_MODELS) +
                          "), a table with 'model' and its parameters, or an InfoModel")
    params = dict(spec)
    name = params.pop("model", None)
    if not isinstance(name, str) or name not in INFO_MODELS:  # a list or table is no name (nor hashable)
        raise ConfigError(f"{field}.model", name, "an information model: " + ", ".join(INFO_MODELS),
                          suggest=closest(name, INFO_MODELS))
    cls = INFO_MODELS[name]
    cls.check_param_names(params, field, f"the {name!r} model")
    with check.within(field):
        model = cls(**params)
        model.validate()
    return model


def resolve_for(spec: Any, field: str, n_nodes: int):
    """:func:`resolve`, then the model's :meth:`~dlbkit.info.base.InfoModel.check_size` on *n_nodes*
    nodes (a size, or a node index beyond the platform), its errors named under *field* as
    :func:`resolve` names a parameter's (an experiment file asks this before any run)."""
    model = resolve(spec, field)
    try:
        model.check_size(n_nodes)
    except ConfigError as e:
        head = e.field == "info" or e.field.startswith(("info.", "info["))
        raise ConfigError(field + e.field[4:] if head else f"{field} ({e.field})", e.value, e.allowed) from None
    return model
