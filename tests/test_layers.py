"""The layers of src/dlbkit, read from the source (every import, also those inside functions).

* the runtime (``dlbkit.runtime``) imports only ``dlbkit.model``, ``dlbkit.balancers``,
  ``dlbkit.errors``, ``dlbkit.params``, ``dlbkit.plugins`` (the registries the families complete: the
  recording rules of :data:`dlbkit.runtime.record.RECORDINGS`) and itself: never the simulator, the face layer
  (``dlbkit.families.simulate``, ``run_api``, ``replay``, ``cli``, ``plots``), experiments or reproductions;
* no module of the runtime or of the real-run face imports another module's private name;
* no import cycle anywhere (a cycle through imports inside functions counts too).

The lead's import-linter contracts will say the same; this test needs nothing but ``ast``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

SRC = REPO / "src"
PACKAGE = "dlbkit"
RUNTIME_MAY_IMPORT = ("dlbkit.runtime", "dlbkit.model", "dlbkit.balancers", "dlbkit.errors", "dlbkit.params",
                      "dlbkit.plugins")
#: modules whose imports of private names are checked (the runtime and the real-run face)
NO_PRIVATE_IMPORTS = ("dlbkit.runtime", "dlbkit.families.run", "dlbkit.face.replay")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _known(name: str) -> str | None:
    """The dlbkit module *name* denotes (the longest known prefix), or None outside dlbkit."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> list[tuple[str, str | None, int]]:
    """(target module, imported name or None, line) for every import in *module*."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name)
                if target:
                    out.append((target, None, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if _known(base) is None:
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in MODULES:  # ``from . import mpi``: the module itself
                    out.append((sub, None, node.lineno))
                else:
                    out.append((_known(base), alias.name, node.lineno))
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def test_the_runtime_imports_only_the_model_the_balancers_the_errors_the_params_the_plugins_and_itself():
    bad = [f"{m}:{line} imports {t}" for m in GRAPH if _within(m, "dlbkit.runtime")
           for t, _, line in GRAPH[m] if not any(_within(t, p) for p in RUNTIME_MAY_IMPORT)]
    assert not bad, "\n".join(bad)


def test_no_module_of_the_runtime_imports_a_private_name_of_another():
    bad = []
    for m in GRAPH:
        if not any(_within(m, p) for p in NO_PRIVATE_IMPORTS):
            continue
        for t, name, line in GRAPH[m]:
            if name and name.startswith("_") and not name.startswith("__") and t != m:
                bad.append(f"{m}:{line} imports {t}.{name}")
        # ``from . import mpi as _m`` then ``_m._abort(...)``: a private name reached through a module
        tree = ast.parse(MODULES[m].read_text())
        aliases = {}  # names bound to dlbkit modules
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases.update((a.asname or a.name.split(".")[0], a.name) for a in node.names
                               if a.name.startswith(PACKAGE))
            elif isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PACKAGE)):
                aliases.update((a.asname or a.name, a.name) for a in node.names)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{m}:{node.lineno} uses {node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (or a module importing itself)."""
    edges = {m: sorted({t for t, _, _ in GRAPH[m]}) for m in GRAPH}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan, recursive: the graph is small
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_there_is_no_import_cycle():
    cycles = _cycles()
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_checker_sees_what_it_must():
    """The walker itself: it resolves relative imports, finds imports inside functions, and knows the runtime."""
    assert "dlbkit.runtime.backends.mpi" in MODULES and "dlbkit.families.run" in MODULES
    targets = {t for t, _, _ in GRAPH["dlbkit.families.run"]}
    assert "dlbkit.runtime.backends.mpi" in targets  # imported inside a function
    assert "dlbkit.balancers.registry" in {t for t, _, _ in GRAPH["dlbkit.families.divisible.face.run"]}
    assert any(t == "dlbkit.runtime.backends.base" for t, _, _ in GRAPH["dlbkit.families.divisible.runtime.program"])
