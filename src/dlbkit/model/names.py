"""Names of things as file names."""

from __future__ import annotations

import re

__all__ = ["slug"]


def slug(text: str) -> str:
    """A file-name-safe form of a label or grid point: each run of other characters than letters,
    digits, ``.``, ``_`` and ``-`` becomes one ``-`` (so ``"A B"`` and ``"A-B"`` are one name)."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")
    return s or "x"
