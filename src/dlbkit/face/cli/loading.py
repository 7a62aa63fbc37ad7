"""The user's code the command line names: a module (``--import MODULE``, a dotted name or a .py file)
and a function (``MODULE:FUNCTION``, what ``dlbkit run`` and ``dlbkit cluster`` call), each imported
once, a bad name a one-line error."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

from dlbkit.errors import ConfigError, DlbkitError

__all__ = ["load_module", "load_function"]


def load_module(mod_name: str, field: str = "MODULE"):
    """The module *mod_name* (a dotted name importable from the current directory or sys.path, or a
    .py file), imported once; bad names are a ConfigError naming *field*, a module that fails while
    importing a DlbkitError naming it."""
    import importlib
    import os

    from dlbkit.face.own_modules import PRIVATE_PREFIX, import_file

    try:
        if mod_name.endswith(".py") or "/" in mod_name or os.sep in mod_name:
            path = Path(mod_name)
            if not path.is_file() or path.suffix != ".py":
                raise ConfigError(field, mod_name, "an existing .py file or an importable module name")
            folder = str(path.parent.resolve())
            name = path.stem
            known = sys.modules.get(name)
            # this file loaded before, under its name or the private one: once, as `import` does
            loaded = [m for m in (known, sys.modules.get(PRIVATE_PREFIX + name))
                      if m is not None and _same_file(getattr(m, "__file__", None), path)]
            if loaded:
                module = loaded[0]
            else:
                # a file named like another module (json.py; a module a dependency brings): that module
                # stays what its name imports, here and in every worker, and the file runs under a
                # private name that spawned workers load from the file (dlbkit.face.own_modules)
                clash = known is not None or _found_elsewhere(name, path)
                if folder not in sys.path:  # its sibling modules import; first, as `python FILE` has it,
                    # unless that would shadow the module of the same name in a spawned worker
                    sys.path.insert(len(sys.path) if clash else 0, folder)
                module = import_file(PRIVATE_PREFIX + name if clash else name, path)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            try:
                module = importlib.import_module(mod_name)
            except ModuleNotFoundError as e:
                if e.name and (mod_name == e.name or mod_name.startswith(e.name + ".")):
                    raise ConfigError(field, mod_name, "a module importable from the current directory or "
                                      "sys.path, or a .py file") from None
                raise
    except DlbkitError:
        raise
    except (Exception, SystemExit) as e:  # the user's module failed while importing
        raise DlbkitError(f"importing {mod_name} failed: {type(e).__name__}: {e}") from None
    return module


def _same_file(file: str | None, path: Path) -> bool:
    """Whether the module file *file* (None: a module without one) is the file *path*."""
    return file is not None and Path(file).resolve() == path.resolve()


def _found_elsewhere(name: str, path: Path) -> bool:
    """Whether the module name *name* imports something other than the file *path* (or cannot be a
    module name a worker imports at all: a dotted stem)."""
    import importlib.util
    if "." in name:
        return True
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    return spec is not None and not _same_file(spec.origin, path)


def load_function(target: str):
    """The function named by ``MODULE:FUNCTION`` or ``FILE.py:FUNCTION`` (imported as ``python -m`` would:
    the current directory first; a file's own directory first)."""
    mod_name, sep, fn_name = target.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise ConfigError("MODULE:FUNCTION", target,
                          "a module or .py file and a function, separated by ':' (e.g. work:step or work.py:step)")
    module = load_module(mod_name)
    obj: Any = module
    for part in fn_name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if obj is None or not callable(obj):
        funcs = sorted(n for n, v in vars(module).items()
                       if inspect.isfunction(v) and not n.startswith("_") and v.__module__ == module.__name__)
        raise ConfigError("FUNCTION", fn_name, f"a function of {mod_name} ("
                          + (", ".join(funcs) if funcs else "it defines none") + ")")
    return obj
