"""Registries that are complete when read: the built-in entries are found on first use.

The balancer and family registries are filled by the family packages (each registers its balancers
and its :class:`~dlbkit.families.registry.Family` when imported), and the shared core below them must
not import them. So a registry is a dict that, on its first read, imports the module that completes
it (``dlbkit.families``, which imports every family package it lists) — plugin discovery, as Python
packages find their plugins through entry points. Until then ``import dlbkit`` and the core stay light:
a script that needs one engine loads one family.

Writes (``register``) never trigger discovery, so a family registering itself while discovery imports
it does not recurse; reads during discovery see what is registered so far.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

__all__ = ["Registry"]


class Registry(dict):
    """A dict whose first read imports *complete* (a module name) and calls its *hook* (``discover()``).

    *order* (optional) is called with the registry once discovery is done and returns the keys in the
    order the registry should list them (a family listing follows its package list, not which family
    happened to be imported first)."""

    def __init__(self, complete: str, order: Callable[["Registry"], list] | None = None, hook: str = "discover"):
        super().__init__()
        self._complete = complete
        self._hook = hook
        self._order = order
        self._state = "empty"  # -> "discovering" -> "complete"
        self._ordered = True

    def discover(self) -> None:
        """Import the module that completes the registry (once), then put the entries in order."""
        if self._state == "empty":
            self._state = "discovering"
            try:
                getattr(importlib.import_module(self._complete), self._hook)()
            except BaseException:
                self._state = "empty"
                raise
            self._state = "complete"
        if self._ordered or self._state != "complete":  # a read during discovery sees the entries as registered
            return
        self._ordered = True  # before the order is asked: an order that reads the registry does not recurse
        if self._order is not None:
            order = self._order(self)
            items = dict(super().items())
            super().clear()
            for k in order:
                super().__setitem__(k, items.pop(k))
            for k, v in items.items():  # entries the order does not know, as registered
                super().__setitem__(k, v)
        self._ordered = True

    _discover = discover

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        self._ordered = False

    # every read completes the registry first
    def __getitem__(self, key: Any) -> Any:
        self._discover()
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._discover()
        return super().__contains__(key)

    def __iter__(self):
        self._discover()
        return super().__iter__()

    def __len__(self) -> int:
        self._discover()
        return super().__len__()

    def get(self, key: Any, default: Any = None) -> Any:
        self._discover()
        return super().get(key, default)

    def keys(self):
        self._discover()
        return super().keys()

    def values(self):
        self._discover()
        return super().values()

    def items(self):
        self._discover()
        return super().items()

    def __repr__(self) -> str:
        self._discover()
        return super().__repr__()

    def raw_get(self, key: Any, default: Any = None) -> Any:
        """The entry under *key* as registered so far, without discovery (for ``register`` itself)."""
        return super().get(key, default)
