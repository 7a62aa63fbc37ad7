"""The public API list and its documentation cannot drift apart."""

import inspect
import re

import dlbkit

from support import REPO

DOC = REPO / "docs" / "api.md"


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


def _documented_signatures(text: str) -> dict[str, list[str]]:
    """``name(a, b=1, *, c=None)`` at the head of an api.md entry (``- `name(...)` —``) → its parameter names."""
    out = {}
    for name, args in re.findall(r"^- `([A-Za-z_]\w*)\((.*?)\)`", text, re.S | re.M):
        if args.strip() in ("", "..."):
            continue
        args = re.sub(r"\([^()]*\)", "", args)  # defaults such as Demand() or CostModel()
        out[name] = [a.split("=")[0].strip() for a in args.replace("\n", " ").split(",")
                     if a.strip() and a.strip() not in ("*", "/") and not a.strip().startswith("**")]
    return out


def test_the_documented_signatures_name_every_parameter_in_order():
    """api.md's signature of a public function or class lists its parameters as the code has them (it
    once left out schedule's contention, replay's model/latency/overhead, Cluster's slots and
    suspect_after, TaskTree's intercept and Stream's initial loads)."""
    documented = _documented_signatures(DOC.read_text())
    assert {"simulate", "schedule", "map", "replay", "Cluster", "TaskTree", "Stream", "Platform"} <= set(documented)
    for name, params in documented.items():
        obj = getattr(dlbkit, name)
        actual = [p.name for p in inspect.signature(obj).parameters.values()
                  if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        hidden = {"start_method", "record_decisions"} - set(params)  # documented in a sentence after the signature
        assert params == [p for p in actual if p not in hidden or p in params], name
