"""The examples in dlbkit's docstrings run and print what they show (a reader copies them first).

Every module of the package whose docstrings hold a ``>>>`` example is found by walking the source,
so a new example is checked without an edit here. (The example of ``Divisible`` printed
``np.float64(10.0)`` under NumPy 2 while it showed ``10.0``.)
"""

import doctest
import importlib

import pytest

from support import REPO

SRC = REPO / "src" / "dlbkit"
MODULES = sorted(
    "dlbkit." + ".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
    for p in SRC.rglob("*.py") if ">>> " in p.read_text(encoding="utf-8"))


def test_the_walk_finds_the_public_examples():
    assert {"dlbkit.families.simulate", "dlbkit.families.divisible.face.run", "dlbkit.families.divisible.model.workload"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run_as_shown(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.attempted > 0 and result.failed == 0, f"{name}: {result.failed} of {result.attempted} failed"
