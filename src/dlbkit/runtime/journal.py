"""A run's journal: every finished result appended to a file as it arrives, so that a rerun after a
crash (the coordinator killed, a batch system's time limit) computes only what is missing.

File format (binary, append-only)::

    b"dlbkit-journal 1\\n"                      # MAGIC
    frame(header)  frame(entry)  frame(entry) ...

A frame is 4 bytes of payload length and 4 bytes of the payload's CRC-32 (both big-endian), then the
payload, a pickle. The header is ``{"function": "module.qualname", "units": N, "fingerprint": hex}``;
an entry is ``(indices, values)``, the results of the units at those indices (a map's chunk). A stream
of units not known ahead has ``units`` None and a ``kind``, the word for its entries, which its family
keys: ``"jobs"`` (a Cluster's, each keyed by its own fingerprint instead of an index: :func:`stream_key`),
``"steps"`` (a Loop's, each result keyed ``(step, index)``, each step's items by an entry
``("step", k) → (count, fingerprint)``), ``"snapshots"`` (a tree's, the fingerprint of its root and
arguments in the header). Each
entry is written with one ``write`` and flushed, so a killed process leaves at most its last frame
torn: a short frame, a wrong CRC or a payload that does not unpickle ends the journal there, and the
file is cut back to its last whole frame when it is opened again. (Flushed, not fsynced: a crash of
the process loses nothing, a crash of the machine may lose the last entries, which are recomputed.)

The header names the function and the units' fingerprint (SHA-256 of each unit pickled): a rerun
with another function or other units is refused, naming both, rather than mixing two runs' results.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import struct
import zlib
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from dlbkit.errors import ConfigError

__all__ = ["Journal", "MAGIC", "entries", "fingerprint", "function_name", "stream_key"]

MAGIC = b"dlbkit-journal 1\n"
_FRAME = struct.Struct(">II")  # payload length, CRC-32 of the payload


def function_name(fn: Callable) -> str:
    """``module.qualname`` of *fn* (its type's for a callable object; a ``functools.partial``'s
    function's, with its arguments' repr): what a journal's header names."""
    if isinstance(fn, functools.partial):
        args = ", ".join([repr(a) for a in fn.args] + [f"{k}={v!r}" for k, v in fn.keywords.items()])
        return f"partial({function_name(fn.func)}, {args})"
    target = fn if hasattr(fn, "__qualname__") else type(fn)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', repr(target))}"


def fingerprint(units: Iterable[Any]) -> str:
    """SHA-256 of every unit pickled, in order (a ConfigError for a unit that cannot be pickled)."""
    h = hashlib.sha256()
    for k, u in enumerate(units):
        try:
            data = pickle.dumps(u, protocol=4)
        except Exception as e:  # noqa: BLE001 - any failure to pickle is the answer
            raise ConfigError(f"items[{k}]", type(u).__name__, f"picklable with journal= (the journal "
                              f"fingerprints the items to know a rerun's from another run's): {e}") from None
        h.update(_FRAME.pack(len(data), 0))
        h.update(data)
    return h.hexdigest()


def stream_key(payload: bytes, seen: dict[str, int]) -> tuple[str, int]:
    """The key of a stream's unit pickled as *payload*: its SHA-256 and how many equal units came before
    it (*seen*, updated), so that a rerun's k-th submission of the same job gets the k-th one's result
    whatever order the jobs come in."""
    digest = hashlib.sha256(payload).hexdigest()
    k = seen.get(digest, 0)
    seen[digest] = k + 1
    return digest, k


def _frame(obj: Any) -> bytes:
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


