"""The one exception type users see for bad input."""

from __future__ import annotations

import difflib
import os
import sys
from typing import Any, Iterable

__all__ = ["DlbkitError", "ConfigError", "closest", "in_dlbkit", "caller_level", "TaskError", "RemoteTraceback", "DlbkitWarning"]


class DlbkitError(Exception):
    """Base class of every error dlbkit raises on purpose."""


def closest(value: Any, names: Iterable) -> str | None:
    """The one of *names* closest to a mistyped *value* (``'gsss'`` → ``'gss'``, ``'sped'`` →
    ``'speed'``), or None when none is close (difflib's ratio ≥ 0.6, case ignored) or *value* is not a
    string. A :class:`ConfigError` says it as ``(did you mean …?)``."""
    if not isinstance(value, str) or not value:
        return None
    by_lower = {str(n).lower(): str(n) for n in names}
    match = difflib.get_close_matches(value.lower(), list(by_lower), n=1, cutoff=0.6)
    return by_lower[match[0]] if match else None


class ConfigError(DlbkitError, ValueError):
    """Bad input: names the *field*, the offending *value* and what is allowed.

    The CLI prints ``str(err)`` on one line and exits with status 2. *suggest*, when given, is the
    allowed name closest to a mistyped one (:func:`closest`), said as
    ``(did you mean 'gss'?)`` at the end.
    """

    def __init__(self, field: str, value: object, allowed: str, *, suggest: str | None = None):
        if suggest is None:
            # a ConfigError re-raised under another field name (``raise ConfigError(f"x ({e.field})",
            # e.value, e.allowed)``, done in many places) keeps the suggestion of the one it handles
            handled = sys.exc_info()[1]
            if isinstance(handled, ConfigError) and handled.value is value and handled.allowed == allowed:
                suggest = handled.suggest
        self.field = field
        self.value = value
        self.allowed = allowed
        self.suggest = suggest
        super().__init__(f"{field} must be {allowed}; got {value!r}"
                         + (f" (did you mean {suggest!r}?)" if suggest is not None else ""))

    def __reduce__(self):
        # Exception's own reduce re-calls __init__ with the message alone: one argument of three. A
        # ConfigError crosses processes (a worker, an executor's sweep) whole, its notes included
        return (_config_error, (self.field, self.value, self.allowed, self.suggest), self.__dict__)


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
    ``task 'b'``): the message is ``"<label> failed: <error>"``, and :attr:`label` keeps it.

    Nothing finished is lost with it: in ``dlbkit.map`` and ``dlbkit.graph`` (on rank 0 under MPI)
    :attr:`results` holds every result the coordinator had when the failure arrived (an item's index,
    or a task's key → its value) and :attr:`trace` the measurements of the part that ran (its
    ``meta["partial"]`` says how far the run got; ``record=`` writes it). Elsewhere ``results`` is
    empty and ``trace`` None."""

    def __init__(self, index: Any, error: str, remote_traceback: str, *, what: str = "item",
                 label: str | None = None):
        self.index = index
        self.error = error
        self.what = what
        self.remote_traceback = remote_traceback
        self.results: dict = {}
        self.trace = None
        self.label = label if label is not None else f"item {index}" if what == "item" else f"{what} {index!r}"
        # the traceback text is shown once, through the __cause__ chain, as concurrent.futures does
        super().__init__(f"{self.label} failed: {error}")

    def __reduce__(self):
        # as ConfigError's: Exception's reduce would lose every argument but the message
        return (_task_error, (self.index, self.error, self.remote_traceback, self.what, self.label), self.__dict__)


class DlbkitWarning(UserWarning):
    """A run goes on, but something about it deserves a word (e.g. more local workers than CPUs:
    measured efficiency then describes time-sharing). The CLI prints it as one line,
    ``dlbkit: warning: <message>``."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__))  # .../dlbkit


def in_dlbkit(filename: str) -> bool:
    """Whether code of *filename* is dlbkit's own (not the user's)."""
    return os.path.abspath(filename).startswith(_PACKAGE + os.sep)


def caller_level() -> int:
    """The ``stacklevel`` that points a :class:`DlbkitWarning` at the first caller outside dlbkit
    (the user's line, however deep in dlbkit the warning is raised)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and in_dlbkit(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level


def _config_error(field, value, allowed, suggest):
    return ConfigError(field, value, allowed, suggest=suggest)


def _task_error(index, error, remote_traceback, what, label):
    return TaskError(index, error, remote_traceback, what=what, label=label)
