"""What dlbkit reads from a file (``dlbkit describe FILE``): the kind that claims it and its facts.

The kinds are the core's platform files (:data:`PLATFORM_FILES`: dlbkit's TOML and SimGrid's XML, read by
:meth:`Platform.read <dlbkit.model.platform.Platform.read>`) and every registered family's ``Family.files``,
in the registry's order: :func:`kinds`. :func:`describe` tries those whose suffixes match the file's, in that
order, until one describes it (a kind may pass on a file of its suffix that is not its own by content).
"""

from __future__ import annotations

from pathlib import Path

from dlbkit.errors import ConfigError
from dlbkit.model.description import Description, FileKind

__all__ = ["PLATFORM_FILES", "describe", "kinds"]

#: the keys of an experiment file's top level that a platform file has not (an experiment is no platform)
_EXPERIMENT_KEYS = ("workload", "balancers", "platform", "repetitions")


def _toml(path: Path) -> Description | None:
    """A platform TOML file; None for a TOML file that is an experiment (``dlbkit simulate`` runs those)."""
    from dlbkit.model.platform import Platform, load_toml
    from dlbkit.model.platform_facts import platform_facts

    doc = load_toml(path)  # a syntax error is this reader's to name
    if "nodes" not in doc and any(k in doc for k in _EXPERIMENT_KEYS):
        return None
    p = Platform.read(path)
    return Description(str(path), "platform (dlbkit TOML)", "Platform.read", platform_facts(p))


def _xml(path: Path) -> Description | None:
    """A SimGrid platform file: speeds in flop/s as the file gives them (dlbkit's work units times the default
    speed unit, :data:`~dlbkit.model.simgrid.DEFAULT_SPEED_UNIT`); None for an ``.xml`` whose root is another
    element (a Pegasus DAX's ``<adag>``: the graph family's)."""
    from dlbkit.model import safexml, simgrid
    from dlbkit.model.platform import Platform
    from dlbkit.model.platform_facts import platform_facts

    if safexml.root_name(path) not in (None, "platform"):  # None: not XML up to its root, Platform.read says so
        return None

    p = Platform.read(path)
    return Description(str(path), "platform (SimGrid XML)", "Platform.read",
                       platform_facts(p, speed_scale=simgrid.DEFAULT_SPEED_UNIT, speed_unit="flop/s"))


#: the platform files, which belong to no family
PLATFORM_FILES = (FileKind("platform (dlbkit TOML)", (".toml",), _toml),
                  FileKind("platform (SimGrid XML)", (".xml",), _xml))


def kinds() -> list[FileKind]:
    """Every kind of file dlbkit describes: the platform files, then each registered family's."""
    from dlbkit.families.registry import FAMILIES

    return [*PLATFORM_FILES, *(k for fam in FAMILIES.values() for k in fam.files)]


def describe(path: str | Path) -> Description:
    """What dlbkit reads from the file *path*. A missing file is a ConfigError naming it, one no kind claims a
    ConfigError listing the kinds; a file a kind claims but its reader refuses, the reader's ConfigError."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError("file", str(p), "an existing file (a workload or a platform)")
    known = kinds()
    for kind in known:
        if kind.matches(p):
            d = kind.describe(p)
            if d is not None:
                return d
    raise ConfigError("file", str(p), "a file of a kind dlbkit reads: " + "; ".join(k.listed for k in known))
