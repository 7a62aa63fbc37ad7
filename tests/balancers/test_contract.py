"""One contract suite over every registered balancer, whatever its kind (scikit-learn's
check_estimator idea): declared constraints, __init__ that only stores, clone, citation, errors."""

import inspect
import re

import numpy as np
import pytest

from dlbkit import ConfigError, Taxonomy, TreeView, families, make
from dlbkit.balancers.registry import REGISTRY
from dlbkit.params import _accepts

ALL = sorted(REGISTRY)
#: a fresh view of each kind, to start a balancer outside any engine: the sample view of the family whose
#: engines take the kind (``Family.sample_view``, ``Family.kinds``), so a new family brings its own
VIEWS = {k: f.sample_view for f in families.FAMILIES.values() if f.sample_view is not None for k in f.kinds}
_CANDIDATES = [0, -1, -0.5, 1.5, 2, "bogus", float("nan"), None, True]


def test_every_kind_in_the_registry_has_a_view_of_its_familys_type():
    kinds = {REGISTRY[n].kind for n in ALL}
    assert kinds <= set(VIEWS)
    for f in families.FAMILIES.values():
        if set(f.kinds) & kinds:
            assert isinstance(f.sample_view(), f.view), f.name


@pytest.mark.parametrize("name", ALL)
def test_declared_constraints_match_the_keyword_only_signature(name):
    cls = REGISTRY[name]
    args = [p for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]
    assert all(p.kind is p.KEYWORD_ONLY for p in args)
    assert set(cls._parameter_constraints) == {p.name for p in args}


@pytest.mark.parametrize("name", ALL)
def test_init_only_stores_and_clone_round_trips_without_learned_state(name):
    cls = REGISTRY[name]
    b = cls()
    assert set(vars(b)) == set(cls.param_names())  # __init__ stores its arguments and nothing else
    b.start(VIEWS[cls.kind](), np.random.default_rng(0))
    c = b.clone()
    assert type(c) is cls and c.get_params() == b.get_params()
    assert not [k for k in vars(c) if k.endswith("_")]  # learned state is not copied


@pytest.mark.parametrize("name", ALL)
def test_documents_source_year_and_taxonomy(name):
    """The docstring cites a dated publication, or one of the seed documents by number (DESIGN.md)."""
    cls = REGISTRY[name]
    assert re.search(r"\b(19[6-9]\d|20[0-4]\d)\b|\b00[0-4]\b", cls.__doc__ or "")
    assert cls.source and isinstance(cls.taxonomy, Taxonomy) and cls.name == cls.name.lower()


@pytest.mark.parametrize("name", ALL)
def test_invalid_parameter_values_are_config_errors_naming_the_parameter(name):
    cls = REGISTRY[name]
    for param, forms in cls._parameter_constraints.items():
        bad = next((v for v in _CANDIDATES if not any(_accepts(f, v) for f in forms)), "unset")
        assert bad != "unset", f"no rejected value found for {param}"
        with pytest.raises(ConfigError, match=param):
            make(name, {param: bad})


@pytest.mark.parametrize("name", sorted(n for n, c in REGISTRY.items() if c.kind == "migration"))
def test_observes_is_declared_by_exactly_the_rules_that_observe(name):
    """Engines call observe() only when a rule declares ``observes``; a rule that overrides it must say so."""
    from dlbkit.families.tree.balancers.base import MigrationBalancer
    cls = REGISTRY[name]
    assert cls.observes == (cls.observe is not MigrationBalancer.observe)


def test_a_rule_overriding_observe_must_declare_it():
    from dlbkit.families.tree.balancers.base import MigrationBalancer

    class Silent(MigrationBalancer):
        name = ""

        def observe(self, view):
            pass

    with pytest.raises(ConfigError, match="Silent.observes must be True for a rule that overrides observe"):
        Silent().start(TreeView(2), np.random.default_rng(0))
