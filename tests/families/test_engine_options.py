"""The engine options' contract, over the registry: every engine's options are one EngineOptions class
(``dlbkit.sim.options``), from which its experiment schema, its help (``dlbkit families``), its Python
keywords (``Engine.api_options``) and its checks follow; each option's default passes its own check, and a
value out of its declared range is refused naming the option, from an experiment file's ``[engine]``
table, the options class and the engine function alike."""

from __future__ import annotations

import inspect
import json
from numbers import Integral

import pytest

from dlbkit import families
from dlbkit.errors import ConfigError
from dlbkit.face.cli import main
from dlbkit.model.platform import Network, Node, Platform
from dlbkit.params import Interval, Options
from dlbkit.sim.options import EngineOptions, check_form

#: every engine that runs on a platform, of every registered family
ENGINES = [(fam, e) for fam in families.FAMILIES.values() for e in fam.engines if e.on_platform]
IDS = [f"{fam.name}-{e.name}" for fam, e in ENGINES]

#: three nodes of one core on a chain: a platform every family's engine options can be checked against
PLATFORM = Platform([Node(f"n{i}", speed=1.0 + i) for i in range(3)],
                    Network(latency=0.001, bandwidth=1e6, topology="chain"))


def _field(schema, name: str) -> str:
    return f"{schema.PATH}.{name}" if schema.PATH else name


def _out_of_range(form: Interval):
    """A value of *form*'s kind just outside its range (below it if it has a lower end)."""
    step = 1 if form.kind is Integral else 0.5
    return form.left - step if form.left is not None else form.right + step


def _numeric(schema) -> list[tuple[str, Interval]]:
    return [(name, form) for name, _, form, _ in schema.fields() if isinstance(form, Interval)]


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_an_engine_declares_its_options_once_in_one_class(fam, e):
    """The class's fields are the Python keywords; those with help are the experiment's keys and the help."""
    schema = e.schema
    assert isinstance(schema, type) and issubclass(schema, EngineOptions), e.name
    names = schema.names()
    assert e.api_options == names
    assert dict(e.options) == schema.help() and set(schema.help()) <= set(names)
    assert all(isinstance(text, str) and text for text in e.options.values())
    assert e.check == schema.check_dict
    # the engine function takes the options object or its fields as keywords, and nothing else
    params = inspect.signature(e.run).parameters
    assert list(params)[-2:] == ["options", "kwargs"] and params["kwargs"].kind is inspect.Parameter.VAR_KEYWORD
    assert len(params) < 12
    assert {"platform", "workload", "balancer", "seed"} >= set(list(params)[:-2]) - set(names)


def test_dlbkit_families_prints_each_engines_options_from_its_class(capsys):
    assert main(["families", "--json"]) == 0
    listed = {f["name"]: {e["name"]: e for e in f["engines"]} for f in json.loads(capsys.readouterr().out)}
    assert main(["families"]) == 0
    text = capsys.readouterr().out
    for fam, e in ENGINES:
        got = listed[fam.name][e.name]
        assert got["options"] == e.schema.help() and got["api_options"] == e.schema.names()
        opts = ", ".join(e.schema.help()) or "(no experiment options)"
        assert f"{e.name}: {e.entry}; balancers: {', '.join(fam.kinds_of(e))}; options: {opts}" in text


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_every_default_passes_its_own_check(fam, e):
    schema = e.schema
    for name, default, form, _ in schema.fields():
        check_form(form, default, f"engine.{name}")
    assert schema().changed() == {}
    assert schema.of() is schema.of()  # the defaults, built once
    defaults = {k: v for k, v in schema.defaults().items() if k in e.options}
    assert e.validate(defaults, PLATFORM, "engine") == defaults
    assert e.validate({}, PLATFORM, "engine") == {}


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_a_numeric_option_out_of_its_range_names_it_everywhere(fam, e):
    """From an experiment file (Engine.validate: ``engine.<key>``, or a balancer's own path), from the class
    and from the engine function, which checks its options before anything else."""
    numeric = _numeric(e.schema)
    for name, form in numeric:
        bad = _out_of_range(form)
        if name in e.options:
            for path in ("engine", "balancers[1].engine"):
                with pytest.raises(ConfigError) as err:
                    e.validate({name: bad}, PLATFORM, path)
                assert err.value.field == f"{path}.{name}" and err.value.value == bad
        with pytest.raises(ConfigError) as err:
            e.schema(**{name: bad})
        assert err.value.field == _field(e.schema, name)
        with pytest.raises(ConfigError) as err:
            e.run(PLATFORM, None, None, **{name: bad})
        assert err.value.field == _field(e.schema, name)
        text = "wrong"  # a numeric option given a string
        with pytest.raises(ConfigError, match=name):
            e.schema(**{name: text})


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_a_choice_or_a_switch_out_of_its_forms_names_it(fam, e):
    for name, _, form, _ in e.schema.fields():
        if isinstance(form, Options):
            bad = "no-such-" + name
        elif form is bool:
            bad = "yes"
        else:
            continue
        with pytest.raises(ConfigError) as err:
            e.schema(**{name: bad})
        assert err.value.field == _field(e.schema, name)
        if name in e.options:
            with pytest.raises(ConfigError) as err:
                e.validate({name: bad}, PLATFORM, "engine")
            assert err.value.field == f"engine.{name}"


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_an_unknown_key_lists_the_known_ones(fam, e):
    with pytest.raises(ConfigError) as err:
        e.validate({"no_such_option": 1}, PLATFORM, "engine")
    assert err.value.field == "engine.no_such_option"
    assert err.value.allowed == "absent; known fields here are " + ", ".join(sorted(e.options))
    with pytest.raises(TypeError, match="no_such_option"):
        e.schema.of(None, {"no_such_option": 1})


def _another_value(default, form):
    """A valid value of *form* other than *default*, or None for a form the test cannot pick from."""
    if form is bool:
        return not default
    if isinstance(form, Options):
        return next(v for v in sorted(form.values) if v != default)
    if isinstance(form, Interval):
        step = 1 if form.kind is Integral else 0.25
        return default + step if form.right is None or default + step <= form.right else default - step
    return None


@pytest.mark.parametrize("fam, e", ENGINES, ids=IDS)
def test_keywords_go_over_an_options_object(fam, e):
    schema = e.schema
    name, value = next((n, _another_value(d, f)) for n, d, f, _ in schema.fields() if _another_value(d, f) is not None)
    base = schema(**{name: value})
    assert schema.of(base) is base and schema.of(base, {}) is base
    assert base.changed() == {name: value}
    again = schema.of(base, {name: schema.defaults()[name]})
    assert again.changed() == {} and again == schema()
    with pytest.raises(ConfigError, match="options"):
        schema.of({name: value})


def test_the_divisible_master_is_checked_against_the_platform_as_a_method():
    e = families.get("divisible").engine
    with pytest.raises(ConfigError, match=r"^engine.master must be a node name \(n0, n1, n2\) or index; got 'n9'"):
        e.validate({"master": "n9"}, PLATFORM, "engine")
    with pytest.raises(ConfigError, match=r"^engine.master must be an integer in \[0, 2\]; got 3$"):
        e.validate({"master": 3}, PLATFORM, "engine")
    e.validate({"master": "n2"}, PLATFORM, "engine")
