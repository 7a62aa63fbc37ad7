"""What dlbkit reads from a file, as facts (``dlbkit describe FILE``): a :class:`Description` of one file,
made by the :class:`FileKind` that claims it.

A kind of file is declared where its reader lives: the platform files by the face's core
(:mod:`dlbkit.face.describe`), a family's workload files by its declaration (``Family.files``). The command
tries the kinds whose suffixes match the file's; a kind's *describe* may still return None for a file of its
suffix that is not its own by content (a ``.json`` that is no task graph), and the next kind is tried.

A :class:`Fact` holds its value in the unit it names (seconds, bytes, bytes/s, flop/s, MHz, or words such as
``"s at speed 1"``); the command line prints it with that unit (bytes with decimal prefixes), ``--json``
prints the value as it is, with the units beside.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["RESERVED", "Description", "Fact", "FileKind"]

#: the keys of :meth:`Description.as_dict` that are not facts
RESERVED = ("file", "kind", "reader", "units")


@dataclass(frozen=True)
class Fact:
    """One thing read from a file: *key* (its JSON key), *label* (its line in the text, saying how it was
    worked out where that is a choice), *value* (a number, a string, a list of them, or None), *unit* (what
    the value counts; empty for a count or a name) and *none* (what the text says for a None value)."""

    key: str
    label: str
    value: Any
    unit: str = ""
    none: str = "none"


@dataclass(frozen=True)
class Description:
    """What dlbkit reads from the file *path*: its *kind* ("task graph (WfFormat 1.5)"), the *reader* that
    read it (``TaskGraph.read``) and the *facts*, in the order they are printed."""

    path: str
    kind: str
    reader: str
    facts: tuple[Fact, ...]

    def __post_init__(self):
        keys = [f.key for f in self.facts]
        clash = sorted({k for k in keys if keys.count(k) > 1} | (set(keys) & set(RESERVED)))
        if clash:  # a programming error of the kind that made it, not the user's
            raise TypeError(f"description of {self.path}: fact keys {clash} repeat or are reserved {RESERVED}")

    def as_dict(self) -> dict:
        """One JSON object: ``file``, ``kind``, ``reader``, each fact's value by its key, and ``units`` (key →
        unit, for the facts that have one)."""
        out: dict = {"file": self.path, "kind": self.kind, "reader": self.reader}
        out.update((f.key, f.value) for f in self.facts)
        out["units"] = {f.key: f.unit for f in self.facts if f.unit}
        return out


@dataclass(frozen=True)
class FileKind:
    """A kind of file dlbkit reads: *name* (how an error lists it), *suffixes* (lower case, with the dot) and
    *describe* ``(path)`` → its :class:`Description`, or None for a file of such a suffix that is not of this
    kind by its content; a file of this kind that the reader refuses raises the reader's ConfigError."""

    name: str
    suffixes: tuple[str, ...]
    describe: Callable[[Path], Description | None]

    def __post_init__(self):
        odd = [s for s in self.suffixes if not (s.startswith(".") and s == s.lower())]
        if not self.suffixes or odd:
            raise TypeError(f"file kind {self.name!r}: suffixes must be lower case with their dot (got "
                            f"{list(self.suffixes)})")

    def matches(self, path: Path) -> bool:
        """Whether *path*'s suffix is one of this kind's (any case)."""
        return path.suffix.lower() in self.suffixes

    @property
    def listed(self) -> str:
        """The kind as an error lists it: its name and suffixes."""
        return f"{self.name} ({', '.join(self.suffixes)})"
