"""A balancer of the user's own, written outside the package as docs/api.md ("Your own balancer")
says: registered with ``dlbkit.register``, named in an experiment file run by ``dlbkit simulate
--import``, and defined again (a notebook cell run twice) without an error."""

import csv
import math
import sys
import textwrap

import pytest

import dlbkit
from dlbkit.balancers.registry import REGISTRY, resolve
from dlbkit.face.cli import main

from support import REPO
from support.experiment_files import TINY

MODULE = '''
from dlbkit import ChunkingBalancer, Taxonomy, register


@register
class HalfGuided(ChunkingBalancer):
    """Half of GSS's chunk."""
    name = "half-gss-test"
    source = "a test"
    taxonomy = Taxonomy("receiver", "central", "none", "R/2P", "next items")
    reads_measurements = False

    def chunk(self, view, worker):
        return max(1, view.remaining // (2 * view.n_nodes))
'''


@pytest.fixture
def own_module(tmp_path):
    """The user's module, as a file; the registry and sys.modules are restored afterwards (the
    contract tests run over the registry)."""
    path = tmp_path / "mybal_test.py"
    path.write_text(MODULE)
    before = dict(REGISTRY)
    yield path
    REGISTRY.clear()
    REGISTRY.update(before)
    for name in ("mybal_test", "_dlbkit_run_mybal_test"):  # the private name: an earlier test's folder on
        sys.modules.pop(name, None)  # sys.path holds another mybal_test.py, so this one clashed with it


def test_simulate_import_lets_an_experiment_name_a_balancer_of_ones_own(tmp_path, own_module, capsys):
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY + '\n[[balancers]]\nname = "half-gss-test"\n')
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out")]) == 2
    assert "got 'half-gss-test'" in capsys.readouterr().err
    assert main(["simulate", str(exp), "--out", str(tmp_path / "out"), "--import", str(own_module)]) == 0
    rows = list(csv.DictReader((tmp_path / "out" / "results.csv").open()))
    mine = [r for r in rows if r["balancer"] == "half-gss-test"]
    assert len(mine) == 3 and all(r["status"] == "ok" for r in mine)
    assert (tmp_path / "out" / "gantt_half-gss-test.png").is_file()


def test_an_import_that_is_not_a_module_is_one_line_and_status_2(tmp_path, capsys):
    assert main(["balancers", "--import", "no_such_module_here"]) == 2
    assert capsys.readouterr().err == ("dlbkit: error: --import must be a module importable from the current "
                                       "directory or sys.path, or a .py file; got 'no_such_module_here'\n")


def test_defining_the_same_balancer_again_replaces_it_and_another_class_may_not_take_its_name(own_module):
    code = compile(own_module.read_text(), "<notebook cell>", "exec")
    first, second = {"__name__": "__main__"}, {"__name__": "__main__"}
    exec(code, first)
    exec(code, second)  # the cell run again: before, TypeError "balancer name ... is taken"
    assert REGISTRY["half-gss-test"] is second["HalfGuided"]
    # another cell defining another class of the same name cannot be told from the cell edited and run
    # again: the latest is kept, as docs/api.md says
    edited = {"__name__": "__main__"}
    exec(compile(own_module.read_text().replace("(2 * view.n_nodes)", "(3 * view.n_nodes)"), "<cell 2>", "exec"),
         edited)
    assert REGISTRY["half-gss-test"] is edited["HalfGuided"]
    assert "latest" in dlbkit.register.__doc__

    class Other(dlbkit.ChunkingBalancer):
        name = "half-gss-test"

        def chunk(self, view, worker):
            return 1

    with pytest.raises(TypeError, match="balancer name 'half-gss-test' is taken by HalfGuided"):
        dlbkit.register(Other)


def test_passing_the_class_instead_of_an_instance_says_what_to_pass():
    platform = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a", speed=2.0)])
    loop = dlbkit.Divisible(100)
    guided = REGISTRY["gss"]
    with pytest.raises(dlbkit.ConfigError) as e:
        dlbkit.simulate(platform, loop, guided)
    assert str(e.value) == ("balancer must be a chunking balancer (dlbkit balancers --kind chunking): its name "
                            f"('gss') or an instance (Guided()), not the class; got {guided!r}")


