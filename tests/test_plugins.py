"""The registries are complete when read, whatever was imported first (``dlbkit.plugins``): the family packages
fill them, and the first read imports ``dlbkit.families``, which imports every package it lists.

The import-order checks run in a fresh interpreter (this process has read the registries already).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import types

import pytest

from dlbkit.plugins import Registry


def _python(code: str) -> str:
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


@pytest.mark.parametrize("first", ["dlbkit.families.graph.balancers.heft", "dlbkit.families.stream.face.family",
                                   "dlbkit.families.tree.sim.engine", "dlbkit.balancers.registry"])
def test_whatever_is_imported_first_the_registries_are_whole_and_in_the_listing_order(first):
    out = _python(f"""
        import importlib
        importlib.import_module({first!r})
        from dlbkit.balancers.registry import REGISTRY, make
        from dlbkit import families
        first = sorted(REGISTRY)
        listing = families.names()
        import pkgutil
        for m in pkgutil.walk_packages(families.__path__, "dlbkit.families."):  # every module, so every @register
            importlib.import_module(m.name)
        print(first == sorted(REGISTRY), len(first) > 1, make("gss").name, listing == list(families.PACKAGES))
    """)
    assert out.split() == ["True", "True", "gss", "True"]


def test_a_users_balancer_meets_the_built_in_names_even_registered_before_any_read():
    out = _python("""
        from dlbkit.balancers.registry import register
        from dlbkit.families.divisible.balancers.base import ChunkingBalancer

        class Mine(ChunkingBalancer):
            name = "gss"
            def chunk(self, view, node):
                return 1
        try:
            register(Mine)
        except TypeError as e:
            print("refused:", e)
    """)
    assert out.startswith("refused: balancer name 'gss' is taken by Guided")


class _Complete(types.ModuleType):
    """A stand-in for ``dlbkit.families``: its discover() fills the registry under test."""

    def __init__(self, registry_box: list):
        super().__init__("dlbkit_test_complete")
        self.calls = 0
        self.box = registry_box

    def discover(self):
        self.calls += 1
        reg = self.box[0]
        reg["b"] = 2
        assert reg.get("a") == 1 and "b" in reg  # a read during discovery sees what is registered so far
        reg["a"] = 1


def test_the_first_read_discovers_once_and_writes_never_do(monkeypatch):
    box: list = []
    mod = _Complete(box)
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    reg = Registry(mod.__name__, order=lambda r: sorted(r, reverse=True))  # reads the registry: must not recurse
    box.append(reg)
    reg["a"] = 1  # a write: no discovery
    assert mod.calls == 0
    assert list(reg) == ["b", "a"] and mod.calls == 1  # the order given, not the order written
    reg["c"] = 3
    assert reg.get("c") == 3 and len(reg) == 3 and dict(reg.items()) == {"a": 1, "b": 2, "c": 3}
    assert list(reg) == ["c", "b", "a"]  # an entry written after discovery is put in order too
    assert mod.calls == 1


def test_a_failed_discovery_is_tried_again_on_the_next_read(monkeypatch):
    class Failing(types.ModuleType):
        calls = 0

        def discover(self):
            Failing.calls += 1
            if Failing.calls == 1:
                raise ImportError("a family package failed to import")

    monkeypatch.setitem(sys.modules, "dlbkit_test_failing", Failing("dlbkit_test_failing"))
    reg = Registry("dlbkit_test_failing")
    with pytest.raises(ImportError, match="failed to import"):
        len(reg)
    assert len(reg) == 0 and Failing.calls == 2


def test_a_users_family_taking_a_built_in_name_is_refused_at_its_own_registration():
    """Registered before any read (no built-in family imported yet), a family of the user's named like a built-in one
    is refused at its own ``register``, and the registries stay whole."""
    out = _python("""
        import sys
        from dlbkit.families.registry import FAMILIES, Family, register
        assert not any(m.startswith("dlbkit.families.graph") for m in sys.modules)  # nothing discovered yet
        mine = Family(name="graph", summary="mine", source="me", workloads=(int,), view=object, kind="mapping",
                      engines=(), runtime=None, metrics=lambda t: {}, metric_names=(), figures=lambda t, r: {},
                      figure_kinds=(), bar_metrics=(), parse=lambda table, path: None, describe=str)
        try:
            register(mine)
        except TypeError as e:
            print("refused:", e)
        print(sorted(FAMILIES), FAMILIES["graph"].summary != "mine")
    """)
    assert out.splitlines() == ["refused: workload family 'graph' is registered twice",
                                "['divisible', 'graph', 'spmd', 'stream', 'tree'] True"]
