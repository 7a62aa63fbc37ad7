"""Importing dlbkit registers every balancer and every information model that the package's modules
define. A module that its package's ``__init__`` forgets to import registers nothing, silently (the
recipes of docs/design.md, "How to add …", name that import line): here, in a fresh interpreter,
importing every module of the two packages afterwards must register nothing more."""

import json
import subprocess
import sys

import pytest

CODE = """
import importlib, json, pkgutil, sys
import dlbkit
from dlbkit.balancers import REGISTRY
from dlbkit.info import INFO_MODELS
package = {"balancers": "dlbkit.balancers", "info": "dlbkit.info"}[sys.argv[1]]
table = REGISTRY if sys.argv[1] == "balancers" else INFO_MODELS
before = sorted(table)
for m in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
    importlib.import_module(m.name)
print(json.dumps([before, sorted(table)]))
"""


@pytest.mark.parametrize("package", ["balancers", "info"])
def test_importing_dlbkit_registers_everything_its_modules_define(package):
    done = subprocess.run([sys.executable, "-c", CODE, package], capture_output=True, text=True, check=True)
    before, after = json.loads(done.stdout)
    assert before and after == before, f"registered only by importing their module: {sorted(set(after) - set(before))}"
