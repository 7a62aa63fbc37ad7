"""What ``import dlbkit`` and ``dlbkit --help`` load: the public names are loaded on first use (PEP 562),
so neither imports networkx, scipy or matplotlib, and the registries are complete whatever is read first.

Each check runs in a fresh interpreter (``sys.executable``): this process has imported dlbkit already.
Asserted on ``sys.modules``, never on seconds (a busy machine makes any threshold flaky).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: what neither ``import dlbkit`` nor ``dlbkit --help`` may import (each is needed by some functions only)
HEAVY = ("networkx", "scipy", "matplotlib", "pymetis", "highspy")


def _python(code: str) -> str:
    """Run *code* in a fresh interpreter; its stdout (a failed assertion fails the test with its stderr)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_import_dlbkit_loads_no_heavy_dependency():
    out = _python(f"""
        import sys
        import dlbkit
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
    """)
    assert out.strip() == "[]"


def test_every_public_name_resolves_and_dir_lists_them():
    out = _python("""
        import dlbkit
        for name in dlbkit.__all__:
            getattr(dlbkit, name)
        from dlbkit import simulate, REGISTRY, Platform, run_experiment  # the from-import form too
        assert set(dlbkit.__all__) <= set(dir(dlbkit)), set(dlbkit.__all__) - set(dir(dlbkit))
        print("ok")
    """)
    assert out.strip() == "ok"


def test_registry_right_after_import_has_every_builtin_balancer():
    """``dlbkit.REGISTRY`` read first holds what importing every balancer module registers (each
    balancer registers itself when its module is imported); so do the families and the information
    models."""
    out = _python("""
        import importlib, pkgutil
        import dlbkit
        first = sorted(dlbkit.REGISTRY)
        import dlbkit.balancers, dlbkit.families, dlbkit.info
        registries = {"families": sorted(dlbkit.families.FAMILIES), "info": sorted(dlbkit.info.INFO_MODELS)}
        for package in (dlbkit.balancers, dlbkit.families, dlbkit.info):
            for m in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                importlib.import_module(m.name)
        assert first == sorted(dlbkit.REGISTRY), set(dlbkit.REGISTRY) ^ set(first)
        assert registries == {"families": sorted(dlbkit.families.FAMILIES), "info": sorted(dlbkit.info.INFO_MODELS)}
        print(len(first))
    """)
    assert int(out) > 0


def test_the_public_functions_stay_functions_and_subpackages_are_attributes():
    """``dlbkit.replay``, ``dlbkit.advise``, ``dlbkit.tree`` are the functions, also once the modules defining
    them are imported; the subpackages are reachable as attributes, as when ``import dlbkit`` loaded them all."""
    out = _python("""
        import inspect
        import dlbkit.face.replay, dlbkit.face.advise, dlbkit.families.tree.face.run
        import dlbkit
        assert inspect.isfunction(dlbkit.replay) and inspect.isfunction(dlbkit.advise)
        assert inspect.isfunction(dlbkit.tree) and inspect.isfunction(dlbkit.graph)
        from dlbkit import replay
        assert replay is dlbkit.face.replay.replay and replay.__module__ == "dlbkit.face.replay"
        assert inspect.ismodule(dlbkit.sim) and inspect.ismodule(dlbkit.model.topology)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_help_imports_no_engine_dependency():
    """``python -m dlbkit --help`` itself, its imports listed by ``-X importtime``."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "dlbkit", "--help"], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: dlbkit")
    imported = {line.rpartition("|")[2].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}
    assert "dlbkit.face.cli" in imported  # the listing is the one expected
    assert {m.partition(".")[0] for m in imported} & {"networkx", "scipy", "matplotlib"} == set()
