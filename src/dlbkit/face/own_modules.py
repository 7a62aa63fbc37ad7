"""The user's own modules (``--import``, a balancer of one's own), imported by name or from their file.

A ``.py`` file whose name is that of another module (``json.py``, ``random.py``, a module one of dlbkit's
dependencies brings) is executed under a private name, so that neither this process nor a worker it
starts takes it for that module. A forked worker inherits it; a spawned or forkserver worker, or a Dask
worker, cannot find the private name on its path, and loads the file again: :func:`import_own`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["PRIVATE_PREFIX", "import_file", "import_own"]

#: the prefix of the name a .py file is executed under when its own name is another module's
PRIVATE_PREFIX = "_dlbkit_run_"


def import_file(name: str, path: str | Path) -> ModuleType:
    """Execute the .py file *path* as the module *name*, registered in ``sys.modules`` (and removed again
    if executing it raises, so that a second attempt runs it again)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def import_own(name: str, file: str | None = None) -> ModuleType:
    """The module *name*, imported once; when no module of that name can be found and *file* is given
    (the file a private name was executed from), the file executed under *name*."""
    if name in sys.modules:
        return sys.modules[name]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        # a private name from a dotted stem (my.bal.py: _dlbkit_run_my.bal) is missed at its first part
        if file is None or not (e.name == name or name.startswith(f"{e.name}.")):
            raise
    return import_file(name, file)