def test_a_recording_made_with_ones_own_balancer_replays_with_import_and_says_so_without(tmp_path, own_module,
                                                                                        capsys):
    assert main(["balancers", "--import", str(own_module)]) == 0
    record = tmp_path / "run.json"
    dlbkit.run_map(abs, range(40), balancer="half-gss-test", workers=1, record=record)
    del REGISTRY["half-gss-test"]  # a fresh command line, which has not imported the module (under
    for name in ("mybal_test", "_dlbkit_run_mybal_test"):  # either name: see own_module)
        sys.modules.pop(name, None)
    capsys.readouterr()
    assert main(["replay", str(record)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dlbkit: error: recorded balancer must be a chunking balancer")
    own = (" (a balancer of your own: import the module that registers it first: `import MODULE` in Python, "
           "`dlbkit replay --import MODULE` on the command line); got 'half-gss-test'")
    assert err.endswith(own + "\n")
    with pytest.raises(dlbkit.ConfigError) as e:  # from Python, where there is no --import flag to give
        dlbkit.replay(record)
    assert str(e.value).startswith("recorded balancer must be a chunking balancer") and str(e.value).endswith(own)
    assert main(["replay", str(record), "--import", str(own_module)]) == 0
    assert "half-gss-test [recorded]" in capsys.readouterr().out


def test_the_docs_example_of_ones_own_balancer_runs_as_written():
    text = (REPO / "docs" / "api.md").read_text()
    start = text.index("```python", text.index("**Your own"))
    code = textwrap.dedent(text[start + len("```python"):text.index("```", start + 3)])
    before = dict(REGISTRY)
    try:
        exec(compile(code, "docs/api.md", "exec"), {"__name__": "docs_example"})
        platform = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a"), dlbkit.Node("b", speed=4.0)])
        r = dlbkit.simulate(platform, dlbkit.Divisible(1000), "half-gss", master="m")
        # chunks are R // 4: 250, 187, 140, ... down to 1 item, so the loop takes more of them than P
        assert r.trace.count[0] == 250 and sum(r.trace.count) == 1000
    finally:
        REGISTRY.clear()
        REGISTRY.update(before)


class ForgotReturn(dlbkit.ChunkingBalancer):
    """A rule whose chunk() forgot its return."""
    name = "forgot-return-test"

    def chunk(self, view, worker):
        view.remaining // 2


class SaysText(dlbkit.ChunkingBalancer):
    """A rule answering text that spells a number (int() would take "12", but not "1.5")."""
    name = "says-text-test"

    def chunk(self, view, worker):
        return "12"


class SaysNaN(dlbkit.ChunkingBalancer):
    """A rule whose arithmetic made NaN (0/0 of numpy floats)."""
    name = "says-nan-test"

    def chunk(self, view, worker):
        return math.nan


@pytest.mark.parametrize("rule, got", [(ForgotReturn, "None"), (SaysText, "'12'"), (SaysNaN, "nan")])
@pytest.mark.parametrize("how", ["simulate", "simulate on the kernel", "map", "rounds"])
def test_a_chunking_rule_answering_none_or_text_is_a_config_error_naming_it(how, rule, got):
    """"rounds": ChunkingBalancer.allocate's default asks chunk per node and took int() of it, so None
    or NaN was a bare TypeError or ValueError from inside dlbkit, and "12" passed."""
    platform = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a")])
    with pytest.raises(dlbkit.ConfigError) as e:
        if how == "map":
            dlbkit.map(abs, range(10), balancer=rule(), workers=1)
        elif how == "rounds":
            dlbkit.simulate(platform, dlbkit.Divisible(10), rule(), master="m", mechanism="rounds")
        else:
            dlbkit.simulate(platform, dlbkit.Divisible(10), rule(), master="m",
                            fast_path=how == "simulate")
    assert str(e.value) == (f"the answer of {rule.name}.chunk must be a number of items (engines take its "
                            f"integer part, clamped to [1, remaining]); got {got}")


def test_a_name_with_capitals_is_refused_where_it_is_registered():
    """Names are looked up lower-cased: "HalfGSS" was registered, then every lookup of it failed with
    "got 'HalfGSS' (did you mean 'HalfGSS'?)"."""
    class Capital(dlbkit.ChunkingBalancer):
        name = "HalfGSS-test"

        def chunk(self, view, worker):
            return 1

    with pytest.raises(TypeError) as e:
        dlbkit.register(Capital)
    assert str(e.value) == ("Capital's registry name 'HalfGSS-test' must be lower case (names are looked up "
                            "case-insensitively)")
    assert "HalfGSS-test" not in REGISTRY and "halfgss-test" not in REGISTRY


def test_a_spawned_pool_imports_the_module_that_registered_the_balancer(tmp_path, own_module):
    """The runs carry the balancer's name: a forked worker inherits the registry of ``--import``, a
    spawned one (Python 3.14's default is forkserver), or a Dask worker, did not, and every run of it
    failed with "got 'half-gss-test'"."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from dlbkit.face.cli import load_module

    load_module(str(own_module), "--import")
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY + '\n[[balancers]]\nname = "half-gss-test"\n')
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        sweep = dlbkit.run_experiment(exp, tmp_path / "out", executor=pool, batch=9)
    assert sweep.failures == []
    mine = [r for r in sweep.rows if r["label"] == "half-gss-test"]
    assert len(mine) == 3 and all(r["status"] == "ok" and r["makespan"] > 0 for r in mine)


def test_passing_a_balancer_class_of_another_kind_lists_what_fits_not_how_to_pass_that_class():
    platform = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a", speed=2.0)])
    guided = REGISTRY["gss"]
    with pytest.raises(dlbkit.ConfigError) as e:
        dlbkit.simulate(platform, dlbkit.TaskTree("balanced", depth=3), guided)
    assert str(e.value).startswith("balancer must be a migration balancer (dlbkit balancers --kind migration): ")
    # what fits, then what the class given is and where it runs
    assert str(e.value).endswith(", steal; 'gss' is a chunking balancer (dlbkit balancers --kind chunking): it cuts "
                                 f"a loop into chunks: dlbkit.map, dlbkit.Loop, a divisible workload; got {guided!r}")
    assert "Guided()" not in str(e.value)


@pytest.mark.parametrize("call", [
    lambda: main(["schedule", "GRAPH.json", "--nodes", "2", "--balancer", "pd"]),
    lambda: resolve("pd", kind="mapping"),
])
def test_a_balancer_of_another_kind_is_named_for_what_it_is_and_where_it_runs(call, capsys, tmp_path,
                                                                             monkeypatch):
    """pd is an online mapper: `dlbkit schedule` (a plan before the run) refuses it, and says where it runs
    instead of suggesting a near name that fits."""
    from dlbkit.families.graph.model.generate import topcuoglu10
    monkeypatch.chdir(tmp_path)
    topcuoglu10().write(tmp_path / "GRAPH.json")
    try:
        code = call()
        msg = capsys.readouterr().err.strip()
        assert code == 2 and len(msg.splitlines()) == 1
    except dlbkit.ConfigError as e:
        msg = str(e)
    assert ("; 'pd' is an online mapping balancer (dlbkit balancers --kind graph-online): it places each task when "
            "its inputs exist, during the run: dlbkit.graph, a task graph's dynamic engine; got 'pd'") in msg
    assert "did you mean" not in msg


def test_passing_a_base_class_says_a_subclass_is_wanted():
    platform = dlbkit.Platform([dlbkit.Node("m"), dlbkit.Node("a", speed=2.0)])
    with pytest.raises(dlbkit.ConfigError) as e:
        dlbkit.simulate(platform, dlbkit.Divisible(100), dlbkit.ChunkingBalancer)
    assert str(e.value) == ("balancer must be a chunking balancer (dlbkit balancers --kind chunking): a registered "
                            "subclass's name or an instance of it, not the base class ChunkingBalancer; "
                            f"got {dlbkit.ChunkingBalancer!r}")


def test_an_import_file_named_like_another_module_runs_in_spawned_workers_and_leaves_that_module(tmp_path):
    """json.py is not json: it runs under a private name, its folder does not shadow json in a spawned
    worker, and the worker loads it from its file (before, every run failed there)."""
    import json
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from dlbkit.face.cli import load_module
    from dlbkit.face.experiments import load_experiment, run_sweep

    path = tmp_path / "json.py"
    path.write_text(MODULE)
    exp = tmp_path / "exp.toml"
    exp.write_text(TINY.replace("repetitions = 3", "repetitions = 1") + '\n[[balancers]]\nname = "half-gss-test"\n')
    before, path_before = dict(REGISTRY), list(sys.path)
    try:
        module = load_module(str(path), "--import")
        assert module.__name__ == "_dlbkit_run_json" and sys.modules["json"] is json
        assert load_module(str(path), "--import") is module  # a second --import of the file: not run again
        assert sys.path.index(str(tmp_path)) == len(sys.path) - 1  # last: json stays json in a worker
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            sweep = run_sweep(load_experiment(exp), tmp_path / "out", executor=pool)
        mine = [r for r in sweep.rows if r["balancer"] == "half-gss-test"]
        assert [(r["status"], r["error"]) for r in mine] == [("ok", "")]
    finally:
        REGISTRY.clear()
        REGISTRY.update(before)
        sys.path[:] = path_before
        sys.modules.pop("_dlbkit_run_json", None)


def test_a_private_name_from_a_dotted_file_name_loads_from_its_file_in_a_fresh_worker(tmp_path):
    """my.bal.py runs as _dlbkit_run_my.bal; a spawned worker, which has not imported it, loads it from
    the file (import_module missed it at its first part, _dlbkit_run_my, and that error escaped: every
    run failed with "No module named '_dlbkit_run_my'")."""
    from dlbkit.face.own_modules import import_own

    path = tmp_path / "my.bal.py"
    path.write_text(MODULE)
    before = dict(REGISTRY)
    try:
        module = import_own("_dlbkit_run_my.bal", str(path))
        assert module.__name__ == "_dlbkit_run_my.bal" and REGISTRY["half-gss-test"].__module__ == module.__name__
        assert import_own("_dlbkit_run_my.bal", str(path)) is module  # once
        with pytest.raises(ModuleNotFoundError):  # no file: the import's own error
            import_own("_dlbkit_run_other.bal")
    finally:
        REGISTRY.clear()
        REGISTRY.update(before)
        sys.modules.pop("_dlbkit_run_my.bal", None)
