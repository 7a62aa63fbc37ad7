"""The one exception type users see for bad input."""

from __future__ import annotations

__all__ = ["DlbkitError", "ConfigError"]


class DlbkitError(Exception):
    """Base class of every error dlbkit raises on purpose."""


class ConfigError(DlbkitError, ValueError):
    """Bad input: names the *field*, the offending *value* and what is allowed.

    The CLI prints ``str(err)`` on one line and exits with status 2.
    """

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} must be {allowed}; got {value!r}")
