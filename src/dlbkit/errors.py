"""The one exception type users see for bad input."""

from __future__ import annotations

from typing import Any

__all__ = ["DlbkitError", "ConfigError", "TaskError", "RemoteTraceback", "DlbkitWarning"]


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


class RemoteTraceback(Exception):
    """Carries the text of a traceback from another process (set as ``__cause__`` of TaskError)."""

    def __init__(self, text: str):
        self.text = text
        super().__init__(text)

    def __str__(self) -> str:
        return f'\nTraceback in the worker:\n"""\n{self.text.rstrip()}\n"""'


class TaskError(DlbkitError):
    """The user's function raised on item *index* in a worker; the original exception is the
    ``__cause__`` (or its traceback text, if it could not be pickled). *what* names the kind of unit
    that failed (``"item"`` for a map, ``"task"`` for a graph, whose *index* is the task's key, and
    for a tree, whose *index* is the task's repr; a tree's ``"value"``, ``"bound"`` or ``"combine"``,
    whose *index* is the worker's). *label* is how the message names it (default ``item 3``,
    ``task 'b'``): the message is ``"<label> failed: <error>"``, and :attr:`label` keeps it."""

    def __init__(self, index: Any, error: str, remote_traceback: str, *, what: str = "item",
                 label: str | None = None):
        self.index = index
        self.what = what
        self.remote_traceback = remote_traceback
        self.label = label if label is not None else f"item {index}" if what == "item" else f"{what} {index!r}"
        # the traceback text is shown once, through the __cause__ chain, as concurrent.futures does
        super().__init__(f"{self.label} failed: {error}")


class DlbkitWarning(UserWarning):
    """A run goes on, but something about it deserves a word (e.g. more local workers than CPUs:
    measured efficiency then describes time-sharing). The CLI prints it as one line,
    ``dlbkit: warning: <message>``."""
