"""XML from files that come from elsewhere, parsed with ``defusedxml`` (a SimGrid platform, a Pegasus DAX).

One helper, so every XML reader refuses the same things the same way: entity declarations (the
"billion laughs") and external references (XXE) always, and with ``dtd=False`` any ``<!DOCTYPE>`` at
all. Python's expat never fetches an external DTD, so a DOCTYPE naming one (every SimGrid example
names SimGrid's) is harmless and allowed by default. Each failure is one
:class:`~dlbkit.errors.ConfigError` naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlbkit.errors import ConfigError

__all__ = ["parse", "root_name"]


def parse(data: bytes, path: str | Path, what: str, *, dtd: bool = True) -> Any:
    """The root element of XML *data* read from file *path*; *what* says what the file should be (the
    error's "allowed" for bad syntax, e.g. ``"a SimGrid platform in XML"``). With *dtd* False a
    ``<!DOCTYPE>`` is refused too."""
    from xml.etree.ElementTree import ParseError

    import defusedxml
    import defusedxml.ElementTree as DET

    try:
        return DET.fromstring(data, forbid_dtd=not dtd)
    except defusedxml.DefusedXmlException as e:
        refused = "entity declarations or external references" if dtd else \
            "a DOCTYPE, entity declarations or external references"
        raise ConfigError(f"file {path}", type(e).__name__, f"XML without {refused} (refused for safety)") from None
    except ParseError as e:
        raise ConfigError(f"file {path}", f"XML syntax: {e}", what) from None


def root_name(source: str | Path | bytes) -> str | None:
    """The local name of the root element of the XML file *source* (a path, or its bytes: ``platform``,
    ``adag``, its namespace dropped), read up to that element only; None for a file that is not readable XML
    up to there, whose reader then names what is wrong. For the choice between readers of one suffix
    (``.xml``), and to name a file of the wrong kind as that before a check of its own kind (a DOCTYPE)."""
    import io

    import defusedxml
    import defusedxml.ElementTree as DET
    from xml.etree.ElementTree import ParseError

    try:
        with (io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")) as f:
            for _, el in DET.iterparse(f, events=("start",), forbid_dtd=False):
                return el.tag.rpartition("}")[2]
    except (OSError, ParseError, defusedxml.DefusedXmlException):
        return None
    return None
