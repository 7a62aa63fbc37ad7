"""The public API list and its documentation cannot drift apart."""

import inspect
import re
from pathlib import Path

import dlbkit

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_docs_name_exactly_the_public_api():
    text = DOC.read_text()
    documented = set(re.findall(r"`([A-Za-z_][A-Za-z_0-9]*)[(`]", text))
    public = set(dlbkit.__all__)
    assert public - documented == set(), "public but undocumented"
    # a documented word that is one of dlbkit's subpackages (``results``, ``families``) is not an API name
    names = {n for n in documented if hasattr(dlbkit, n) and not inspect.ismodule(getattr(dlbkit, n))}
    assert names == public


def test_every_public_name_exists():
    for name in dlbkit.__all__:
        assert hasattr(dlbkit, name), name
