"""Every repository file that the docs, docstrings and tests point to exists: a pointer to a
``docs`` page that never existed stood in a docstring and a test until a read found it."""

import re
from pathlib import Path

from support import REPO

ROOT = REPO
# a path of this repository (not the tail of a longer one, such as ../shared/benchmarks/MODELS.md)
POINTER = re.compile(r"(?<![\w./])((?:docs|tests|benchmarks|examples)/[A-Za-z0-9_.-]+\.(?:md|py|toml|out))")
#: pointers that are not meant to lead anywhere: a pattern, and test data of plain_text's stripping
NOT_POINTERS = {"examples/NAME.py", "examples/NAME.out", "benchmarks/MODELS.md"}


def _texts():
    for folder in ("src", "docs", "tests", "benchmarks", "examples"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".md", ".toml") and path.is_file():
                yield path
    yield ROOT / "README.md"
    yield ROOT / "BENCHMARKS.md"


def test_every_file_pointed_to_exists():
    missing = {}
    for path in _texts():
        for target in POINTER.findall(path.read_text(encoding="utf-8")):
            if target not in NOT_POINTERS and not (ROOT / target).is_file():
                missing.setdefault(target, []).append(str(path.relative_to(ROOT)))
    assert not missing, missing


def test_nothing_points_outside_the_repository():
    """The project's notes and reference models live outside the repository (``../shared``); a user
    has only the repository, so the docs cite the documents themselves (and docs/reference-models.md)."""
    outside = [str(path.relative_to(ROOT)) for path in _texts()
               if path.name != Path(__file__).name and "../shared" in path.read_text(encoding="utf-8")]
    assert not outside, outside