class Journal:
    """The journal at *path* of a run of *function* over *units* units of *fingerprint*: opened (its
    entries read into :attr:`done`, index → value, a torn last frame cut off: :attr:`dropped` bytes)
    or created, then appended to with :meth:`append`. *units* and *fingerprint* None: the journal of units
    not known ahead, of *kind* (see the module)."""

    def __init__(self, path: str | Path, *, function: str, units: int | None, fingerprint: str | None,
                 kind: str = "items"):
        if not isinstance(path, (str, Path)):
            raise ConfigError("journal", path, "a file path (str or Path) or None")
        self.path = Path(path)
        self.header = {"function": function, "units": None if units is None else int(units), "fingerprint": fingerprint}
        if kind != "items":  # a map's or a graph's header has no kind (as before there were others)
            self.header["kind"] = kind
        self.done: dict[int, Any] = {}
        self.dropped = 0
        if self.path.is_dir() or not self.path.parent.is_dir():
            raise ConfigError("journal", str(path), "a file in an existing directory")
        good = self._read() if self.path.exists() and self.path.stat().st_size else None
        if good is None:  # new (or empty): the magic and the header
            self._file = open(self.path, "wb")
            self._file.write(MAGIC + _frame(self.header))
            self._file.flush()
        else:
            self._file = open(self.path, "r+b")
            self._file.truncate(good)  # a torn last frame, cut off
            self._file.seek(good)
        self.reused = len(self.done)

    def _read(self) -> int | None:
        """Read the entries; the offset after the last whole frame (None: not even the header is whole)."""
        data = self.path.read_bytes()
        if len(data) < len(MAGIC) and MAGIC.startswith(data):
            return None  # killed while the magic itself was written: nothing was journaled
        if not data.startswith(MAGIC):
            raise ConfigError("journal", str(self.path), "a dlbkit journal (this file is not one: a new path, or "
                              "delete it to start again)")
        frames, end = _frames(data, len(MAGIC))
        if not frames:  # the header itself torn: nothing was journaled, it is written again
            return None
        head = frames[0]
        if head != self.header:
            raise ConfigError("journal", str(self.path), f"the journal of this run ({_said(self.header)}); it is "
                              f"of {_said(head)}: a new path, or delete it to start again")
        for indices, values in frames[1:]:
            for i, v in zip(indices, values):
                self.done.setdefault(i, v)  # each result once (an entry is never written twice)
        self.dropped = len(data) - end
        return end

    def append(self, indices: Sequence[int], values: Sequence[Any]) -> None:
        """The results *values* of the units at *indices*, written and flushed as one frame."""
        if len(indices):
            self._file.write(_frame((list(indices), list(values))))
            self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def entries(path: str | Path) -> list[tuple[list, list]]:
    """The entries ``(keys, values)`` of the journal at *path* in the order written, its header left
    out, as opening it would read them (a torn last frame ignored); [] for a file not yet begun."""
    data = Path(path).read_bytes()
    return _frames(data, len(MAGIC))[0][1:] if data.startswith(MAGIC) else []


def _said(h: Any) -> str:
    if not isinstance(h, dict):
        return repr(h)[:80]
    if "kind" in h:  # units not known ahead: the journal of its kind of unit (named by its family)
        of = f" (fingerprint {str(h['fingerprint'])[:12]}…)" if h.get("fingerprint") else ""
        return f"the {h['kind']} of {h.get('function')}{of}"
    return f"{h.get('function')} over {h.get('units')} units of fingerprint {str(h.get('fingerprint'))[:12]}…"


def _frames(data: bytes, pos: int) -> tuple[list, int]:
    """The whole frames of *data* from *pos*, and the offset after the last one."""
    out = []
    n = len(data)
    while pos + _FRAME.size <= n:
        length, crc = _FRAME.unpack_from(data, pos)
        start, end = pos + _FRAME.size, pos + _FRAME.size + length
        if end > n:
            break
        payload = data[start:end]
        if zlib.crc32(payload) != crc:
            break
        try:
            out.append(pickle.loads(payload))
        except Exception:  # noqa: BLE001 - a payload that does not unpickle ends the journal too
            break
        pos = end
    return out, pos
