"""No module outside a family's package compares anything with that family's name, and no module of the shared
core names a family at all: what a family offers is dispatched through the registry (``dlbkit.families``), so a
new family needs no edit of a shared module.

The check reads the source (every ``==``, ``!=``, ``in``, ``not in`` with a family's name as a string constant,
alone or in a literal tuple, list or set); there is none left to allow. The core's check reads every string
constant but docstrings: a family's name, or a dotted path into its package.
"""

from __future__ import annotations

import ast
from collections import Counter

from support import REPO

from dlbkit.families.registry import PACKAGES

SRC = REPO / "src" / "dlbkit"

#: the shared core (below the families and the face)
CORE = ("dlbkit/model/", "dlbkit/balancers/", "dlbkit/info/", "dlbkit/sim/", "dlbkit/runtime/", "dlbkit/plots.py",
        "dlbkit/params.py", "dlbkit/plugins.py", "dlbkit/errors.py")

#: core module → string constants equal to a family's name it still holds, and why
CORE_REMAINING = {
    # "stream" there is the field a ConfigError names, a random stream of a layout, not the job-stream family
    "dlbkit/model/seeding.py": 1,
    # the copyreg extension codes of the frequent message kinds, by module name: the wire protocol's one table,
    # which every process must hold alike whatever it imported (runtime/messages.py's COMPACT says why)
    "dlbkit/runtime/messages.py": 23,
}


def _names_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in PACKAGES else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for elt in node.elts for n in _names_in(elt)]
    return []


def family_comparisons(source: str) -> list[tuple[int, str]]:
    """(line, family name) of every comparison in *source* that has a family's name on one side."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
                                                 for op in node.ops):
            for side in (node.left, *node.comparators):
                out += [(node.lineno, name) for name in _names_in(side)]
    return out


def _owner(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[2] if len(parts) > 3 and parts[1] == "families" and parts[2] in PACKAGES else None


def test_no_module_compares_with_another_familys_name():
    where: dict[str, list] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).as_posix()
        hits = [(line, name) for line, name in family_comparisons(path.read_text(encoding="utf-8"))
                if name != _owner(rel)]
        if hits:
            where[rel] = hits
    assert where == {}


def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def family_constants(source: str) -> list[tuple[int, str]]:
    """(line, family name) of every string constant in *source* that is a family's name or names a module of its
    package (``"dlbkit.families.tree.runtime.messages"``); docstrings, which may mention one, are not read."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if node.value in PACKAGES:
                out.append((node.lineno, node.value))
            else:
                out += [(node.lineno, name) for name in PACKAGES if f"dlbkit.families.{name}" in node.value]
    return out


def test_no_core_module_names_a_family():
    found: Counter = Counter()
    where: dict[str, list] = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).as_posix()
        if not rel.startswith(CORE):
            continue
        hits = family_constants(path.read_text(encoding="utf-8"))
        if hits:
            found[rel] = len(hits)
            where[rel] = hits
    assert dict(found) == CORE_REMAINING, {k: where.get(k) for k in set(found) | set(CORE_REMAINING)
                                           if found.get(k) != CORE_REMAINING.get(k)}


def test_the_check_sees_a_comparison_in_every_form():
    src = ('if t.family == "graph": pass\n'
           'x = "stream" != f\n'
           'y = kind in ("tree", "other")\n'
           'z = name not in {"spmd"}\n'
           'w = t.family == "graphs"\n')  # not a family's name
    assert [n for _, n in family_comparisons(src)] == ["graph", "stream", "tree", "spmd"]
    assert _owner("dlbkit/families/graph/face/replay.py") == "graph" and _owner("dlbkit/face/cli.py") is None
    assert [n for _, n in family_constants('"""The tree family."""\nX = {"tree": 1}\nf(kind="spmd")\n')] == ["tree", "spmd"]


def test_the_core_check_sees_a_name_and_a_module_path_but_not_a_docstring():
    src = ('"""The tree family\'s module is dlbkit.families.tree.face.family."""\n'
           'A = "tree"\n'
           'B = ("dlbkit.families.stream.runtime.messages", "Submit")\n'
           'C = "trees"\n')
    assert family_constants(src) == [(2, "tree"), (3, "stream")]
