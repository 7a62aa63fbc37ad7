"""What a sweep's figure was drawn from, as a digest kept inside the PNG itself.

A resumed sweep redraws a figure only when its digest differs from the one its PNG carries. The
digest covers everything the picture depends on: the data it draws (a run's repetition-0
:class:`~dlbkit.model.trace.Trace`, field by field and array by array; for a bar chart, the
summary entries of its metric), what names the picture (kind, label, grid point, dpi), and the
code that draws it (dlbkit's and matplotlib's versions and the bytes of the modules that draw, so
an edited checkout with an unchanged version number still redraws). A run re-done or added gives
a trace, and so a digest, of its own; a deleted PNG, or one written before digests existed, has
none. Keeping the digest in the PNG's own ``tEXt`` chunk (not in a file beside it) means it cannot
outlive or miss its picture.
"""

from __future__ import annotations

import array
import dataclasses
import hashlib
import pickle
import sys
from pathlib import Path
from typing import Any, Iterable

import numpy as np

__all__ = ["DIGEST_KEY", "KINDS_KEY", "NAME_KEY", "digest", "code_digest", "png_text"]

#: the PNG text keywords: the figure's digest, (run figures) the kinds its run drew, and the name of
#: the file dlbkit wrote it as (a copy under another name is the user's: never removed as stale)
DIGEST_KEY = "dlbkit-digest"
KINDS_KEY = "dlbkit-figures"
NAME_KEY = "dlbkit-file"


def _feed(h: Any, obj: Any) -> None:
    """Feed *obj* to *h* in a form that depends only on its value (not on object identity)."""
    if obj is None or isinstance(obj, (bool, int, str, bytes)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, float):
        h.update(f"f:{obj.hex()};".encode())
    elif isinstance(obj, array.array):
        h.update(f"a:{obj.typecode}:{len(obj)};".encode())
        h.update(obj.tobytes())
    elif isinstance(obj, np.ndarray):
        h.update(f"n:{obj.dtype.str}:{obj.shape};".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif isinstance(obj, np.generic):
        h.update(f"g:{obj.dtype.str}:".encode() + obj.tobytes())
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}:{len(obj)}[".encode())
        for x in obj:
            _feed(h, x)
        h.update(b"]")
    elif isinstance(obj, dict):
        h.update(f"d:{len(obj)}{{".encode())
        for k, v in obj.items():
            _feed(h, k)
            _feed(h, v)
        h.update(b"}")
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(f"dc:{type(obj).__qualname__}(".encode())
        for f in dataclasses.fields(obj):
            h.update(f.name.encode())
            _feed(h, getattr(obj, f.name))
        h.update(b")")
    elif hasattr(obj, "typecodes") and hasattr(obj, "columns"):  # trace.Rows: its typed columns
        h.update(f"r:{obj.typecodes}".encode())
        _feed(h, list(obj.columns))
    else:  # anything else (a recorded view, …) by its pickle: equal bytes, equal value
        h.update(b"p:" + pickle.dumps(obj, protocol=5))


def code_digest(modules: Iterable[str]) -> str:
    """A digest of the drawing code: dlbkit's and matplotlib's versions and the source of *modules*
    (imported module names)."""
    import matplotlib

    from dlbkit import __version__

    h = hashlib.sha256(f"dlbkit {__version__}; matplotlib {matplotlib.__version__};".encode())
    for name in modules:
        path = getattr(sys.modules.get(name), "__file__", None)
        h.update(name.encode() + b"=")
        h.update(Path(path).read_bytes() if path else b"?")
    return h.hexdigest()


def digest(*parts: Any) -> str:
    """The SHA-256 of *parts* fed by value (see :func:`_feed`)."""
    h = hashlib.sha256()
    for p in parts:
        _feed(h, p)
    return h.hexdigest()


def png_text(path: Path) -> dict[str, str]:
    """The text entries of a PNG ({} if *path* is missing or is no image). Pillow (matplotlib's own
    dependency) reads the chunks before the image data without decoding it; matplotlib writes its
    metadata there."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return {k: v for k, v in im.info.items() if isinstance(k, str) and isinstance(v, str)}
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError):  # missing, or not an image
        return {}
